"""HTML tables for the pages: escaped cells, pt-BR numbers, and a box that scrolls on a phone.

:func:`html_table` wraps every table in ``<div class="gabarito-table">``: the site's stylesheet
lets that box scroll sideways (the page itself never does), shows a cue when columns are
hidden to the right, and keeps the first column in view while the reader scrolls.

A table that shows a Holm-adjusted p (a column whose header names Holm) beside 95% intervals
labels those intervals "IC 95% não ajustado" (:func:`unadjusted_intervals`): a bootstrap interval
of one comparison does not match a p corrected for a family, and the reader is told so on every
page (an interval already named simultaneous or unadjusted is left as it is).
"""

from __future__ import annotations

import html
from typing import Iterable, Mapping, Sequence

from gabarito.measure.report import Report, as_report
from gabarito.publish.formatting import CI_LABEL, Html, ci, integer, num, text
from gabarito.publish.labels import measure_label

_ALIGN = {"l": "left", "r": "right", "c": "center"}
#: How an interval beside a Holm-adjusted p is named.
UNADJUSTED_CI = f"{CI_LABEL} não ajustado"
_ALREADY = (UNADJUSTED_CI, "simultâneo", "ajustado por")


def unadjusted_intervals(header: Sequence[object], rows: list[list[object]]) -> tuple[list[object], list[list[object]]]:
    """Header and rows with every "IC 95%" named "IC 95% não ajustado" when a column's header names
    Holm; otherwise unchanged."""
    if not any("Holm" in str(h) for h in header):
        return list(header), rows

    def relabel(value: object) -> object:
        if not isinstance(value, str) or CI_LABEL not in value or any(a in value for a in _ALREADY):
            return value
        out = value.replace(CI_LABEL, UNADJUSTED_CI)
        return Html(out) if isinstance(value, Html) else out

    return [relabel(h) for h in header], [[relabel(v) for v in r] for r in rows]


def cell(value: object) -> str:
    """One cell's HTML: an :class:`Html` as it is, an int with a thousands dot, a float with
    three decimals, ``None`` as a dash, anything else escaped."""
    if isinstance(value, Html):
        return str(value)
    if isinstance(value, bool):
        return "sim" if value else "não"
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float):
        return num(value)
    if value is None:
        return "—"
    return str(text(value))


def html_table(header: Sequence[object], rows: Iterable[Sequence[object]], *, table_id: str | None = None,
               align: Sequence[str] | None = None, min_width: Mapping[int, str] | None = None,
               caption: str | None = None, sticky: bool = True) -> Html:
    """A table of ``rows`` under ``header``. ``align`` holds ``'l'``/``'r'``/``'c'`` per column;
    ``min_width`` maps a column index to a CSS width (``{1: "22em"}``); ``sticky`` keeps the
    first column in view when the table scrolls sideways."""
    rows = [list(r) for r in rows]
    width = len(header)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"row {i} has {len(r)} cells for {width} columns")
    if align is not None and len(align) != width:
        raise ValueError(f"align has {len(align)} entries for {width} columns")
    header, rows = unadjusted_intervals(header, rows)

    def style(i: int, head: bool = False) -> str:
        a = _ALIGN[align[i]] if align else "left"
        w = f";min-width:{min_width[i]}" if head and min_width and i in min_width else ""
        return f' style="text-align:{a}{w}"'

    attrs = f' id="{html.escape(table_id)}"' if table_id else ""
    cls = "gabarito-table sticky-first" if sticky else "gabarito-table"
    out = [f'<div class="{cls}"{attrs}><table class="table table-sm">']
    if caption:
        out.append(f"<caption>{text(caption)}</caption>")
    out.append("<thead><tr>")
    out += [f'<th scope="col"{style(i, True)}>{cell(h)}</th>' for i, h in enumerate(header)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td{style(i)}>{cell(v)}</td>" for i, v in enumerate(r)) + "</tr>")
    out.append("</tbody></table></div>")
    return Html("".join(out))


def metrics_rows(report: Report | Mapping, methods: Sequence[str], measures: Sequence[str]) -> list[list[object]]:
    """Rows ``measure | value [CI] per method`` of a :class:`~gabarito.measure.report.Report` (or a
    written block of one); the best value of each row marked with ▲."""
    report = as_report(report)
    rows: list[list[object]] = []
    for meas in measures:
        vals = {m: report.mean(m, meas) for m in methods}
        best = max(vals.values())
        row: list[object] = [measure_label(meas)]
        for m in methods:
            mark = " ▲" if vals[m] == best else ""
            row.append(f"{num(vals[m])}{mark} {ci(report.interval(m, meas))}")
        rows.append(row)
    return rows
