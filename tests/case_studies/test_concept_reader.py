"""case-studies/benchmark_rrf/train_concept_reader.py: the pseudo-queries are made of the concepts
alone (names split into words, first sentences of descriptions) and their positives are not the
bare name; checked on a tiny hand-made ontology, with a stand-in encoder (no model)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from gabarito.inputs.corpus import Concept
from gabarito.measure.families import Against
from gabarito.measure.report import Report
from gabarito.retrieval.rerank.training import POSITIVE
from studies.benchmark_rrf import train_concept_reader as CR

CONCEPTS = [
    Concept("Climate_Belief", {"description": "Climate belief refers to the conviction that the climate is "
                                              "changing. It shapes how people judge wind farms and solar "
                                              "parks near their homes."}),
    Concept("PublicAcceptance", {"description": "The degree to which residents support energy projects. "
                                                "Shaped by trust, fairness of the process and the local "
                                                "benefits people expect."}),
    Concept("Cost", {"description": "Costs of building and running energy systems"}),
    Concept("Trust", {"description": "Confidence of residents in developers and authorities. It grows with "
                                     "transparent communication and fair procedures over many years."}),
    Concept("CO2Emissions", {"description": "Carbon dioxide released by burning fuels. Lower emissions are "
                                            "a main argument for renewable energy in public debates."}),
]
QUESTION = "Which concept describes whether people think the climate is changing?"


def test_names_are_split_into_lower_case_words():
    assert CR.readable_name("Climate_Belief") == "climate belief"
    assert CR.readable_name("PublicAcceptance") == "public acceptance"
    assert CR.readable_name("CO2Emissions") == "co2 emissions"
    assert CR.readable_name("Land-Use_System") == "land-use system"
    assert CR.readable_name("Cost") == "cost"


def test_pseudo_queries_come_from_names_and_first_sentences_only():
    assert list(inspect.signature(CR.concept_pseudo_queries).parameters) == ["concepts"]
    found = CR.concept_pseudo_queries(CONCEPTS)
    by = {(p.doc_id, p.source): p for p in found}
    assert {p.doc_id for p in found if p.source == "name"} == {c.name for c in CONCEPTS}
    assert by[("Climate_Belief", "name")].query == "climate belief"
    assert by[("PublicAcceptance", "name")].query == "public acceptance"
    assert by[("Climate_Belief", "first sentence")].query == \
        "Climate belief refers to the conviction that the climate is changing"
    assert ("Cost", "first sentence") not in by  # one sentence only: no rest to be its positive
    for p in found:
        description = next(c.description for c in CONCEPTS if c.name == p.doc_id)
        assert p.query == CR.readable_name(p.doc_id) or description.startswith(p.query)
        assert p.query != QUESTION and p.positive != QUESTION


def test_positives_are_not_the_bare_name():
    found = CR.concept_pseudo_queries(CONCEPTS)
    for p in found:
        assert p.positive and p.positive.lower() != p.query.lower()
        assert not p.positive.lower().startswith(CR.readable_name(p.doc_id))
    by = {(p.doc_id, p.source): p for p in found}
    assert by[("Climate_Belief", "name")].positive.startswith("refers to the conviction")
    assert by[("PublicAcceptance", "name")].positive.startswith("The degree to which residents")
    assert by[("Cost", "name")].positive == "of building and running energy systems"  # the plural too
    assert by[("Trust", "first sentence")].positive.startswith("It grows with transparent")


def test_training_pairs_hold_no_name_prefixed_text():
    def encode(texts):  # a stand-in bi-encoder: letter counts
        return np.array([[t.lower().count(ch) + 1e-3 for ch in "abcdefghijklmnopqrstuvwxyz"] for t in texts])

    pairs, counts = CR.training_pairs(CONCEPTS, 7, encode)
    assert counts["name"]["pseudo_queries"] == 5 and counts["first sentence"]["pseudo_queries"] == 4
    assert sum(p.kind == POSITIVE for p in pairs) == 9
    assert len({p.query_id for p in pairs}) == 9  # the two sources of a concept never share an id
    for p in pairs:
        name = CR.readable_name(p.doc_id.split(":")[-1])
        assert not p.text.lower().startswith(name) and QUESTION not in (p.query, p.text)


def _regime(diff: float, p: float, lesson_p: float) -> dict:
    """One set under one regime as the study stores it: BM25's Report block and the lesson row."""
    row = {"measure": "nDCG@10", "a": "rrf@20", "b": "bm25", "mean_diff": diff, "ci_low": diff - 0.01,
           "ci_high": diff + 0.01, "p_randomization": p, "p_holm": p}
    report = Report(metrics={"bm25": {"nDCG@10": 0.5}, "rrf@20": {"nDCG@10": 0.5 + diff}}, tests=(row,), n=20,
                    family=Against("bm25"))
    return {"first_stages": {"bm25": {"report": report.to_dict()}},
            "lesson": {"variant": "rrf@20", "mean_diff": 0.01, "ci_low": 0.0, "ci_high": 0.02,
                       "p_randomization": lesson_p}}


def test_the_primary_comparison_is_holm_corrected_over_the_sets_per_regime():
    """It called itself once (a library import of the same name was shadowed): a rerun failed at its last step."""
    names = list(CR.GOLD_SETS)
    raw = dict(zip(names, (0.01, 0.02, 0.03, 0.2, 0.5)))
    sets = {k: {"gold": _regime(0.05, raw[k], 0.2), "graded": _regime(0.02, 0.04, 0.5)} for k in names}
    got = CR.primary_holm(sets)
    assert sorted(got) == ["gold", "graded"] and sorted(got["gold"]) == sorted(names)
    assert [got["gold"][k]["p_holm"] for k in names] == pytest.approx([0.05, 0.08, 0.09, 0.4, 0.5])  # Holm over five
    assert got["graded"][names[0]]["p_holm"] == pytest.approx(0.2) and got["gold"][names[0]]["diff"] == 0.05
    assert got["gold"][names[0]]["lesson_p_holm"] == pytest.approx(1.0)


def test_fewer_sets_than_declared_are_written_as_incomplete_with_no_holm_p():
    two = {k: {"gold": _regime(0.05, 0.01, 0.2), "graded": _regime(0.02, 0.04, 0.5)} for k in ("main", "disjoint")}
    got = CR.primary_holm(two)
    assert got["gold"]["incomplete"] == {"sets": ["disjoint", "main"], "declared": list(CR.GOLD_SETS)}
    assert got["gold"]["rows"]["main"] == {"diff": 0.05, "ci": pytest.approx([0.04, 0.06]), "p": 0.01}
    assert "p_holm" not in str(got)


@pytest.mark.integration
def test_a_tiny_run_through_the_command_line_reaches_its_last_step(tmp_path, mirror):
    """Five steps of training, one gold set: every stage stored as a Report, the primary written as
    incomplete (one set is not the declared family), the lesson and the AUC beside them."""
    import json
    import subprocess
    import sys

    from copies import ROOT, studies_env

    out = tmp_path / "out"
    env = {**studies_env(ROOT / "case-studies"), "GABARITO_CACHE_DIR": str(tmp_path / "cache"), "GABARITO_QUIET": "1",
           "GABARITO_DATA_MIRROR": str(mirror)}
    proc = subprocess.run([sys.executable, str(ROOT / "case-studies" / "benchmark_rrf" / "train_concept_reader.py"),
                           "--steps", "5", "--sets", "main", "--resamples", "200", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((out / "reader_concepts.json").read_text(encoding="utf-8"))
    for regime in CR.REGIMES:
        r = res["sets"]["main"][regime]
        for stage in ("bm25", "vector"):
            report = Report.from_dict(r["first_stages"][stage]["report"])
            assert report.family.to_dict()["baseline"] == stage and report.n > 0
            assert len(report.comparisons("nDCG@10", against=stage)) == 9  # 3 ways x 3 depths, Holm over them
        assert r["lesson"]["variant"] == "rrf@20"
        assert res["primary"][regime]["incomplete"]["sets"] == ["main"] and "p_holm" not in str(res["primary"][regime])
    assert res["training"]["steps"] == 5
    assert all(0.0 <= v <= 1.0 for v in res["auc"]["reader"]["auc"].values())
