"""Notebooks type no results: every number in the prose comes from the results files.

A markdown cell may say *how* something was measured, with integers (years, section numbers,
``top-10``, ``k = 60``), but a decimal (``0.35``, ``0,35``, ``.35``) or a percentage (``35%``,
``35 por cento``) in prose is what a typed result looks like: results are printed by code cells
that read ``case-studies/*/results.json``. So is a count typed before what it counts (``93
perguntas``, ``11.429 vetores``, ``384 dimensões``, ``12 ms``), in markdown or in the text a code
cell writes into the page (:func:`typed_counts`). Notebooks are committed without outputs, so
what the site shows is what the build computed.

Notebook code only calls the studies' ``findings`` and draws: no function or class is defined in
a notebook (the reasoning lives in a module that has tests), and no significance level is typed
there (it is stated once, in ``gabarito.measure.stats``). Nor a ``lambda``, a number typed in a
comparison (a threshold), a raw read of a loaded results file or a count written as a word
(:mod:`notebook_logic`): the cases not yet moved into findings are named, one by one, in
``notebook_logic_allowed.json``, a list that may only shrink.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from collections import Counter

import notebook_logic

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted(REPO.glob("*.ipynb"))


def _pages() -> list[Path]:
    """The .qmd pages, outside hidden, ``_`` and dependency folders."""
    out = []
    for dirpath, dirnames, filenames in os.walk(REPO):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_")) and d not in ("node_modules", "venv")]
        out += [Path(dirpath) / f for f in filenames if f.endswith(".qmd")]
    return sorted(out)


PAGES = _pages()

# Text that is not prose: links' targets, URLs, arXiv ids and DOIs.
_NOT_PROSE = [
    re.compile(r"\]\([^)]*\)"),                      # [text](target)
    re.compile(r"<[^>]+>"),                          # HTML tags and their attributes
    re.compile(r"\b(?:https?|ftp)://\S+"),
    re.compile(r"\barXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?", re.I),
    re.compile(r"\b10\.\d{4,9}/\S+"),                # DOI
]
_DOTTED = re.compile(r"\d+(?:[.,]\d+){2,}")          # 1.2.3: versions, dates, not one decimal
_DECIMAL = re.compile(r"(?<![\w.,])(?:\d+[.,]\d+|[.,]\d+)(?![.,]?\d)")
_PERCENT = re.compile(r"\d+(?:[.,]\d+)?\s*(?:%|por\s+cento\b|percent\b)", re.I)
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:[.,]\d{3})+")
# Context allowed before a decimal: a section, chapter or version number.
_NUMBERING_BEFORE = re.compile(r"(?:seção|secção|section|capítulo|chapter|§|versão|version|python|v)\s*$", re.I)
# A confidence level is a choice of method, not a result.
_CONFIDENCE = re.compile(
    r"(?:confian[çc]a\s+(?:de\s+)?\d+\s*%|\d+\s*%\s+de\s+confian[çc]a|\bIC\s*(?:de\s+)?\d+\s*%|\d+\s*%\s*(?:CI|confidence)\b)",
    re.I)


def prose(text: str) -> str:
    """The markdown's text with link targets, tags, URLs and identifiers blanked out."""
    for pattern in _NOT_PROSE:
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


def typed_results(text: str) -> list[str]:
    """Decimals and percentages in prose that look like results typed by hand."""
    text = prose(text)
    text = _CONFIDENCE.sub(lambda m: " " * len(m.group(0)), text)
    text = _DOTTED.sub(lambda m: " " * len(m.group(0)), text)
    found = [m.group(0).strip() for m in _PERCENT.finditer(text)]
    text = _PERCENT.sub(lambda m: " " * len(m.group(0)), text)
    for m in _DECIMAL.finditer(text):
        number = m.group(0)
        if _THOUSANDS.fullmatch(number):
            continue  # 1.000 or 1,000: an integer with a thousands separator
        if _NUMBERING_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
            continue
        found.append(number)
    return found


# A count typed before what it counts: an integer (``93``, ``11.429``, ``11 429``) and a noun of
# the things the pages count, singular or plural, or a unit of time.
_COUNTED = ("vetor(?:es)?", "dimens(?:ão|ões)", "perguntas?", "passage(?:m|ns)", "documentos?", "consultas?",
            "cole(?:ção|ções)", "modelos?", "minutos?", "segundos?", "trechos?", "conjuntos?", "ms", "s")
_COUNT = re.compile(r"(?<![\w@.,/#=+-])\d{1,3}(?:[.\u00a0 ]\d{3})+(?![\w.,]?\d)|(?<![\w@.,/#=+-])\d+(?![\w.,]?\d)")
_NOUN_AFTER = re.compile(r"\s*(?:" + "|".join(_COUNTED) + r")(?!\w)", re.I)
_CODE_SPAN = re.compile(r"(```|~~~).*?\1|`[^`\n]*`", re.S)


def typed_counts(text: str) -> list[str]:
    """Integers followed by what they count (``93 perguntas``, ``11.429 vetores``, ``12 ms``)
    in prose: a count the results hold, typed by hand. Code spans and blocks are not prose."""
    text = prose(_CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text))
    found = []
    for m in _COUNT.finditer(text):
        after = _NOUN_AFTER.match(text, m.end())
        if after:
            found.append((m.group(0) + after.group(0)).strip())
    return found


def _strings(code: str) -> list[str]:
    """The string literals of a code cell (f-strings' literal parts included); cells that are
    not Python (magics) are read as they are."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [code]
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# A cell writes into the page through Markdown(...) or HTML(...), and its caption is prose too.
_WRITES_PROSE = re.compile(r"\b(?:Markdown|HTML)\(")
_CAPTION = re.compile(r"^#\|\s*(?:tbl|fig)-cap:(.*)$", re.M)


def _definitions(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [f"{type(n).__name__} {n.name}" for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


# A significance level typed in code: 0.05 or 0,05 (not 0.051, 10.05, 0.055).
_ALPHA_TYPED = re.compile(r"(?<![\d.,])0?[.,]05(?!\d)")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


# --- the rule itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "A fusão acerta 0.35 das vezes.",
    "MRR de 0,35 na amostra principal.",
    "The fused run reaches .61 nDCG.",
    "Acerta em 35% das perguntas.",
    "Acerta em 35 % das perguntas.",
    "Acerta em 12,5% das perguntas.",
    "quarenta e dois por cento: 42 por cento.",
    "a latência mediana foi 3.7 ms",
])
def test_rule_flags_typed_results(text):
    assert typed_results(text), text


@pytest.mark.parametrize("text", [
    "Robertson e Zaragoza (2009) descrevem o BM25; Cormack et al. (2009) propõem o RRF.",
    "Usamos k = 60 e o top-10 de cada método; 40 perguntas principais e 160 ampliadas.",
    "Veja a seção 2.1 e o capítulo 3.",
    "Com Python 3.11 e smalldocs 0.5.4, arcadedb-embedded 26.10.1.",
    "O intervalo de confiança de 95% vem do bootstrap; IC 95% nas tabelas.",
    "Ver [o artigo](https://arxiv.org/abs/2104.08663) e arXiv:2104.08663.",
    "<table id=\"per-question\" style=\"width:100.5%\"></table>",
    "1. Sorteio\n2. Perguntas\n3. Congelamento",
    "Foram 1.000 sorteios.",
])
def test_rule_allows_method_text(text):
    assert typed_results(text) == [], typed_results(text)


@pytest.mark.parametrize("text", [
    "as perguntas são as 93 perguntas julgadas da NPL",
    "os 11.429 vetores de documentos",
    "all-MiniLM-L6-v2, 384 dimensões",
    "numa amostra fixa de 120 passagens e 24 perguntas",
    "1 pergunta, 2 coleções e 3 modelos",
    "a busca leva 12 ms; o estudo, 45 minutos; a montagem, 15 s",
    "Foram 1 000 consultas sobre 1.400 documentos.",
])
def test_count_rule_flags_typed_counts(text):
    assert typed_counts(text), text


@pytest.mark.parametrize("text", [
    "Usamos k = 60 e o top-10 de cada método.",
    "o top-100 das duas buscas; nDCG@10 das funções",
    "com Python 3.11, em 32 bits, com 2 threads",
    "Robertson e Zaragoza (2009) descrevem o BM25",
    "`--sizes 2000 --queries 93` e ```bash\nrun 10 perguntas\n```",
    "all-MiniLM-L6-v2 sobre a seção 2 dos documentos",
    "perguntas sem número; a pergunta mediana",
])
def test_count_rule_allows_method_text(text):
    assert typed_counts(text) == [], typed_counts(text)


def test_definitions_and_typed_alpha_are_found():
    assert _definitions("def f(x):\n    return x\nclass C:\n    pass\n") == ["FunctionDef f", "ClassDef C"]
    assert _definitions("x = [y for y in range(3)]\n") == []
    assert _ALPHA_TYPED.search("sig = p < 0.05") and _ALPHA_TYPED.search('"p < 0,05"')
    assert _ALPHA_TYPED.search("alpha=.05")
    assert not any(_ALPHA_TYPED.search(t) for t in ("0.051", "10.05", "0.055", "ALPHA", "0.5"))
    assert _strings('display(Markdown(f"São {n} documentos, 93 perguntas"))') == ["São ", " documentos, 93 perguntas"]


# --- the notebooks ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_markdown_types_no_results(path):
    bad = []
    for i, cell in enumerate(_cells(path)):
        if cell.get("cell_type") == "markdown":
            bad += [f"cell {i}: {n!r}" for n in typed_results(_source(cell))]
    assert not bad, (f"{path.name}: numbers typed in markdown; print them from the results in a code cell: "
                     + "; ".join(bad))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_prose_types_no_counts(path):
    """A count (``93 perguntas``) in markdown, or in the text a code cell writes into the page,
    comes from the results: a cell prints it."""
    bad = []
    for i, cell in enumerate(_cells(path)):
        src = _source(cell)
        if cell.get("cell_type") == "markdown":
            bad += [f"cell {i}: {n!r}" for n in typed_counts(src)]
        elif cell.get("cell_type") == "code":
            captions = [m.group(1) for m in _CAPTION.finditer(src)]
            written = _strings(src) if _WRITES_PROSE.search(src) else []
            bad += [f"cell {i} (code): {n!r}" for s in captions + written for n in typed_counts(s)]
    assert not bad, (f"{path.name}: counts typed in the prose; print them from the results: " + "; ".join(bad))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_code_defines_nothing(path):
    """Notebook code calls the studies' findings and draws; functions and classes live in modules with tests."""
    bad = [f"cell {i}: {d}" for i, cell in enumerate(_cells(path)) if cell.get("cell_type") == "code"
           for d in _definitions(_source(cell))]
    assert not bad, f"{path.name}: definitions in notebook code; move them to the study's findings: " + "; ".join(bad)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_code_types_no_significance_level(path):
    """The significance level is stated once (gabarito.measure.stats.ALPHA), never typed in a notebook."""
    bad = [f"cell {i}: {m.group(0)!r}" for i, cell in enumerate(_cells(path)) if cell.get("cell_type") == "code"
           for m in _ALPHA_TYPED.finditer(_source(cell))]
    assert not bad, f"{path.name}: a significance level typed in code; use the findings' verdicts: " + "; ".join(bad)


@pytest.mark.skipif(not PAGES, reason="no .qmd page: every page is a notebook")
@pytest.mark.parametrize("path", PAGES or [None], ids=[p.name for p in PAGES] or ["none"])
def test_pages_type_no_results(path):
    text = re.sub(r"^(```|~~~).*?^\1", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)  # code blocks
    bad = typed_results(text)
    assert not bad, f"{path.name}: numbers typed in the page: {bad}; pages read numbers from the results"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    dirty = [i for i, cell in enumerate(_cells(path))
             if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; commit the notebook cleared"


def test_notebooks_are_found_where_the_site_looks():
    """The site renders index.ipynb and notebooks/*.ipynb; the checks above must look at the same files."""
    import yaml

    from gabarito.publish.site.project import load_config, render_list

    rendered = {REPO / p for p in render_list(REPO, load_config(REPO))}
    assert rendered and {p for p in rendered if p.suffix == ".ipynb"} <= set(NOTEBOOKS)
    assert all(p.suffix in (".ipynb", ".qmd") for p in rendered)
    assert yaml.safe_load((REPO / "_quarto.yml").read_text(encoding="utf-8"))["project"]["render"]


# --- logic in notebook code (issue 40 item 6) -----------------------------------------------------

def _logic(code: str, markdown: str = "") -> list[tuple[str, str]]:
    """The cases :mod:`notebook_logic` finds in a one-cell notebook (and a markdown cell)."""
    import tempfile

    cells = [{"cell_type": "code", "source": code, "metadata": {}, "outputs": []},
             {"cell_type": "markdown", "source": markdown, "metadata": {}}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.ipynb"
        path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
        return sorted(notebook_logic.named(path))


def test_logic_rule_finds_lambdas_raw_reads_thresholds_and_count_words():
    code = ('res = load_results(BASE)\nbloco = res["collections"]["adi"]\nv = bloco["metrics"]["bm25"]\n'
            'P = lambda k: labels.term("peer", k)\nok = len(a) * 2 < len(b)\nsig = diff > 0.01\n'
            'for nome, col in res["collections"].items():\n    n = col["n_judged"]\n'
            'display(Markdown("As cinco coleções"))')
    assert _logic(code, "Em duas perguntas") == [
        ("count word", "cinco coleções"), ("count word", "duas perguntas"),
        ("lambda", "lambda k: labels.term('peer', k)"),
        ("raw read", "bloco['metrics']['bm25']"), ("raw read", "col['n_judged']"),
        ("raw read", "res['collections']"), ("raw read", "res['collections']['adi']"),
        ("threshold", "diff > 0.01"), ("threshold", "len(a) * 2 < len(b)")]


def test_logic_rule_allows_findings_calls_signs_and_indexes():
    code = ('res = load_results(BASE)\ne = findings.essentials(res)\nx = e["vs_bm25"]["better"]\n'
            'if e["diff"] > 0 and len(x) == 1 and r["n"] == TAMANHOS[-1]:\n    pass\n'
            'share(len(x), e["n"]).large\nrows = sorted(findings.rows(res))')
    assert _logic(code, "uma pergunta, um modelo") == []


def test_logic_rule_finds_counts_with_a_word_between():
    found = _logic("", "os dois novos avaliadores, os dez primeiros documentos, dez mil reamostragens, dois deles")
    assert found == [("count word", "dez mil reamostragens"), ("count word", "dez primeiros documentos"),
                     ("count word", "dois novos avaliadores")]


def test_logic_rule_finds_keys_taken_apart_but_not_words_split_for_display():
    code = ('n = int(m.split("@")[1])\nstate, backend = run.split("_")\nenc = c.partition("/")[0]\n'
            'linhas = "<br>".join(rotulo.split(" ", 1))\npalavras = texto.split()')
    assert _logic(code) == [("key split", "c.partition('/')"), ("key split", "m.split('@')"),
                            ("key split", "run.split('_')")]


def test_the_allowed_list_is_empty():
    """Every lambda, typed threshold, raw read, count typed as a word and key taken apart was moved
    into findings (issue 40 item 6): none may come back, not even as an allowed case."""
    assert notebook_logic.allowed() == {}, notebook_logic.allowed()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_code_holds_no_logic(path):
    """A lambda, a threshold typed in a comparison, a raw read of a results file or a count written as a
    word belongs in the study's findings; the cases not yet moved are named in the allowed list."""
    rel = path.relative_to(REPO).as_posix()
    found, allowed = notebook_logic.named(path), notebook_logic.allowed().get(rel, Counter())
    new = [f"{kind}: {text} ({n}x)" for (kind, text), n in (found - allowed).items()]
    gone = [f"{kind}: {text} ({n}x)" for (kind, text), n in (allowed - found).items()]
    assert not new, (f"{path.name}: logic in the notebook; move it to the study's findings (a function, a "
                     "constant stated once, a verdict): " + "; ".join(new))
    assert not gone, (f"{path.name}: cases moved out of the notebook are still allowed; remove them from "
                      f"{notebook_logic.ALLOWED.name} (the list only shrinks): " + "; ".join(gone))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_a_unique_id(path):
    """nbformat 4.5 cells carry an id (a cell without one is warned about now, refused later)."""
    import nbformat

    nb = json.loads(path.read_text(encoding="utf-8"))
    ids = [c.get("id") for c in nb["cells"]]
    assert None not in ids, f"{path.name}: cell {ids.index(None)} has no id"
    assert len(set(ids)) == len(ids), f"{path.name}: two cells share an id"
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))
