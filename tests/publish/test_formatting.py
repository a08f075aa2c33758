"""Numbers and text for the pages: Brazilian style, and data never shown as markup."""

from __future__ import annotations

import pytest

from gabarito.publish import formatting as fmt
from gabarito.publish.tables import cell, html_table


@pytest.mark.parametrize("value, digits, out", [
    (0.3456, 3, "0,346"), (1388, 0, "1.388"), (11429.0, 0, "11.429"), (1234567.891, 2, "1.234.567,89"),
    (-0.0001, 3, "0,000"), (-2.5, 1, "\u22122,5"), (-1234.5, 1, "\u22121.234,5"), (None, 3, "—"),
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
    assert fmt.ci([0.1, 0.25]) == "(IC 95%: 0,100 a 0,250)"
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


def test_one_interval_format_with_the_true_minus():
    assert fmt.ci([-0.4, -0.05]) == "(IC 95%: \u22120,400 a \u22120,050)"
    assert fmt.ci([0.068, 0.288], shown=fmt.signed) == "(IC 95%: +0,068 a +0,288)"
    assert fmt.ci([0.762, 1.0], shown=fmt.pct) == "(IC 95%: 76,2% a 100,0%)"
    assert fmt.ci([0.1, 0.2], bare=True) == "0,100 a 0,200" and fmt.ci(None) == "—"
    assert fmt.estimate(0.875, [0.775, 0.975]) == "0,875 (IC 95%: 0,775 a 0,975)"
    assert fmt.estimate(-0.225, [-0.4, -0.05], shown=fmt.signed) == "\u22120,225 (IC 95%: \u22120,400 a \u22120,050)"
    assert fmt.estimate(0.5, None) == "0,500"
    assert "-" not in fmt.ci([-1.5, -0.5]) + fmt.num(-3.25, 2)


def test_a_column_of_durations_has_one_unit():
    # the reranking training times: "578,6 s" beside "10,5 min" before
    assert fmt.seconds_column([578.6, 566.5, 631.3]) == ["9,6 min", "9,4 min", "10,5 min"]
    assert fmt.seconds_column([0.25, 3.5, None]) == ["0,25 s", "3,50 s", "—"]
    assert fmt.duration_column([65.0, 999.0]) == ["65,0 ms", "999,0 ms"]
    assert fmt.duration_column([650.0, 3491.0]) == ["0,65 s", "3,49 s"]
    assert fmt.duration_column([3_600_000.0, 8 * 3_600_000.0]) == ["1,0 h", "8,0 h"]
    tempo = fmt.seconds_unit([578.6, 631.3])
    assert tempo(578.6) == "9,6 min" and tempo(None) == "—"
    units = {cell.split()[-1] for cell in fmt.seconds_column([1.0, 59.0, 600.0, 1200.0])}
    assert units == {"min"}


def test_counts_in_words():
    assert fmt.count(0, "f") == "nenhuma" and fmt.count(0, "m") == "nenhum"
    assert fmt.count(8, "f") == "8" and fmt.count(1388, "m") == "1.388"
    assert fmt.counted(0, "pergunta", "perguntas", "f") == "nenhuma pergunta"
    assert fmt.counted(1, "conjunto", "conjuntos", "m") == "1 conjunto"
    assert fmt.counted(8, "pergunta", "perguntas", "f") == "8 perguntas"
    with pytest.raises(ValueError):
        fmt.count(0, "x")
    with pytest.raises(ValueError):
        fmt.count(-1, "f")
