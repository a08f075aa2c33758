"""The classic reranker: a sentence-transformers ``CrossEncoder`` reads query and text together."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.progress import silence_library_bars
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.models import HasWeights
from gabarito.retrieval.models.sources import portable_location
from gabarito.retrieval.rerank.core import _check_scores, _model_identity, _sane_max_length


class CrossEncoderReranker(HasWeights):
    """A sentence-transformers ``CrossEncoder``: reads the query and each text together.

    ``model_id_or_path`` is a local folder (a sentence-transformers cross-encoder or a plain
    Hugging Face ``*ForSequenceClassification`` folder) or a hub id, resolved by
    :func:`gabarito.retrieval.models.resolve` (an id with no offline copy is downloaded by
    sentence-transformers). Pairs are scored ``batch_size`` at a time; each (query, text) pair is
    truncated to ``max_length`` tokens by the model's tokenizer (capped at what the model's
    position embeddings allow). ``activation`` is ``"sigmoid"`` (scores in (0, 1)) or ``"none"``
    (the raw logit); it only matters for reading the numbers, not for the order. Models with more
    than one output label are refused: a reranker needs one relevance score per pair.
    """

    kind = "cross-encoder"

    def __init__(self, model_id_or_path: str | Path, *, batch_size: int = 32, max_length: int = 512,
                 activation: str = "sigmoid", device: str | None = None):
        silence_library_bars()
        import torch
        from sentence_transformers import CrossEncoder

        if activation not in ("sigmoid", "none"):
            raise GabaritoError(f"activation must be 'sigmoid' or 'none', got {activation!r}")
        if int(batch_size) < 1:
            raise GabaritoError(f"batch_size must be >= 1, got {batch_size}")
        self.source = _model_identity(model_id_or_path)
        self.model_id = portable_location(model_id_or_path)  # a hub id stays as given
        self.name = f"cross-encoder:{self.model_id}"
        self.batch_size = int(batch_size)
        self.activation = activation
        self._activation_fn = torch.nn.Sigmoid() if activation == "sigmoid" else torch.nn.Identity()
        self.device = choose_device(device)
        self.model = CrossEncoder(self.source.location, device=self.device)
        num_labels = getattr(getattr(self.model, "config", None), "num_labels", 1)
        if num_labels != 1:
            raise GabaritoError(f"{self.model_id} has {num_labels} output labels; a reranker needs 1")
        self.max_length = _sane_max_length(max_length, self.model.tokenizer, getattr(self.model, "config", None))
        if hasattr(type(self.model), "max_seq_length"):  # sentence-transformers >= 6 renamed max_length
            self.model.max_seq_length = self.max_length
        else:
            self.model.max_length = self.max_length

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "activation": self.activation, "max_length": self.max_length,
                "batch_size": self.batch_size, "device": self.device}

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        scores = self.model.predict([(query, text) for text in texts], batch_size=self.batch_size,
                                    activation_fn=self._activation_fn, convert_to_numpy=True,
                                    show_progress_bar=False)
        return _check_scores(scores, len(texts), self.name)
