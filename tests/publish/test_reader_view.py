"""The site as a reader sees it: every page opened in headless Chromium from ``file://``, at 1280 px
and at 390 px (a phone), and checked the way a reader would notice a problem.

For every page and both widths: every table-of-contents target and every figure exists and is
shown; every plotly chart drew (an svg with marks); no visible text outside code contains
English words (:data:`browser.ENGLISH_WORDS`), raw keys (``snake_case``, ``key=value``, JSON) or
markup shown as text, and no element of the body is stray markup (``<title>``, ``<docno>``); the
page body never scrolls sideways, figures and charts fit the screen, and a table wider than its
column scrolls in its own box with a cue. Every internal link and every download link resolves;
the offline search finds a Portuguese word and says so in Portuguese when it finds nothing, and leads
to the section of a word from a folded block, of a stem variant and of an install command; no page
shows code (a toggle or a block) outside the sections that teach; each
chapter links to the previous and the next. At every width of :data:`LAYOUT_WIDTHS` (phones,
tablets, the laptop widths where a navbar overflows) no page scrolls sideways, the navbar keeps its
title whole and its entries on one row, the search box is on the screen or folded into the
collapsed menu, and the question of every per-question table (a "Pergunta" column) is in view. A full-page screenshot of each page at each width is
written to ``.cache/browser/`` (or ``$GABARITO_ARTIFACTS``), and its path printed.

``failures`` turns the reports into one line per failed check, so the same checks can be run on
any built site (``python tests/publish/test_reader_view.py SITE_DIR``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from gabarito.publish.site.prepare import TEACHING_SECTIONS

from browser import check_page, find_chromium, prepare_copy
from phone_checks import CHART_CHECKS, overlap_count, phone_failures

pytestmark = pytest.mark.integration

WIDTHS = (1280, 390)
#: Every width the layout must fit: a phone, a tablet, and the laptop and desktop widths at which a
#: navbar too wide for the screen made every page scroll sideways.
LAYOUT_WIDTHS = (390, 768, 992, 1024, 1280, 1366, 1440)
#: A Portuguese word the search must find, and a string it must not.
SEARCH_FOUND, SEARCH_NONE = "congelado", "xqzwvyk"
#: Searches that must lead to a section: a word from a folded block ("Detalhes"), a stem variant of the
#: heading's word ("Instale e rode") and an install command (a code block); each value is what one of
#: the first three hits' links must contain.
SEARCH_SECTIONS = {
    "MMR": "notebooks/reranking.html#",
    "Glasgow": "notebooks/colecoes_classicas.html#",
    "instalar": "notebooks/avalie_sua_busca.html#instale-e-rode",
    "pip install": "notebooks/avalie_sua_busca.html#instale-e-rode",
}
#: The budget of a chapter's main body (what shows with "Detalhes" and the code folded).
MAX_WORDS, MAX_TABLES = 3000, 8
#: Screen heights: a 1280 x 800 laptop and a 390 x 844 phone. The finding ("O essencial") must start
#: on the first laptop screen and within the first two phone screens.
SCREEN_HEIGHT = {1280: 800, 390: 844}
FINDING_SCREENS = {1280: 1, 390: 2}
#: Sentences about the build and not the reader's world: this machine, the project's targets, its
#: time limits. None of them may reach a reader.
BUILD_PHRASES = (
    r"\b(?:d|n)?esta máquina\b", r"\bmáquina (?:carregada|compartilhada|dividida|quieta|parada)\b",
    r"\bmeta do projeto\b", r"\ba meta (?:é|era|de)\b", r"\bmeta (?:atingida|cumprida)\b", r"\bnão cumprida\b",
    r"\blimite de \d+ minutos\b", r"\bnão é alcançável\b", r"\blimite que (?:o|este) estudo se impõe\b",
    r"\bMAX_LOAD\b", r"\borçamento do projeto\b",
)


def site_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not {"site_libs", "downloads"} & set(p.relative_to(site).parts))


def run_all(site: Path, copy: Path, shots: Path | None = None) -> dict[tuple[str, int], dict]:
    """Every page at every width: ``{(page, width): report}``."""
    copy = prepare_copy(site, copy)
    reports = {}
    for page in site_pages(site):
        for width in WIDTHS:
            search = [SEARCH_FOUND, SEARCH_NONE, *SEARCH_SECTIONS] if page == "index.html" and width == WIDTHS[0] else None
            shot = shots / f"{Path(page).stem}-{width}.png" if shots else None
            reports[(page, width)] = check_page(copy, page, width, search=search, screenshot=shot)
    return reports


def run_layout(copy: Path, pages: list[str], reports: dict[tuple[str, int], dict]) -> dict[tuple[str, int], dict]:
    """``reports`` (of :func:`run_all`, on the same copy) completed to every page at every width of
    :data:`LAYOUT_WIDTHS`."""
    out = dict(reports)
    for page in pages:
        for width in LAYOUT_WIDTHS:
            if (page, width) not in out:
                out[(page, width)] = check_page(copy, page, width, budget_ms=8000)
    return out


def layout_failures(reports: dict[tuple[str, int], dict]) -> list[str]:
    """One line per page and width whose layout does not fit, ``page @width: check: detail``."""
    out = []

    def fail(page, width, check, items):
        if items:
            out.append(f"{page} @{width}: {check}: {len(items)}: " + " | ".join(map(str, list(items)[:4])))

    for (page, width), r in sorted(reports.items()):
        if r.get("no_report"):
            fail(page, width, "the page never finished", ["no report"])
            continue
        fail(page, width, "the page scrolls sideways",
             [f"{r['overflow']} px: " + ", ".join(r.get("overflowing") or [])] if r["overflow"] else [])
        box = r.get("search_box")
        on_screen = bool(box) and box["shown"] and box["left"] >= 0 and box["right"] <= width + 1 and box["width"] >= 120
        fail(page, width, "search box neither on the screen nor in the folded menu",
             [] if box and (box["in_folded_menu"] or on_screen) else [box or "no search box"])
        fail(page, width, "navbar title cut", ["cut"] if r.get("title_cut") else [])
        fail(page, width, "navbar entries on more than one row", [r["nav_rows"]] if r.get("nav_rows", 0) > 1 else [])
        fail(page, width, "questions out of view in a per-question table",
             [q for q in r.get("question_cells") or [] if not q["visible"]])
    return out


_IDS: dict[Path, set[str]] = {}


def _ids(path: Path) -> set[str]:
    if path not in _IDS:
        text = path.read_text(encoding="utf-8", errors="replace")
        _IDS[path] = {unquote(m) for m in re.findall(r"""\bid=["']([^"']+)["']""", text)}
    return _IDS[path]


def broken_link(href: str, root: Path) -> str | None:
    """Why an internal ``file://`` link does not resolve, or ``None`` when it does (or is external)."""
    parts = urlsplit(href)
    if parts.scheme != "file":
        return None
    target = Path(unquote(parts.path))
    if root not in target.parents and target != root:
        return f"{href}: outside the site"
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"{href}: no such file"
    if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
        return f"{href}: no element #{unquote(parts.fragment)}"
    return None


def failures(reports: dict[tuple[str, int], dict], copy: Path) -> list[str]:
    """One line per failed check, ``page @width: check: detail``."""
    copy = Path(copy).resolve()
    out = []

    def fail(page, width, check, items):
        if items:
            items = list(items)
            out.append(f"{page} @{width}: {check}: {len(items)}: " + " | ".join(map(str, items[:4])))

    for (page, width), r in reports.items():
        if r.get("no_report"):
            fail(page, width, "the page never finished (stray markup swallowed the end of it)", ["no report"])
            continue
        fail(page, width, "table-of-contents targets missing", r["toc_missing"])
        fail(page, width, "table-of-contents targets hidden", r["toc_hidden"])
        fail(page, width, "figures hidden", r["figures_hidden"])
        fail(page, width, "figures cut off by the screen", r["figures_cut"])
        fail(page, width, "charts that did not draw", r["plots_blank"])
        fail(page, width, "charts wider than the screen or squeezed", r["plots_cut"])
        fail(page, width, "stray markup in the body", r["unknown_elements"])
        fail(page, width, "English in the text", r["english"])
        fail(page, width, "raw keys in the text", r["raw_keys"])
        fail(page, width, "markup or entities shown as text", r["markup_text"])
        fail(page, width, "numbers not in Brazilian style", r["numbers"])
        fail(page, width, "content cut off by the screen", r["cut_off"])
        fail(page, width, "the page scrolls sideways", [f"{r['overflow']} px"] if r["overflow"] else [])
        if width < 500:
            fail(page, width, "wide tables without a cue", r["tables_without_cue"])
            fail(page, width, "wide tables whose first column scrolls away", r["tables_not_sticky"])
            if r["toc"] and not r["toc_narrow"]:
                fail(page, width, "no table of contents on a narrow screen", ["none shown"])
        placeholder = r.get("search_placeholder") or ""
        if not placeholder.lower().startswith("buscar"):
            fail(page, width, "search box not in Portuguese", [placeholder or "no search box"])
        fail(page, width, "internal links that do not resolve",
             [b for b in (broken_link(x["href"], copy) for x in r["links"] if not x["download"]) if b])
        fail(page, width, "download links that do not resolve",
             [b for b in (broken_link(x["href"], copy) for x in r["links"] if x["download"]) if b])
        if page.startswith("notebooks/") and width == WIDTHS[0]:
            fail(page, width, "no previous/next links", [] if len(r["prev_next"]) >= 1 else ["none"])
            fail(page, width, "no downloads", [] if any(x["download"] for x in r["links"]) else ["none"])
        fail(page, width, "code toggles outside the sections that teach",
             [t or "(no section)" for t in r.get("code_toggles") or [] if t not in TEACHING_SECTIONS])
        fail(page, width, "code shown outside the sections that teach",
             [t or "(no section)" for t in r.get("code_shown") or [] if t not in TEACHING_SECTIONS])
        for s in r.get("search") or []:
            if s["query"] in SEARCH_SECTIONS:
                want = SEARCH_SECTIONS[s["query"]]
                fail(page, width, f"search for {s['query']!r} does not lead to {want}",
                     [] if any(want in h for h in (s["hits"] or [])[:3]) else [s["shown"]])
            elif s["query"] == SEARCH_FOUND:
                hits = s["hits"] or []
                fail(page, width, f"search for {SEARCH_FOUND!r} from file:// found nothing", [] if hits else [s["shown"]])
                fail(page, width, "search results that do not resolve", [b for b in (broken_link(h, copy) for h in hits) if b])
            elif not (s["shown"] or "").startswith("Nenhum resultado"):
                fail(page, width, "search without results not said in Portuguese", [s["shown"]])
    return out


def reading_failures(reports: dict[tuple[str, int], dict]) -> list[str]:
    """One line per page and width that breaks the reading rules: a chapter over its word or table
    budget, without "O essencial" or with its finding too far down; any page with a sentence about
    the build (:data:`BUILD_PHRASES`)."""
    out = []
    for (page, width), r in sorted(reports.items()):
        reading = r.get("reading")
        if r.get("no_report") or not reading:
            out.append(f"{page} @{width}: reading: no report")
            continue
        for pattern in BUILD_PHRASES:
            m = re.search(pattern, reading["text"], re.I)
            if m:
                at = reading["text"][max(0, m.start() - 60):m.end() + 60]
                out.append(f"{page} @{width}: a sentence about the build: {pattern}: …{at}…")
        if not page.startswith("notebooks/") or width not in SCREEN_HEIGHT:
            continue
        if reading["words"] > MAX_WORDS:
            out.append(f"{page} @{width}: main body over budget: {reading['words']} words > {MAX_WORDS}")
        if reading["tables"] > MAX_TABLES:
            out.append(f"{page} @{width}: main body over budget: {reading['tables']} tables > {MAX_TABLES}")
        top, limit = reading.get("finding_top"), SCREEN_HEIGHT[width] * FINDING_SCREENS[width]
        if top is None:
            out.append(f"{page} @{width}: finding: no 'O essencial' section with a paragraph")
        elif top > limit:
            out.append(f"{page} @{width}: finding: starts at y = {top} px, below {limit} px")
    return out


def reading_figures(reports: dict[tuple[str, int], dict]) -> list[str]:
    """``page @width: words, tables, height, finding at y`` for every page: the closing note's table."""
    return [f"{page} @{width}: {r['reading']['words']} words, {r['reading']['tables']} tables, "
            f"{r['height']} px tall, finding at y = {r['reading'].get('finding_top')}"
            for (page, width), r in sorted(reports.items()) if r.get("reading")]


# --- the repository's site -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reader(real_site, artifacts, tmp_path_factory):
    if not find_chromium():
        pytest.fail("chromium is not installed (apt-get install -y chromium): the site is checked in a real browser")
    copy = tmp_path_factory.mktemp("reader") / "site"
    reports = run_all(real_site, copy, artifacts)
    print(f"\nscreenshots (1280 and 390 px, whole page): {artifacts}")
    return reports, copy


@pytest.fixture(scope="module")
def layout(reader, real_site):
    reports, copy = reader
    return run_layout(copy, site_pages(real_site), reports)


def _only(reports, copy, word):
    return [f for f in failures(reports, copy) if word in f]


@pytest.mark.parametrize("check", [
    "table-of-contents", "figures hidden", "charts", "stray markup", "English", "raw keys", "shown as text",
    "scrolls sideways", "cut off", "Brazilian style", "without a cue", "first column", "narrow screen", "search", "internal links", "download",
    "previous/next", "never finished", "sections that teach",
])
def test_reader_sees_the_page_whole(reader, check):
    reports, copy = reader
    bad = _only(reports, copy, check)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("check", ["a sentence about the build", "over budget", "finding", "reading: no report"])
def test_chapters_open_with_their_finding_within_budget(reader, check):
    reports, _ = reader
    bad = [f for f in reading_failures(reports) if check in f]
    assert not bad, "\n".join(bad)


def test_reading_checks_are_not_vacuous(reader):
    reports, _ = reader
    chapters = {(p, w): r["reading"] for (p, w), r in reports.items() if p.startswith("notebooks/")}
    assert chapters and all(x["words"] > 300 and x["finding_top"] for x in chapters.values())
    assert any(x["tables"] > 0 for x in chapters.values())


def test_every_page_was_checked_at_both_widths(reader, real_site):
    reports, _ = reader
    pages = site_pages(real_site)
    assert len(pages) >= 5
    assert set(reports) == {(p, w) for p in pages for w in WIDTHS}
    chapters = [r for (p, w), r in reports.items() if p.startswith("notebooks/")]
    assert all(r["figures"] > 0 and r["toc"] > 0 for r in chapters)
    assert all(r["plots"] > 0 for r in chapters)


@pytest.mark.parametrize("check", [
    "scrolls sideways", "search box", "title cut", "more than one row", "questions out of view", "never finished",
])
def test_layout_fits_every_width(layout, check):
    bad = [f for f in layout_failures(layout) if check in f]
    assert not bad, "\n".join(bad)


def test_layout_was_checked_at_every_width_and_saw_the_per_question_table(layout, real_site):
    pages = site_pages(real_site)
    assert set(layout) == {(p, w) for p in pages for w in LAYOUT_WIDTHS}
    # the navbar opens from 992 px: its search box is then on the screen, not folded
    for (page, width), r in layout.items():
        if width >= 992:
            assert r["search_box"] and r["search_box"]["shown"], f"{page} @{width}: {r['search_box']}"
    # the checks of the question column are not vacuous: on a phone, whole questions are in view
    phone = [q for (p, w), r in layout.items() if w == 390 for q in r["question_cells"]]
    assert any(len(q["text"]) >= 30 and q["visible"] for q in phone), phone


def test_code_shows_only_where_it_teaches_and_the_search_was_asked(reader):
    """Not vacuous: the chapter with a runnable program shows it, the toggles were counted on every page,
    and the searches of :data:`SEARCH_SECTIONS` were run (their results are checked by ``failures``)."""
    reports, _ = reader
    counts = {p: (len(r["code_toggles"]), len(r["code_shown"])) for (p, w), r in sorted(reports.items())
              if w == WIDTHS[0] and not r.get("no_report")}
    print("\ncode toggles and code blocks shown, per page:", counts)
    assert "O mecanismo mínimo" in reports[("notebooks/avalie_sua_busca.html", WIDTHS[0])]["code_shown"]
    asked = {s["query"] for s in reports[("index.html", WIDTHS[0])].get("search") or []}
    assert set(SEARCH_SECTIONS) <= asked, asked


@pytest.mark.parametrize("check", [*CHART_CHECKS.values(), "headline table", "slide sideways", "home answer"])
def test_charts_tables_and_the_home_answer_fit_a_phone(reader, check):
    """Issue 44, items 5 and 6 (:mod:`phone_checks`), at 390 and 1280 px."""
    reports, _ = reader
    bad = [f for f in phone_failures(reports) if check in f]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("check", [*CHART_CHECKS.values(), "headline table"])
def test_charts_and_tables_fit_the_widths_between(layout, check):
    """Issue 44 item 5 at the widths between a phone and a desktop (768 to 1440 px, every width of
    :data:`LAYOUT_WIDTHS` the reader's run does not already check): the same chart and table checks."""
    between = {k: r for k, r in layout.items() if k[1] not in WIDTHS}
    assert sum(r.get("chart_texts", 0) for r in between.values()) > 500  # labels were measured
    bad = [f for f in phone_failures(between) if check in f]
    assert not bad, "\n".join(bad)


def test_phone_checks_are_not_vacuous(reader):
    """Labels of every chart were measured, each chapter's headline table was found (as cards on a
    phone where it does not fit) and the home page's answer was measured at both widths."""
    reports, _ = reader
    print(f"\noverlapping chart labels: {overlap_count(reports)}")
    assert sum(r.get("chart_texts", 0) for r in reports.values()) > 500
    heads = {p: r.get("headline_table") for (p, w), r in reports.items() if w == 390 and p.startswith("notebooks/")}
    # a headline table that fits a phone stays a table; one that does not becomes cards (at least one does)
    assert heads and all(h and h["cells"] > 3 and (h["cards"] or not h["out_of_view"]) for h in heads.values()), heads
    assert any(h["cards"] for h in heads.values()), heads
    assert all(reports[("index.html", w)].get("answer") for w in WIDTHS)


def test_figures_and_tables_are_numbered(reader):
    reports, _ = reader
    for (page, width), r in reports.items():
        for cap in r["captions"]:
            assert re.match(r"(Figura|Tabela)\s\d+:", cap), f"{page}: caption without a number: {cap}"


def test_screenshots_written(reader, artifacts, real_site):
    for page in site_pages(real_site):
        for width in WIDTHS:
            shot = artifacts / f"{Path(page).stem}-{width}.png"
            assert shot.is_file() and shot.stat().st_size > 10_000, shot


if __name__ == "__main__":  # the same checks on any built site
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="Check a built site as a reader would (python tests/publish/test_reader_view.py SITE).")
    ap.add_argument("site", type=Path)
    ap.add_argument("shots", type=Path, nargs="?", help="folder for the screenshots")
    ap.add_argument("--page", action="append", help="only this page (e.g. notebooks/custo.html); repeatable")
    args = ap.parse_args()
    site = args.site.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        copy = prepare_copy(site, Path(tmp) / "site")
        pages = args.page or site_pages(site)
        reports = {(p, w): check_page(copy, p, w, screenshot=args.shots / f"{Path(p).stem}-{w}.png" if args.shots else None)
                   for p in pages for w in WIDTHS}
        bad = failures(reports, copy)
        bad += layout_failures(run_layout(copy, pages, reports))
        bad += reading_failures(reports)
        bad += phone_failures(reports)
        print(f"overlapping chart labels: {overlap_count(reports)}")
    print("\n".join(reading_figures(reports)))
    print("\n".join(bad) if bad else "every check passed")
    sys.exit(1 if bad else 0)
