"""Numbers and text for the pages: Brazilian style, and data never shown as markup."""

from __future__ import annotations

import pytest

from gabarito.publish import formatting as fmt
from gabarito.publish.tables import cell, html_table


@pytest.mark.parametrize("value, digits, out", [
    (0.3456, 3, "0,346"), (1388, 0, "1.388"), (11429.0, 0, "11.429"), (1234567.891, 2, "1.234.567,89"),
    (-0.0001, 3, "0,000"), (-2.5, 1, "-2,5"), (None, 3, "—"),
])
def test_num_is_brazilian(value, digits, out):
    assert fmt.num(value, digits) == out


def test_integers_have_a_thousands_dot():
    assert fmt.integer(10000) == "10.000"
    assert fmt.integer(1388) == "1.388"
    assert fmt.integer(40) == "40"
    assert fmt.integer(None) == "—"


@pytest.mark.parametrize("value, out", [
    (65.04, "65,0 ms"), (999.9, "999,9 ms"), (3491.2, "3,49 s"), (17311.95, "17,3 s"), (None, "—"),
])
def test_ms_switches_to_seconds_past_a_thousand(value, out):
    assert fmt.ms(value) == out


def test_seconds_and_minutes():
    assert fmt.seconds(0.259) == "0,26 s"
    assert fmt.seconds(196.53) == "196,5 s"
    assert fmt.seconds(1117.6) == "18,6 min"


def test_pvalue_ci_signed_rank_pct():
    assert fmt.pvalue(0.0004) == "< 0,001"
    assert fmt.pvalue(0.21) == "0,210"
    assert fmt.ci([0.1, 0.25]) == "[0,100; 0,250]"
    assert fmt.signed(0.05) == "+0,050" and fmt.signed(-0.05) == "\u22120,050" and fmt.signed(0.0) == "0,000"
    assert fmt.rank(1) == "1º" and fmt.rank(None) == "—"
    assert fmt.pct(0.925) == "92,5%"
    assert fmt.times(12.34) == "12,3×"
    assert fmt.megabytes(2570.9) == "2.571 MB"


def test_date_pt():
    assert fmt.date_pt("2026-12-02T18:45:36+00:00") == "2 de dezembro de 2026"
    with pytest.raises(ValueError):
        fmt.date_pt("ontem")


def test_md_escapes_markup_and_markdown_marks():
    out = fmt.md("query text = <title> (upper *case*) with `ticks` and @fig-x $5 a_b")
    assert "<title>" not in out and "&lt;title&gt;" in out
    for mark in ("\\*case\\*", "\\`ticks\\`", "\\@fig-x", "\\$5", "a\\_b"):
        assert mark in out, mark
    assert fmt.md("1. not a list\n- nor this").startswith("1\\. not a list\n\\- nor")
    assert fmt.md(fmt.Html("<b>kept</b>")) == "<b>kept</b>"


def test_text_and_code_escape_but_html_passes():
    assert fmt.text("<DOCNO> & co") == "&lt;DOCNO&gt; &amp; co"
    assert fmt.code("<title>") == "<code>&lt;title&gt;</code>"
    assert 'class="gabarito-whole"' in fmt.code("abc", whole=True)
    assert fmt.english("How?") == '<span lang="en">How?</span>'
    html = fmt.Html("<b>x</b>") + "<i>"
    assert html == "<b>x</b>&lt;i&gt;" and isinstance(html, fmt.Html)


def test_table_cells_escape_data_and_format_numbers():
    assert cell("<title>") == "&lt;title&gt;"
    assert cell(1388) == "1.388"
    assert cell(0.5) == "0,500"
    assert cell(True) == "sim" and cell(None) == "—"
    assert cell(fmt.code("x")) == "<code>x</code>"


def test_table_scrolls_in_its_own_box_with_a_sticky_first_column():
    out = html_table(["A", "B"], [["<x>", 10000]], table_id="t", caption="Legenda")
    assert out.startswith('<div class="gabarito-table sticky-first" id="t"><table')
    assert "&lt;x&gt;" in out and "10.000" in out and "<caption>Legenda</caption>" in out
    with pytest.raises(ValueError):
        html_table(["A", "B"], [["only one"]])


def test_duration_speaks_in_hours_from_two_hours_on():
    assert fmt.duration(24_100_000) == "6,7 h"
    assert fmt.duration(fmt.HOURS_FROM_MS) == "2,0 h"
    assert fmt.duration(fmt.HOURS_FROM_MS - 1) == fmt.ms(fmt.HOURS_FROM_MS - 1)
    assert (fmt.duration(275_200), fmt.duration(481.6), fmt.duration(None)) == ("275,2 s", "481,6 ms", "—")
