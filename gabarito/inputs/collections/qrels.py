"""Relevance judgments in the three layouts the classic collections use."""

from __future__ import annotations

from gabarito.errors import GabaritoError
from gabarito.inputs.collections.files import _lines


def parse_qrels(text: str, source: str, layout: str, *,
                grades: dict[int, int] | None = None) -> list[tuple[int, str, str, int]]:
    """Judgment rows ``(line, query id, document id, grade)`` in file order.

    ``layout``: ``"trec"`` (``qid 0 docid grade``; MEDLINE's MED.REL, NPL),
    ``"smart"`` (``qid docid 0 0.000000``: every listed pair relevant, grade 1;
    CISI.REL, ADI.REL) or ``"cranfield"`` (``qid docid code``, the code mapped
    through ``grades``). Numeric ids lose leading zeros. Blank lines are
    skipped; anything else malformed raises with the line number.
    """
    want = {"trec": 4, "smart": 4, "cranfield": 3}[layout]
    rows: list[tuple[int, str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(_lines(text), start=1):
        cols = line.split()
        if not cols:
            continue
        where = f"line {lineno}"
        if len(cols) != want:
            raise GabaritoError(f"expected {want} columns ({_QREL_COLUMNS[layout]}), found {len(cols)}",
                                path=source, record=where)
        if layout == "trec":
            qid, did, grade_text = cols[0], cols[2], cols[3]
        else:
            qid, did, grade_text = cols[0], cols[1], cols[2]
        for what, value in (("query id", qid), ("document id", did)):
            if not value.isdigit():
                raise GabaritoError(f"{what} {value!r} is not a number", path=source, record=where)
        qid, did = str(int(qid)), str(int(did))
        try:
            code = int(grade_text)
        except ValueError:
            raise GabaritoError(f"relevance {grade_text!r} is not an integer", path=source,
                                record=where) from None
        if layout == "smart":
            grade = 1
        elif layout == "cranfield":
            if grades is None or code not in grades:
                known = ", ".join(map(str, grades or {}))
                raise GabaritoError(f"unknown relevance code {code} (known: {known})", path=source,
                                    record=where)
            grade = grades[code]
        else:
            if code < 0:
                raise GabaritoError(f"negative relevance {code}", path=source, record=where)
            grade = code
        if (qid, did) in seen:
            raise GabaritoError(f"query {qid} document {did} judged again (first at line "
                                f"{seen[(qid, did)]})", path=source, record=where)
        seen[(qid, did)] = lineno
        rows.append((lineno, qid, did, grade))
    return rows


_QREL_COLUMNS = {
    "trec": "query-id 0 doc-id relevance",
    "smart": "query-id doc-id 0 0.0",
    "cranfield": "query-number doc-id code",
}
