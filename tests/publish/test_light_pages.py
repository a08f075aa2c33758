"""Issue 42, item 8: the pages ``gabarito evaluate`` and ``gabarito compare`` write draw their
charts as inline SVG (:mod:`gabarito.publish.svg`) instead of carrying 4.8 MB of plotly.js.

Before: ``relatorio.html`` 4,909,230 bytes and the comparison page 4,856,846 bytes on the
help-center example (BM25, memory engine), each for about 48 KB of content. Now each is under
:data:`LIMIT`, with the same numbers in its figures, still one file that opens offline; the
browser check (1280 and 390 px) is in ``test_run_pages.py`` and below (integration).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.evaluation import findings
from gabarito.measure.report import Report
from gabarito.publish import formatting as fmt
from gabarito.publish import labels, svg

ROOT = Path(__file__).resolve().parents[2]
HELPCENTER = ROOT / "data" / "helpcenter"
LIMIT = 500_000


def gabarito(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GABARITO_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict:
    """Two BM25 runs of the help-center example through the command, and their comparison."""
    if not (HELPCENTER / "docs").is_dir():
        pytest.skip("no help-center data")
    base = tmp_path_factory.mktemp("light")
    for out, extra in (("sections", []), ("documents", ["--segmentation", "document"])):
        proc = gabarito(base, "evaluate", "--documents", str(HELPCENTER / "docs"), "--evaluation",
                        str(HELPCENTER / "evaluation.json"), "--method", "bm25", "--out", out, *extra)
        assert proc.returncode == 0, proc.stderr
    proc = gabarito(base, "compare", "sections/run.json", "documents/run.json", "--out", "comparacao.html")
    assert proc.returncode == 0, proc.stderr
    return {"base": base, "run": base / "sections" / "relatorio.html", "compare": base / "comparacao.html",
            "record": json.loads((base / "sections" / "run.json").read_text(encoding="utf-8"))}


@pytest.mark.parametrize("name", ["run", "compare"])
def test_each_page_is_under_500_kb_and_carries_no_plotly(pages, name):
    page = pages[name].read_text(encoding="utf-8")
    assert pages[name].stat().st_size < LIMIT, pages[name].stat().st_size
    # plotly.js itself (its bundle defines newPlot; its banner names it): the site's CSS names plotly's
    # classes and gabarito.js fits the charts a site page draws, neither is the library
    assert "newPlot" not in page and "plotly.js" not in page.lower()
    assert page.count("<script>") == 1  # the site's own small script, nothing else
    assert '<figure class="gabarito-svg"><svg ' in page


def _bar_titles(page: str) -> list[str]:
    figure = page.split('<figure class="gabarito-svg">')[1].split("</figure>")[0]
    return re.findall(r"<g><title>([^<]+)</title><rect ", figure)


def test_the_run_pages_bars_are_the_reports_means_and_intervals(pages):
    """One bar per measure of the run's report, each titled with its mean and 95% interval as
    the page's table states them, and as long as its mean."""
    page = pages["run"].read_text(encoding="utf-8")
    report = Report.from_dict(pages["record"]["report"])
    titles = _bar_titles(page)
    assert len(titles) == len(report.measures)
    for title, measure in zip(titles, report.measures):
        lo, hi = report.interval("run", measure)
        assert title == (f"Esta execução, {labels.measure_label(measure)}: {fmt.num(report.mean('run', measure))} "
                         f"(IC 95%: {fmt.num(lo)} a {fmt.num(hi)})")
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="14.0"',
                                             page.split('<figure class="gabarito-svg">')[1])]
    means = [report.mean("run", m) for m in report.measures]
    assert len(widths) == len(means)
    for w, m in zip(widths, means):  # 1.02 fills the plot's width
        assert abs(w - (svg.WIDTH - 14.0 - 78.0) * m / 1.02) < 0.06


def test_the_no_answer_figure_draws_every_questions_top_score(pages):
    page = pages["run"].read_text(encoding="utf-8")
    scores = findings.top_scores(pages["record"]["per_query"])
    boxes = page.split('<figure class="gabarito-svg">')[2].split("</figure>")[0]
    for kind, key in (("com resposta", "answerable"), ("sem resposta", "unanswerable")):
        dots = re.findall(rf"<title>{kind}: ([^<]+)</title></circle>", boxes)
        assert sorted(dots) == sorted(fmt.num(v, 3) for v in scores[key])
        assert f"{kind}: {fmt.integer(len(scores[key]))} perguntas; mediana" in boxes.replace("Esta execução, ", "")


def test_the_comparison_page_draws_both_runs(pages):
    page = pages["compare"].read_text(encoding="utf-8")
    titles = _bar_titles(page)
    assert titles and {t.split(",")[0] for t in titles} == {"#1", "#2"}, titles[:4]


def test_ticks_are_round_and_cover_the_range():
    assert svg.ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.ticks(0.13, 0.87) == [0.2, 0.4, 0.6, 0.8]
    assert svg.ticks(3.0, 3.0) == [3.0, 3.2, 3.4, 3.6, 3.8, 4.0]


def _cdp():
    spec = importlib.util.spec_from_file_location("cdp_pipe", ROOT / "tests" / "judging" / "cdp_pipe.py")
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


@pytest.mark.integration
@pytest.mark.parametrize("width", [1280, 390])
def test_the_svg_figures_show_whole_in_chromium(pages, width):
    """Each figure is drawn, inside the screen's width, with its bars, offline, and no two of its labels
    overlap or run out of it."""
    sys.path.insert(0, str(Path(__file__).parent))
    from browser import find_chromium

    chromium = find_chromium()
    if not chromium:
        pytest.skip("chromium is not installed")
    for name in ("run", "compare"):
        with _cdp().Browser(chromium, width=width, height=900, timeout=60) as browser:
            browser.viewport(width, 900, mobile=width < 600)
            browser.navigate(pages[name].as_uri())
            browser.wait_for("document.readyState === 'complete' && document.querySelectorAll('h2').length > 2", 60)
            boxes = browser.evaluate(
                "[...document.querySelectorAll('figure.gabarito-svg svg')].map((s) => { const r = "
                "s.getBoundingClientRect(); return [r.left, r.right, r.height, s.querySelectorAll('rect').length]; })")
            assert boxes and all(b[0] >= 0 and b[1] <= width and b[2] > 100 and b[3] > 1 for b in boxes), boxes
            # the reader test's own checks of a chart's text (page_checks.js): no two labels overlap, none
            # runs out of its figure (issue 44, item 5)
            browser.evaluate("window.GABARITO_CHECK = {english: ['zzzz'], delay: 10}; "
                             + (Path(__file__).parent / "page_checks.js").read_text(encoding="utf-8"))
            browser.wait_for("!!document.getElementById('gabarito-check-report')", 60)
            report = json.loads(browser.evaluate("document.getElementById('gabarito-check-report').textContent"))
            assert report["chart_texts"] > 10, report["chart_texts"]
            assert not report["chart_overlaps"] and not report["chart_text_outside"], (
                report["chart_overlaps"], report["chart_text_outside"])
            requested = browser.requested_urls()
            assert requested and all(u.startswith(("file:", "data:")) for u in requested), requested
