"""How the reader test reads page_checks.js's chart, table and home-page measurements (issue 44, items 5
and 6); the measurements themselves run in Chromium in ``test_reader_view.py`` and ``test_light_pages.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from phone_checks import FIRST_SCREEN, overlap_count, phone_failures  # noqa: E402


def _clean(**extra) -> dict:
    report = {"chart_texts": 40, "chart_overlaps": [], "chart_text_outside": [], "chart_controls_outside": [],
              "chart_legend_overlaps": [], "wide_blocks": [], "code_cut": [], "tables_out_of_box": [], "tables_sliding": [],
              "headline_table": {"cells": 20, "out_of_view": [], "cards": True}, "answer": None}
    report.update(extra)
    return report


def test_clean_pages_pass():
    answer = {"top": 250, "height": 200, "text": "Resposta curta"}
    reports = {("notebooks/x.html", 390): _clean(), ("index.html", 390): _clean(answer=answer),
               ("index.html", 1280): _clean(answer=answer)}
    assert phone_failures(reports) == []
    assert overlap_count(reports) == 0


def test_each_problem_is_one_line_naming_page_width_and_what():
    reports = {
        ("notebooks/x.html", 390): _clean(chart_overlaps=['chart 1: "0,659" × "1,000"', 'chart 1: "a" × "b"'],
                                          chart_controls_outside=["chart 2: g.updatemenu-header-group 0..420 of 358"],
                                          code_cut=["pre.sourceCode: pip install"],
                                          headline_table={"cells": 20, "out_of_view": ["melhor"], "cards": False}),
        ("notebooks/x.html", 1280): _clean(chart_legend_overlaps=['chart 0: the legend × "segundos"'],
                                           tables_out_of_box=["table.table 215 px out of div.callout"],
                                           tables_sliding=["table 2 in div.gabarito-table: wide on a desktop"]),
        ("notebooks/y.html", 390): _clean(tables_sliding=["table 3 in div.gabarito-table: AvaliadorQuem"]),
        ("index.html", 390): _clean(answer={"top": 1251, "height": 120, "text": "..."}),
        ("index.html", 1280): _clean(),  # no answer at all
    }
    bad = phone_failures(reports)
    assert "notebooks/x.html @390: chart labels that overlap: 2: " in bad[2]
    assert any(b.startswith("notebooks/x.html @390: chart controls outside the chart: 1") for b in bad)
    assert any(b.startswith("notebooks/x.html @390: code blocks cut") for b in bad)
    assert any(b.startswith("notebooks/x.html @390: headline table cells out of view: 1: melhor") for b in bad)
    assert any(b.startswith("notebooks/x.html @1280: chart legend over the plot or an axis label") for b in bad)
    assert any(b.startswith("notebooks/x.html @1280: tables out of their box: 1: table.table 215 px") for b in bad)
    assert f"index.html @390: home answer: 1: top 1251 + height 120 > {FIRST_SCREEN[390]}" in bad
    assert "index.html @1280: home answer: 1: no .gabarito-answer shown" in bad
    assert "notebooks/y.html @390: tables that slide sideways on a phone: 1: table 3 in div.gabarito-table: AvaliadorQuem" in bad
    assert not any("@1280: tables that slide" in b for b in bad)  # a desktop may scroll a wide table in its box
    assert overlap_count(reports) == 2


def test_the_answer_must_fit_whole_in_the_first_screen():
    """top < screen height - its own height: a box that starts on the first screen but ends below it fails."""
    screen = FIRST_SCREEN[1280]
    fits = {("index.html", 1280): _clean(answer={"top": screen - 201, "height": 200, "text": ""})}
    cut = {("index.html", 1280): _clean(answer={"top": screen - 199, "height": 200, "text": ""})}
    assert phone_failures(fits) == []
    assert phone_failures(cut) and "home answer" in phone_failures(cut)[0]
