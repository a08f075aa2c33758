"""The keys the findings give the ledger (issue 40 item 3): each points, in the committed results,
at the value the page shows; and the identities keep apart what differs (the two vector runs,
the two approximate indexes, the kappas over different pairs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.publish.ledger import resolve
from studies.fusion import findings as fusion
from studies.helpcenter import findings as helpcenter
from studies.judgments import findings as judgments
from studies.peers import findings as peers
from studies.standard_collections import findings as classic

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "case-studies"


def load(*parts: str) -> dict:
    return json.loads(CASES.joinpath(*parts).read_text(encoding="utf-8"))


def test_vector_rows_keys_hold_their_values():
    vectors = load("peers", "vectors.json")
    rows = peers.vector_rows(vectors)
    assert rows
    for r in rows:
        assert resolve(vectors, r["keys"]["recall"]) == r["recall"]
        if r["engine"] != "arcadedb_vector":
            assert resolve(vectors, r["keys"]["build_s"]) == r["build_s"]
            assert resolve(vectors, r["keys"]["memory_mb"]) == r["memory_mb"]
        else:  # ArcadeDB's build is its load plus its graph, both under its key
            arc = resolve(vectors, r["keys"]["build_s"])
            assert arc["ingest_s"] + arc["build_s"] == r["build_s"]
            assert resolve(vectors, r["keys"]["memory_mb"]) == r["memory_mb"]
    widths = [r["width"] for r in peers.arcadedb_rows(vectors, 100_000)]
    assert widths == sorted(widths) and len(widths) > 1


def test_the_two_synthetic_vector_runs_are_two_identities():
    scaling, vectors = load("standard_collections", "scaling.json"), load("peers", "vectors.json")
    rows = classic.synthetic_rows(scaling)
    assert {r["search"] for r in rows} == set(classic.SYNTHETIC_SEARCHES)
    for r in rows:
        for what in ("recall", "ingest_s", "build_s", "memory_mb"):
            assert resolve(scaling, r["keys"][what]) == r[what]
    ours = {r["ids"]["memory_mb"] for r in rows if r["n"] == 100_000}
    theirs = {peers.vector_identity(r, "memory_mb") for r in peers.arcadedb_rows(vectors, 100_000)}
    assert len(ours) == 1 and len(theirs) == 1 and ours != theirs  # 1.630 MB and 2.494 MB, each named


def test_the_study_index_and_the_scaling_index_are_two_identities():
    results, scaling = load("standard_collections", "results.json"), load("standard_collections", "scaling.json")
    for c in scaling["real"]:
        assert classic.ann_identity(results, c) != classic.scaling_ann_identity(scaling, c)


def test_worse_elsewhere_names_medline_map_against_dense_mpnet():
    results = load("standard_collections", "results.json")
    rows = classic.worse_elsewhere(results)
    assert [(r["collection"], r["measure"], r["other"]) for r in rows] == [("medline", "AP@100", "dense_mpnet")]
    test = resolve(results, rows[0]["key"])
    assert test["measure"] == "AP@100" and abs(abs(test["mean_diff"]) - abs(rows[0]["diff"])) < 1e-12
    assert rows[0]["diff"] < 0 and classic.essentials(results)["worse_elsewhere"] == rows


def test_no_fusion_timing_is_offered_unless_valid():
    results = load("fusion", "results.json")
    valid = fusion.latency_summary(results)["valid"]
    shown = fusion.ratio_range(results)
    assert (shown == []) == (valid == [])
    for r in shown:
        assert r["valid"] and resolve(results, r["key"]) == r["ratio_python_over_native"]["median"]
    fake = {"provenance": {"parameters": {"corpora": ["a"], "depth": 10}},
            "corpora": {"a": {"latency_ms": {"10": {"valid": True, "ratio_python_over_native": {"median": 1.5}},
                                             "100": {"valid": False, "ratio_python_over_native": {"median": 9.0},
                                                      "peak_load_1min": 3.0, "max_load": 1.0, "cpu_count": 2}}}}}
    assert [r["key"] for r in fusion.ratio_range(fake)] == [["corpora", "a", "latency_ms", "10",
                                                             "ratio_python_over_native", "median"]] * 2


@pytest.mark.parametrize("weight,pairs", list(judgments.KAPPA_VARIANTS))
def test_kappa_keys_hold_their_values(weight, pairs):
    results = load("judgments", "results.json")
    total = results["agreement"] if pairs == "all" else results["agreement"][pairs]
    assert resolve(results, judgments.kappa_key(None, weight, pairs)) == total[weight]["kappa"]
    for s in results["sets"]:
        assert isinstance(resolve(results, judgments.kappa_key(s, weight, pairs)), float)
    assert judgments.kappa_identity("round 1", weight, pairs).variant == judgments.KAPPA_VARIANTS[weight, pairs]


def test_helpcenter_key_of_finds_the_chosen_pair():
    results = load("helpcenter", "results.json")
    label = results["chosen"]["label"]
    assert resolve(results, helpcenter.key_of(results, label)) is helpcenter.chosen(results)
    with pytest.raises(KeyError):
        helpcenter.key_of(results, "no such label")
