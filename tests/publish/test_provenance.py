"""Provenance boxes, downloads and the headlines the home page reads (the flagship's findings are tested in
tests/case_studies/test_benchmark_rrf_findings.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError

from gabarito.publish import provenance
from studies.reranking import findings as reranking_findings
from studies.standard_collections import findings as collections_findings

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"


def _results(name: str) -> dict:
    return json.loads((STUDIES / name / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("study", ["benchmark_rrf", "helpcenter", "reranking", "standard_collections"])
def test_every_chapter_has_its_facts(study):
    facts = dict(provenance.facts(_results(study)))
    assert set(facts) >= {"Medido em", "Commit", "Motor", "Computador da medida"}
    assert " de 20" in facts["Medido em"]
    assert "núcleos" in str(facts["Computador da medida"]) and "Linux-" not in str(facts["Computador da medida"])
    box = provenance.provenance_box(_results(study), source=f"{study}/results.json")
    assert box.startswith('<div class="gabarito-provenance" role="note">') and "<aside" not in box  # stays in its fold under Quarto
    assert ("gabarito-dirty" in box) == provenance.is_dirty(_results(study))


def test_dirty_results_say_so():
    prov = {"date": "2026-12-02T18:45:36+00:00", "git": {"commit": "a" * 40, "dirty": True},
            "machine": {"cpu_count": 2, "platform": "Linux-6-x86_64-with-glibc2.36", "machine": "x86_64", "python": "3.11.7"},
            "engine": {"name": "arcadedb", "version": "26.10.2 (build x)"}, "model": {"model_id": "a/b-c"}}
    box = provenance.provenance_box({"provenance": prov})
    assert "alterações ainda não registradas" in box and "ArcadeDB 26.10.2" in box and "b-c" in box
    assert "<code class=\"gabarito-whole\">aaaaaaaaaaaa</code>" in box


def test_the_machine_names_its_processor_when_the_results_record_it():
    old = {"cpu_count": 2, "platform": "Linux-6-x86_64-with-glibc2.36", "machine": "x86_64", "python": "3.11.7"}
    assert "EPYC" not in provenance.machine(old) and "2 núcleos" in provenance.machine(old)
    new = {**old, "cpu": {"model": "AMD EPYC", "simd": ["sse4_2", "avx", "avx2", "fma", "avx512f"]}}
    shown = provenance.machine(new)
    assert "AMD EPYC" in shown and "avx512f" in shown and "avx2" in shown and "sse4_2" not in shown


def test_downloads_of_a_study():
    groups = provenance.study_downloads(STUDIES / "benchmark_rrf")
    names = {g: {p.name for p in paths} for g, paths in groups.items()}
    assert "results.json" in names["results"]
    assert {"questions.json", "gold.lock.json"} <= names["gold"]
    assert any(n.startswith("qrels") for n in names["qrels"]) and any(n.endswith(".trec") for n in names["runs"])
    block = provenance.downloads_block(STUDIES / "benchmark_rrf", page_dir=REPO / "notebooks")
    assert 'href="../downloads/case-studies/benchmark_rrf/results.json" download' in block
    helpcenter = provenance.study_downloads(STUDIES / "helpcenter")
    assert any(p.parts[-3:] == ("data", "helpcenter", "evaluation.json") for p in helpcenter["gold"])


def test_reranking_headline_corrects_for_the_number_of_pairs():
    res = _results("reranking")
    h = reranking_findings.headline(res)
    assert h["n"] == len(res["headline"]) > 1
    for r in h["rows"]:
        assert r["p_holm"] >= r["p"]
    assert len(h["better"]) <= len(h["better_raw"]) and len(h["worse"]) <= len(h["worse_raw"])


def test_collections_headline_counts_from_the_tests():
    h = collections_findings.headline(_results("standard_collections"))
    assert h["n"] == len(_results("standard_collections")["collections"])
    assert 0 <= h["beats_both_significant"] <= h["beats_both"] <= h["n"]
    for r in h["rows"]:
        assert r["beats_both"] == (r["vs_bm25"]["diff"] > 0 and r["vs_dense"]["diff"] > 0)


def test_measurement_dates_are_the_first_and_last_recorded():
    res = {"a": {"provenance": {"date": "2026-12-03T10:00:00+00:00"}},
           "b": {"provenance": {"date": "2026-12-01T09:00:00+00:00"}}, "c": {"provenance": {}}}
    assert provenance.measurement_dates(res) == ("2026-12-01T09:00:00+00:00", "2026-12-03T10:00:00+00:00")
    with pytest.raises(GabaritoError, match="date"):
        provenance.measurement_dates({"c": {"provenance": {}}})


def test_engine_names_are_identifiers_in_code_and_never_english():
    from gabarito.publish.provenance import _engine_names

    out: list[str] = []
    _engine_names({"a": {"name": "ir_measures", "version": "0.4.3"}, "b": {"name": "arcadedb", "version": "26.10.1"},
                   "c": {"name": "sentence-transformers CrossEncoder (trained here)"}}, out)
    assert out == ["<code>ir_measures 0.4.3</code>", "ArcadeDB 26.10.1",
                   "sentence-transformers CrossEncoder (treinado neste projeto)"]
