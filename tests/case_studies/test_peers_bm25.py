"""The evaluate chapter's sentence on the two BM25 engines, from ``bm25_alignment.json``."""

import json
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from studies.peers.findings_bm25 import engines_agreement

COMMITTED = Path(__file__).resolve().parents[2] / "case-studies" / "peers" / "bm25_alignment.json"


def alignment(before_identical=21, aligned_identical=76, rr=(0.53, 0.61, 0.53)) -> dict:
    agree = {"memory_before": {"identical_topk": before_identical, "n_queries": 76},
             "memory_aligned": {"identical_topk": aligned_identical, "n_queries": 76}}
    metrics = {name: {"RR@10": value} for name, value in zip(("arcadedb", "memory_before", "memory_aligned"), rr)}
    return {"collection": "cisi", "questions": 76, "questions_with_a_repeated_word": 59, "reference": "arcadedb",
            "agreement": agree, "report": {"metrics": metrics}}


def test_the_agreement_reads_each_flavour_against_the_reference():
    out = engines_agreement(alignment())
    assert out["before"] == {"identical_top10": 21, "n_queries": 76, "mean": 0.61}
    assert out["aligned"]["identical_top10"] == 76 and out["all_identical"] is True
    assert out["reference_mean"] == 0.53 and out["repeated_word"] == 59


def test_an_aligned_engine_that_still_differs_is_not_called_identical():
    assert engines_agreement(alignment(aligned_identical=75))["all_identical"] is False


def test_a_file_without_the_measurement_is_one_line():
    bad = alignment()
    del bad["agreement"]["memory_aligned"]
    with pytest.raises(GabaritoError, match="memory_aligned"):
        engines_agreement(bad)


def test_the_committed_measurement_shows_every_top10_equal_after_alignment():
    out = engines_agreement(json.loads(COMMITTED.read_text(encoding="utf-8")))
    assert out["all_identical"] and out["before"]["identical_top10"] < out["questions"]
    assert out["aligned"]["mean"] == pytest.approx(out["reference_mean"])
