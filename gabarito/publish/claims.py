"""What a page says about the strength of a claim, from the study's declared plan
(:mod:`gabarito.study.claims`): the "exploratória" mark, the name of a p column, a choice made on
the test stated as the declaration states it, and what a "not significant" interval rules out.

The checks the tests run over the book live here too: :func:`essential_problems` (an
exploratory file read by a chapter's "O essencial" or by the home page) and
:func:`holm_label_problems` (a cell that writes "p de Holm" while it reads a file whose declared
families are all unadjusted), both through :func:`gabarito.publish.sources.section_sources`, and
:func:`findings_holm_problems` (the same label in a study's findings module that names such a file).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from gabarito.publish import formatting as fmt
from gabarito.publish.formatting import Html
from gabarito.publish.sources import Source, cell_sources, section_sources
from gabarito.study.claims import Family, FileClaims

#: The mark of a result declared exploratory.
EXPLORATORY = "exploratória"
HOLM_P, RAW_P = "p de Holm", "p não ajustado"
#: The section every chapter opens with, and the one that never states an exploratory result.
ESSENTIAL = "O essencial"


def exploratory_mark() -> Html:
    """The mark a page puts beside an exploratory result (a badge)."""
    return Html(f'<span class="badge text-bg-warning gabarito-exploratoria">{EXPLORATORY}</span>')


def p_header(family: Family) -> str:
    """The name of the p column of a family: ``"p de Holm"`` only when Holm ran over more than one
    comparison, else ``"p não ajustado"``."""
    return HOLM_P if family.correction == "holm" and family.size > 1 else RAW_P


def family_text(family: Family, what: str = "comparações") -> str:
    """How a page names the correction: ``"Holm sobre as 10 comparações"`` or ``"sem correção"``."""
    if family.correction != "holm" or family.size < 2:
        return "sem correção para comparações múltiplas"
    return f"Holm sobre as {fmt.integer(family.size)} {what}"


def selection_text(claims: FileClaims) -> str:
    """The choices of a file made on its own test, as its declaration states them for the page
    (one sentence each, capitalised), or ``""`` when there is none."""
    return " ".join(s.page[0].upper() + s.page[1:] + "." for s in claims.on_test if s.page)


def rules_out(interval: Sequence[float], a: str, b: str, shown=fmt.signed, of: str = "da diferença") -> str:
    """What a 95% interval of ``a`` minus ``b`` rules out, in one Portuguese sentence (``a`` and
    ``b`` with their article: "o BM25"; ``of`` names the difference): a "not significant"
    difference is not an equivalence, and the interval says how large a difference each way the
    data still allow."""
    low, high = float(interval[0]), float(interval[1])
    if low > 0 or high < 0:
        ahead, behind = (a, b) if low > 0 else (b, a)
        return (f"O intervalo de 95% {of} ({fmt.span_of(low, high, shown)}) não inclui o zero: a diferença "
                f"favorece {ahead} sobre {behind}.")
    return (f"O intervalo de 95% {of} vai de {shown(low)} a {shown(high)}: os dados descartam que {a} supere "
            f"{b} por mais de {fmt.num(high)} e que {b} supere {a} por mais de {fmt.num(-low)}, mas não diferenças "
            "menores que essas, de um lado ou de outro; não mostrar diferença não é mostrar que são equivalentes.")


# --- the checks over the book

def _declared(specs: Mapping) -> dict[Source, FileClaims]:
    return {Source(name, results): fc for name, spec in specs.items() for results, fc in spec.claims.items()}


def _matching(src: Source, declared: Mapping[Source, FileClaims]) -> list[tuple[Source, FileClaims]]:
    return [(d, fc) for d, fc in declared.items() if fnmatchcase(d.study, src.study) and fnmatchcase(d.file, src.file)]


def exploratory_read(sources: Iterable[Source], specs: Mapping) -> list[Source]:
    """The files among ``sources`` declared exploratory as a whole."""
    declared = _declared(specs)
    return sorted({d for s in sources for d, fc in _matching(s, declared) if fc.all_exploratory},
                  key=lambda s: (s.study, s.file))


def essential_problems(notebook: str | Path, specs: Mapping, heading: str = ESSENTIAL) -> list[str]:
    """One line per exploratory file the section ``heading`` of ``notebook`` draws from
    (``heading=""``: the whole notebook, as for the home page)."""
    studies = set(specs)
    where = f"'{heading}'" if heading else "the page"
    return [f"{Path(notebook).name}: {where} draws from {s.study}/{s.file}, declared exploratory"
            for s in exploratory_read(section_sources(notebook, heading, studies), specs)]


def _unadjusted_only(fc: FileClaims) -> bool:
    return bool(fc.families) and not any(f.correction == "holm" and f.size > 1 for f in fc.families)


def holm_label_problems(notebook: str | Path, specs: Mapping) -> list[str]:
    """One line per code cell that writes "p de Holm" while it reads a file whose declared families
    are all unadjusted (a family of one shown as Holm)."""
    declared, out = _declared(specs), []
    for i, (cell, read) in enumerate(cell_sources(notebook, set(specs))):
        if cell.get("cell_type") != "code" or HOLM_P not in "".join(cell.get("source", [])):
            continue
        for s in sorted(read, key=lambda s: (s.study, s.file)):
            for d, fc in _matching(s, declared):
                if _unadjusted_only(fc):
                    out.append(f"{Path(notebook).name} cell {i}: '{HOLM_P}' beside {d.study}/{d.file}, whose "
                               "declared families are unadjusted")
    return out


def findings_holm_problems(specs: Mapping) -> list[str]:
    """One line per module of a study's folder that writes "p de Holm" in a string while it names a
    results file of that study whose declared families are all unadjusted (the findings that
    build a page's table or sentence)."""
    out = []
    for name, spec in specs.items():
        unadjusted = [r for r, fc in spec.claims.items() if _unadjusted_only(fc)]
        for module in sorted(Path(spec.dir).glob("*.py")):
            text = module.read_text(encoding="utf-8")
            strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)
                       and isinstance(n.value, str) and HOLM_P in n.value]
            named = [r for r in unadjusted if Path(r).name in text]
            if strings and named:
                out.append(f"{name}/{module.name}: '{HOLM_P}' in a module that reads {', '.join(named)}, whose "
                           "declared families are unadjusted")
    return out
