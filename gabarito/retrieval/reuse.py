"""Reuse a stored index or rebuild it: one rule for every study and ``gabarito evaluate``.

An index is reused only when its stored *fingerprint* equals the one asked for and it holds
the expected number of records; anything else (another corpus, model, weights, dimension,
analyzer or parameters, a half-built index, an index from an older layout) is dropped and built
again. The fingerprint is the sha256 of a canonical JSON of everything that changes what the
index holds -- callers put every such thing in ``parts``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import numpy as np

from gabarito.hashing import sha256_text

#: Bump when what a gabarito index stores changes, so older indexes are rebuilt.
INDEX_LAYOUT = 2


def fingerprint(parts: Mapping[str, Any]) -> str:
    """sha256 of ``parts`` (and the index layout) as canonical JSON."""
    canonical = json.dumps({"layout": INDEX_LAYOUT, **parts}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"), default=str)
    return sha256_text(canonical)


def open_or_build(index, parts: Mapping[str, Any], *, fields: Sequence[str], rows: Sequence[dict],
                  vectors: np.ndarray, model_id: str, analyzer: str | None = None,
                  batch_size: int = 200, progress: bool = False) -> str:
    """Make ``index`` (an :class:`~gabarito.retrieval.arcadedb.ArcadeIndex`) hold ``rows`` and
    ``vectors``; return ``"reused"`` or ``"built"``.

    ``rows`` are ``{"doc_id", <field>: text, ...}``; the stored metadata record keeps the
    fingerprint and ``parts`` themselves, so a reader of the database can see what it holds."""
    key = fingerprint(parts)
    if index.exists():
        info = index.info()
        if info.get("fingerprint") == key and index.count() == len(rows):
            return "reused"
        index.drop()
    extra = {**{k: v for k, v in parts.items() if isinstance(v, (str, int, float, bool)) or v is None},
             "fingerprint": key}
    kwargs = {"analyzer": analyzer} if analyzer is not None else {}
    index.create(list(fields), int(vectors.shape[1]), model_id, extra=extra, **kwargs)
    index.ingest(list(rows), vectors, batch_size=batch_size, progress=progress)
    return "built"
