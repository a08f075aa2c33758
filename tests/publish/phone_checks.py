"""What :mod:`page_checks.js` measures of charts, tables, code and the home page's answer, read as
failures (issue 44, items 5 and 6).

- charts (plotly's and the inline SVG of :mod:`gabarito.publish.svg`): no two visible labels overlap
  (each label's outline carried to the screen, rotated labels as rotated rectangles, a tolerance of
  2 px), no label outside its chart's box, no control (plotly's menus and toolbar) outside it, the
  legend apart from the plot area, the axis titles and the tick labels;
- tables and code: no table or code block makes the page scroll sideways, no table spills out of its
  box ("Detalhes", a callout; a wide table scrolls in it), a code block wraps or
  scrolls in its own box, and every cell of each chapter's headline table (its first table, marked
  ``gabarito-headline-table`` by the site's script) is in view without scrolling sideways; below
  :data:`PHONE_WIDTH` no table slides sideways at all (a table of records becomes cards, its first
  column each card's title);
- the home page: its short answer (``.gabarito-answer``) is whole within the first screen at
  390 x 844 and 1280 x 800: ``top < screen height - its own height``.
"""

from __future__ import annotations

#: Below this width (the site script's own threshold) tables of records read as cards, never slide.
PHONE_WIDTH = 600
#: The first screen of each width the home page's answer must fit in.
FIRST_SCREEN = {390: 844, 1280: 800}
#: What each report key holds, and the check's name in a failure line.
CHART_CHECKS = {
    "chart_overlaps": "chart labels that overlap",
    "chart_text_outside": "chart labels outside the chart",
    "chart_controls_outside": "chart controls outside the chart",
    "chart_legend_overlaps": "chart legend over the plot or an axis label",
    "wide_blocks": "tables or code that scroll the page sideways",
    "tables_out_of_box": "tables out of their box",
    "code_cut": "code blocks cut (neither wrapping nor scrolling)",
}


def phone_failures(reports: dict[tuple[str, int], dict]) -> list[str]:
    """One line per page and width, ``page @width: check: count: detail``."""
    out = []

    def fail(page, width, check, items):
        items = list(items)
        if items:
            out.append(f"{page} @{width}: {check}: {len(items)}: " + " | ".join(map(str, items[:6])))

    for (page, width), r in sorted(reports.items()):
        if r.get("no_report"):
            continue
        for key, check in CHART_CHECKS.items():
            fail(page, width, check, r.get(key) or [])
        if width < PHONE_WIDTH:
            fail(page, width, "tables that slide sideways on a phone", r.get("tables_sliding") or [])
        head = r.get("headline_table")
        if head:
            fail(page, width, "headline table cells out of view", head["out_of_view"])
        if page == "index.html" and width in FIRST_SCREEN:
            answer, screen = r.get("answer"), FIRST_SCREEN[width]
            if not answer:
                fail(page, width, "home answer", ["no .gabarito-answer shown"])
            elif not answer["top"] < screen - answer["height"]:
                fail(page, width, "home answer", [f"top {answer['top']} + height {answer['height']} > {screen}"])
    return out


def overlap_count(reports: dict[tuple[str, int], dict]) -> int:
    """How many pairs of overlapping chart labels the reports found (the closing note's count)."""
    return sum(len(r.get("chart_overlaps") or []) for r in reports.values() if not r.get("no_report"))
