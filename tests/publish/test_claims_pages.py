"""What the pages say follows each study's declared plan (issue 41): no "O essencial" and no home
page draws from a result declared exploratory, no cell calls an unadjusted p "p de Holm", an
interval beside a Holm p is named unadjusted, and a "not significant" interval says what it
rules out. The checks read the notebooks' code (:mod:`gabarito.publish.sources`); each is also
shown failing on a notebook that breaks it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.publish import tables
from gabarito.publish.claims import (EXPLORATORY, HOLM_P, RAW_P, essential_problems, exploratory_mark, family_text,
                                     findings_holm_problems, holm_label_problems, p_header, rules_out, selection_text)
from gabarito.publish.sources import Source, section_sources
from gabarito.study.claims import Family
from gabarito.study.spec import StudySpec, all_studies

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SPECS = all_studies()


def _notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": kind, "source": [text], "metadata": {}}
                                          for kind, text in cells], "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")
    return path


LOAD = ('from pathlib import Path\nSTD = Path("../case-studies/standard_collections")\n'
        'fraco = load_results(STD, "rerankers_weak.json")\nablacao = load_results(STD, "rerankers_weak_ablation.json")\n'
        'hab = WF.ablation_headline(ablacao)\nnomes = {c: c.upper() for c in hab["configs"]}\nhw = WF.headline(fraco)\n')


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_no_o_essencial_draws_from_an_exploratory_result(notebook):
    assert essential_problems(notebook, SPECS) == []


def test_the_home_page_draws_from_no_exploratory_result():
    home = REPO / "index.ipynb"
    assert section_sources(home, "", set(SPECS)), "the check must see the home page's results"
    assert essential_problems(home, SPECS, heading="") == []


@pytest.mark.parametrize("notebook", NOTEBOOKS + [REPO / "index.ipynb"], ids=lambda p: p.name)
def test_no_cell_labels_an_unadjusted_p_as_holm(notebook):
    assert holm_label_problems(notebook, SPECS) == []


def test_the_reranking_chapter_essential_reads_the_weak_readers_but_not_their_ablation():
    got = section_sources(REPO / "notebooks" / "reranking.ipynb", "O essencial", set(SPECS))
    assert Source("standard_collections", "rerankers_weak.json") in got
    assert Source("standard_collections", "rerankers_weak_ablation.json") not in got


def test_an_exploratory_result_in_o_essencial_is_caught_through_derived_names(tmp_path):
    nb = _notebook(tmp_path / "c.ipynb", [
        ("code", LOAD),
        ("markdown", "## O essencial\n"),
        ("code", 'texto = "melhora"\ntexto += " com " + nomes["minilm/bce"]\ndisplay(Markdown(texto))\n'),
        ("markdown", "## Detalhes\n"),
        ("code", "display(hw)\n")])
    problems = essential_problems(nb, SPECS)
    assert len(problems) == 1 and "rerankers_weak_ablation.json" in problems[0] and "O essencial" in problems[0]
    # the same read under "Detalhes" only is allowed; a read of the non-exploratory file is too
    clean = _notebook(tmp_path / "d.ipynb", [
        ("code", LOAD), ("markdown", "## O essencial\n"), ("code", "display(hw)\n"),
        ("markdown", "## Detalhes\n"), ("code", "display(nomes)\n")])
    assert essential_problems(clean, SPECS) == []
    assert len(essential_problems(clean, SPECS, heading="")) == 1  # as a home page, it would fail


def test_p_de_holm_beside_a_family_of_one_is_caught(tmp_path):
    nb = _notebook(tmp_path / "c.ipynb", [
        ("code", LOAD),
        ("code", 'linhas = [[r["config"], r["p"]] for r in WF.ablation_rows(ablacao)]\n'
                 'display(HTML(tables.html_table(["Configuração", "p de Holm"], linhas)))\n')])
    problems = holm_label_problems(nb, SPECS)
    assert len(problems) == 1 and "cell 1" in problems[0] and "rerankers_weak_ablation.json" in problems[0]
    fixed = _notebook(tmp_path / "d.ipynb", [
        ("code", LOAD),
        ("code", 'display(HTML(tables.html_table(["Configuração", plano.p_header(FAM_AB)], linhas)))\n')])
    assert holm_label_problems(fixed, SPECS) == []


def test_no_findings_module_calls_an_unadjusted_p_holm():
    assert findings_holm_problems(SPECS) == []


def test_a_findings_module_that_calls_a_family_of_one_holm_is_caught(tmp_path):
    """The help center's judging table once headed its p "p de Holm" over one test per measure."""
    study = tmp_path / "toy"
    study.mkdir()
    (study / "study.json").write_text(json.dumps({
        "name": "toy", "title": "Toy", "script": "run.py", "gold": [{"manifest": "gold.lock.json"}],
        "claims": {"judging.json": {"selection": [{"what": "nothing", "on": "none", "note": "fixed"}],
                                    "families": [{"name": "one", "at": ["t"], "size": 1, "correction": "none"}]}}}),
        encoding="utf-8")
    (study / "judging_findings.py").write_text('"""Reads judging.json."""\nHEADER = ["Medida", "p de Holm"]\n',
                                               encoding="utf-8")
    specs = {"toy": StudySpec.load(study / "study.json")}
    problems = findings_holm_problems(specs)
    assert len(problems) == 1 and "judging_findings.py" in problems[0] and "judging.json" in problems[0]
    (study / "judging_findings.py").write_text('"""Reads judging.json."""\nHEADER = ["Medida", "p não ajustado"]\n',
                                               encoding="utf-8")
    assert findings_holm_problems(specs) == []


def test_the_p_column_and_the_family_are_named_from_the_declaration():
    ten = Family(name="t", at=("p",), size=10, correction="holm")
    one = Family(name="o", at=("p",), size=1, correction="none")
    assert (p_header(ten), p_header(one)) == (HOLM_P, RAW_P)
    assert family_text(ten, "comparações primárias") == "Holm sobre as 10 comparações primárias"
    assert family_text(one) == "sem correção para comparações múltiplas"
    assert EXPLORATORY in exploratory_mark()
    ablation = SPECS["standard_collections"].claims["rerankers_weak_ablation.json"]
    text = selection_text(ablation)
    assert text.count(".") >= 2 and "MEDLINE" in text and text[0].isupper()


def test_an_interval_beside_a_holm_p_is_named_unadjusted():
    row = [["ADI", "+0,041 (IC 95%: +0,006 a +0,079)", "0,071"]]
    html = tables.html_table(["Coleção", "Diferença (IC 95%)", HOLM_P], row)
    assert "Diferença (IC 95% não ajustado)" in html and "(IC 95% não ajustado: +0,006 a +0,079)" in html
    plain = tables.html_table(["Coleção", "Diferença (IC 95%)", RAW_P], row)
    assert "não ajustado" not in plain.replace(RAW_P, "")
    simultaneous = tables.html_table(["Coleção", "IC 95% simultâneo", HOLM_P], [["ADI", "a", "b"]])
    assert "não ajustado" not in simultaneous


def test_a_not_significant_interval_says_what_it_rules_out():
    text = rules_out([-0.04, 0.10], "o BM25", "o e5")
    assert "−0,040" in text and "+0,100" in text
    assert "que o BM25 supere o e5 por mais de 0,100" in text and "que o e5 supere o BM25 por mais de 0,040" in text
    assert "equivalentes" in text
    assert "não inclui o zero" in rules_out([0.01, 0.05], "o BM25", "o e5")
    assert "favorece o e5 sobre o BM25" in rules_out([-0.05, -0.01], "o BM25", "o e5")


def test_the_help_center_judging_says_what_its_interval_rules_out():
    from studies.helpcenter import judging_findings as jf

    res = json.loads((SPECS["helpcenter"].dir / "judging.json").read_text(encoding="utf-8"))
    c = jf.comparison(res, "graded", jf.HEADLINE_MEASURE)
    text = jf.interval_sentence(res)
    assert c.verdict == "same" and "equivalentes" in text
    from gabarito.publish import formatting as fmt

    assert f"vai de {fmt.signed(c.ci[0])} a {fmt.signed(c.ci[1])}" in text
    assert f"por mais de {fmt.num(c.ci[1])}" in text and f"por mais de {fmt.num(-c.ci[0])}" in text
    assert p_header(jf.family()) == RAW_P and RAW_P in jf.judging_header(res)
