"""The grades file the judging page exports, read back with every check.

Schema ``gabarito.grades/1``::

    {"schema", "pool_sha256", "assessor", "exported_at", "complete",
     "grades": [{"pair", "question", "doc", "grade"}]}

A file made for another pool (another sha256), a pair or document the pool does not hold, a grade
other than 0, 1 or 2, a pair graded twice or left without a grade is a one-line
:class:`~gabarito.errors.GabaritoError` naming the file and the record; nothing is returned
half-read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from gabarito.errors import GabaritoError
from gabarito.files import read_json
from gabarito.inputs.pools import grade_record
from gabarito.judging.pool import pool_pairs

SCHEMA = "gabarito.grades/1"
GRADES = (0, 1, 2)


def _load(path: Path) -> dict:
    data = read_json(path, missing="grades file not found")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("grades"), list):
        raise GabaritoError(f"not a grades file exported by the judging page (schema {SCHEMA})", path=path)
    return data


def read_grades(path: str | Path, pool: Mapping, pool_sha256: str) -> tuple[str, dict[str, int]]:
    """``(assessor, {pair id: grade})`` of one exported file, checked against the pool."""
    path = Path(path)
    data = _load(path)
    if data.get("pool_sha256") != pool_sha256:
        raise GabaritoError(f"grades were given on another pool (sha256 {str(data.get('pool_sha256'))[:12]}…), "
                            f"not this one ({pool_sha256[:12]}…)", path=path)
    assessor = data.get("assessor")
    if not isinstance(assessor, str) or not assessor.strip():
        raise GabaritoError("no assessor name", path=path)
    where = {pid: (q, d) for pid, q, d in pool_pairs(pool)}
    out: dict[str, int] = {}
    for i, rec in enumerate(data["grades"], start=1):
        pid, grade = grade_record(rec, out, GRADES, path, i)
        if pid not in where:
            raise GabaritoError(f"pair {pid!r} is not in the pool", path=path, record=i)
        q, d = where[pid]
        if rec.get("doc", d) != d:
            raise GabaritoError(f"document {rec.get('doc')!r} is not the pool's candidate of pair {pid!r}",
                                path=path, record=i)
        if rec.get("question", q) != q:
            raise GabaritoError(f"question {rec.get('question')!r} is not the pool's question of pair {pid!r}",
                                path=path, record=i)
        out[pid] = grade
    missing = [pid for pid in where if pid not in out]
    if missing:
        raise GabaritoError(f"{len(missing)} of {len(where)} pairs have no grade (first {missing[0]!r}): "
                            f"finish judging and export again", path=path)
    return assessor.strip(), out
