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
    sets = {"main": {"gold": _regime(0.05, 0.01, 0.2), "graded": _regime(0.02, 0.04, 0.5)},
            "disjoint": {"gold": _regime(-0.03, 0.02, 0.3), "graded": _regime(0.01, 0.5, 0.5)}}
    got = CR.primary_holm(sets)
    assert sorted(got) == ["gold", "graded"] and sorted(got["gold"]) == ["disjoint", "main"]
    assert got["gold"]["main"]["p_holm"] == pytest.approx(0.02)  # Holm over the two sets: .01 x 2
    assert got["gold"]["disjoint"]["p_holm"] == pytest.approx(0.02)  # .02 x 1, kept monotone
    assert got["graded"]["main"]["p_holm"] == pytest.approx(0.08) and got["graded"]["disjoint"]["p_holm"] == 0.5
    assert got["gold"]["main"]["diff"] == 0.05 and got["gold"]["main"]["lesson_p_holm"] == pytest.approx(0.4)
