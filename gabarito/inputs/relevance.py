"""Graded relevance of an evaluation record: the ``relevance`` object beside ``relevantIds``.

``"relevance": {document id: grade}`` grades documents for one question (what ``gabarito
judgments import`` writes). The rules:

* a grade is a whole number from 0 to 3 (:data:`GRADE_RANGE`: 0 judged not relevant, 1 to 3
  relevant, higher is better; ``2.0`` reads as 2, while ``1.5``, ``-1``, ``4``, ``true``, NaN and
  infinity are refused). The range is fixed: a file cannot declare another;
* each key is a document id, read like every other id (NFC, no blanks or control characters),
  that names one of the documents; one grade per document (a key repeated, or two keys equal
  in NFC, is refused);
* the documents graded 1 or more are exactly ``relevantIds``: a relevant id without a grade (or
  graded 0) and a document graded 1 or more that is not in ``relevantIds`` are both refused, so
  that the hit and RR figures (read from ``relevantIds``) and the graded measures (nDCG, AP, R,
  read from the grades) judge the same documents relevant.

A broken rule is one :class:`GabaritoError` naming the file and the record.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Sequence

from gabarito.errors import GabaritoError
from gabarito.inputs.textfiles import Ids, _json_kind

#: The grades a ``relevance`` object may give (inclusive).
GRADE_RANGE = (0, 3)


def whole_grade(value: object) -> int | None:
    """``value`` as an ``int`` when it is a whole number (``2`` or ``2.0``, not ``True``), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value)


def read_relevance(value: object, relevant: Sequence[str], ids: Ids, known: Callable[[str, str], bool],
                   path: Path, label: str) -> dict[str, int]:
    """The checked ``{document id: grade}`` of one record (see the module docstring); ``known(doc,
    what)`` is told each graded id and says whether it names a document (one that does not is
    refused by the caller, so it is left out of the agreement with ``relevantIds``)."""
    if not isinstance(value, dict):
        raise GabaritoError(f"'relevance' must be an object {{document id: grade}}, not a JSON "
                            f"{_json_kind(value)}", path=path, record=label)
    repeated = getattr(value, "repeated", ())
    if repeated:
        raise GabaritoError(f"'relevance' grades {repeated[0]!r} twice (one grade per document)",
                            path=path, record=label)
    low, high = GRADE_RANGE
    grades: dict[str, int] = {}
    strangers: set[str] = set()
    for key, grade in value.items():
        did = ids(key, label, "graded id")
        if did in grades:
            raise GabaritoError(f"'relevance' grades {did!r} twice (two keys equal in Unicode NFC)",
                                path=path, record=label)
        whole = whole_grade(grade)
        if whole is None or not low <= whole <= high:
            raise GabaritoError(f"the grade of {did!r} is {json_text(grade)}; a grade is a whole number from "
                                f"{low} to {high} (0 not relevant, {low + 1} to {high} relevant)",
                                path=path, record=label)
        if not known(did, "graded id"):
            strangers.add(did)
        grades[did] = whole
    _agree({d: g for d, g in grades.items() if d not in strangers}, relevant, path, label)
    return grades


def _agree(grades: dict[str, int], relevant: Sequence[str], path: Path, label: str) -> None:
    """The documents graded 1 or more are exactly ``relevant``."""
    for rid in relevant:
        if grades.get(rid, 0) < 1:
            told = "has no grade" if rid not in grades else "is graded 0"
            raise GabaritoError(f"relevant id {rid!r} {told} in 'relevance'; every id of 'relevantIds' needs a "
                                f"grade of 1 or more there", path=path, record=label)
    for did, grade in grades.items():
        if grade >= 1 and did not in relevant:
            raise GabaritoError(f"{did!r} is graded {grade} in 'relevance' but is not in 'relevantIds'; a "
                                f"document graded 1 or more must be listed there", path=path, record=label)


def json_text(value: object) -> str:
    """A JSON value as the user wrote it (``true``, ``NaN``, ``1.5``, ``"2"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (int, float)):
        return repr(value)
    return f"the string {value[:40]!r}" if isinstance(value, str) else f"a JSON {_json_kind(value)}"
