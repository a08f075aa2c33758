"""Reuse a stored index or rebuild it: one rule for every study and ``gabarito evaluate``.

An index is reused only when it is *verifiably whole*: its stored fingerprint equals the one
asked for, its build wrote the completion record (the last thing a build writes, see
:func:`seal`), the records read by a scan (not ``count(*)``, which ArcadeDB answers from its
metadata) are as many as asked for, the ids a scan reads are the ids built (a garbled ``doc_id``
anywhere is found), a sample of the records reads back with the same text, and probe
searches answer what they answered right after the build. Anything else (another corpus, model,
weights, dimension, analyzer or parameters, a build that was interrupted at any point, damaged
files, an index from an older layout) is dropped and built again, after one notice. When even
the drop fails (the server cannot open the damaged database), one line says what to delete.

The fingerprint is the sha256 of a canonical JSON of everything that changes what the index
holds -- callers put every such thing in ``parts`` -- and of the vectors themselves (:func:`index_key`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError, stderr_line
from gabarito.hashing import sha256_bytes, sha256_text
from gabarito.retrieval.arcadedb.client import ServerError

#: Bump when what a gabarito index stores changes, so older indexes are rebuilt.
#: 3: the completion record (``complete``) written last by a build, read before any reuse.
INDEX_LAYOUT = 3

#: How many records are read back, and searched for, before an index is reused.
SAMPLE = 8
_PROBE_WORDS = 8
_WORD = re.compile(r"\w+")


def fingerprint(parts: Mapping[str, Any]) -> str:
    """sha256 of ``parts`` (and the index layout) as canonical JSON."""
    canonical = json.dumps({"layout": INDEX_LAYOUT, **parts}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"), default=str)
    return sha256_text(canonical)


def vectors_sha256(vectors: np.ndarray) -> str:
    """sha256 of vectors as an index stores them (float32, row-major)."""
    return sha256_bytes(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())


def index_key(parts: Mapping[str, Any], vectors: np.ndarray) -> str:
    """The fingerprint an index is stored and reused under: ``parts`` and the sha256 of the
    vectors it holds, so an index holding other vectors (another encoder backend's, whose last
    digits differ) is never reused."""
    return fingerprint({**parts, "held_vectors_sha256": vectors_sha256(vectors)})


def index_record(parts: Mapping[str, Any], vectors: np.ndarray) -> dict[str, str]:
    """What a results file records of the index it searched: the key it is stored under
    (:func:`index_key`) and the sha256 of its vectors, so two runs can be told to have searched
    the same index."""
    return {"index_fingerprint": index_key(parts, vectors), "vectors_sha256": vectors_sha256(vectors)}


def sample_positions(n: int, size: int = SAMPLE) -> list[int]:
    """Evenly spread positions of ``n`` rows (first and last included): the records read back."""
    if n <= size:
        return list(range(n))
    return sorted({round(i * (n - 1) / (size - 1)) for i in range(size)})


def _probes(index, rows: Sequence[dict], fields: Sequence[str], vectors: np.ndarray) -> dict:
    """What the probe searches answer now: BM25 of the first words of each sampled record, and
    the best cosine of a kNN search with a sampled record's own vector."""
    bm25 = []
    for i in sample_positions(len(rows)):
        text = " ".join(rows[i].get(f) or "" for f in fields)
        query = " ".join(_WORD.findall(text)[:_PROBE_WORDS])
        if query:
            bm25.append([query, [[d, round(s, 4)] for d, s in index.bm25(query, 10)]])
    top = index.knn(vectors[sample_positions(len(rows))[-1]], 1) if len(rows) else []
    return {"bm25": bm25, "knn_top": round(top[0][1], 3) if top else None}


def seal(index, rows: Sequence[dict], fields: Sequence[str], vectors: np.ndarray, key: str) -> None:
    """Write the completion record: the last step of a build (inside the caller's build lock)."""
    index.seal({"fingerprint": key, "count": len(rows), "layout": INDEX_LAYOUT,
                "probes": _probes(index, rows, fields, vectors)})


def damage(index, key: str, rows: Sequence[dict], fields: Sequence[str], vectors: np.ndarray) -> str | None:
    """``None`` when ``index`` verifiably holds ``rows`` as built for ``key``; else why not."""
    info = index.stored_info()
    if info is None:
        return "it has no metadata record (its build was interrupted, or the record is damaged)"
    if info.get("fingerprint") != key:
        return "it was built from other inputs or an older layout"
    done = info.get("complete")
    if not isinstance(done, dict) or done.get("fingerprint") != key:
        return "its build did not finish (no completion record)"
    scanned = index.scan_count()
    if done.get("count") != len(rows) or scanned != len(rows):
        return f"a scan reads {scanned} records, not {len(rows)}"
    stray = _stray_id(index.stored_ids(), rows)
    if stray is not None:
        return stray
    wanted = [rows[i] for i in sample_positions(len(rows))]
    stored = index.records([r["doc_id"] for r in wanted])
    for row in wanted:
        if {f: row.get(f) for f in fields} != {f: stored.get(row["doc_id"], {}).get(f) for f in fields}:
            return f"record {row['doc_id']!r} does not read back as it was written"
    if _probes(index, rows, fields, vectors) != done.get("probes"):
        return "a probe search answers differently than right after its build"
    return None


def _stray_id(stored: Sequence[object], rows: Sequence[dict]) -> str | None:
    """Why the ids a scan reads are not the ids the build wrote (the rows of the same
    fingerprint), or ``None``: a garbled ``doc_id`` outside the sampled records and the probes'
    answers would otherwise be reused and returned by a search."""
    written = {r["doc_id"] for r in rows}
    stray = next((d for d in stored if d not in written), None)
    if stray is not None:
        return f"a scan reads the id {stray!r}, which its build did not write"
    if len(set(stored)) != len(written):
        return f"a scan reads {len(set(stored))} distinct ids, not {len(written)}"
    return None


def _delete_hint(index, folder: str | Path | None) -> str:
    if folder is not None:
        return f"delete the folder {folder} and run again"
    return (f"drop the database '{index.client.database}' on the server at {index.client.url} "
            f"(or delete its folder databases/{index.client.database}) and run again")


def open_or_build(index, parts: Mapping[str, Any], *, fields: Sequence[str], rows: Sequence[dict],
                  vectors: np.ndarray, model_id: str, analyzer: str | None = None,
                  batch_size: int = 200, progress: bool = False,
                  notice: Callable[[str], None] | None = None, folder: str | Path | None = None) -> str:
    """Make ``index`` (an :class:`~gabarito.retrieval.arcadedb.ArcadeIndex`) hold ``rows`` and
    ``vectors``; return ``"reused"`` or ``"built"``.

    ``rows`` are ``{"doc_id", <field>: text, ...}``; the stored metadata record keeps the
    fingerprint and ``parts`` themselves, so a reader of the database can see what it holds.
    ``notice`` (stderr by default) gets the one line saying why a stored index is rebuilt;
    ``folder`` is the database's folder, named when the damaged index cannot even be dropped."""
    notice = notice or stderr_line
    key = index_key(parts, vectors)
    fields, vectors = list(fields), np.asarray(vectors, dtype=np.float32)
    found = True
    try:
        found = index.exists() or index.stored_info() is not None
        why = damage(index, key, rows, fields, vectors) if found else None
    except ServerError as exc:  # a lost connection is not damage: it goes up as it is
        why = f"reading it fails ({exc})"
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        why = f"its metadata record cannot be read ({type(exc).__name__}: {exc})"
    if found and why is None:
        return "reused"
    if found:
        notice(f"{index.where()}: the stored index is not whole ({why}); dropping and rebuilding it")
        try:
            index.drop()
        except GabaritoError as exc:
            raise GabaritoError(f"{index.where()}: the stored index is damaged and cannot be dropped "
                                f"({exc}); {_delete_hint(index, folder)}") from exc
    extra = {**{k: v for k, v in parts.items() if isinstance(v, (str, int, float, bool)) or v is None},
             "fingerprint": key}
    kwargs = {"analyzer": analyzer} if analyzer is not None else {}
    index.create(fields, int(vectors.shape[1]), model_id, extra=extra, **kwargs)
    try:
        index.ingest(list(rows), vectors, batch_size=batch_size, progress=progress)
        seal(index, rows, fields, vectors, key)
    except ServerError as exc:  # a fresh type the server will not fill: what is left on disk is damaged
        raise GabaritoError(f"{index.where()}: the server refused to build the index ({exc}); the database is "
                            f"damaged: {_delete_hint(index, folder)}") from exc
    return "built"
