"""The reader-curve study end to end at a tiny budget, through its own command line: it trains
(64 pairs, a checkpoint every 32), validates each checkpoint, chooses one on validation, reads
the held-out collection again (BM25's and the dense stage's top 100) and writes a Report per
first stage, with the lesson. One collection is not
the declared family of five: its primary comparison is written as incomplete, with no Holm p.

The studies' training runs (hours on a CPU) never run in CI; this one measures the path a
finished training takes, so that a run which trained for hours does not fail at its last step."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gabarito.measure.report import Report

from copies import ROOT, studies_env

SCRIPT = ROOT / "case-studies" / "standard_collections" / "train_reader_curve.py"


@pytest.mark.integration
def test_a_tiny_curve_trains_validates_chooses_and_measures_the_held_out_collection(tmp_path, mirror):
    out, progress = tmp_path / "out", tmp_path / "progress.json"
    env = {**studies_env(ROOT / "case-studies"), "GABARITO_CACHE_DIR": str(tmp_path / "cache"), "GABARITO_QUIET": "1"}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--folds", "adi", "--losses", "bce", "--budget", "64",
                           "--checkpoint", "32", "--resamples", "200", "--mirror", str(mirror), "--out", str(out),
                           "--progress", str(progress)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((out / "rerankers_curve.json").read_text(encoding="utf-8"))
    fold = res["folds"]["adi/bce"]
    assert fold["held_out_collection"] == "adi" and fold["training"]["pairs_seen"] == 64
    curve = fold["training"]["curve"]
    assert [p["pairs"] for p in curve] == [0, 32, 64]
    chosen = fold["training"]["best"]  # the checkpoint validation prefers, the one read on the held-out collection
    assert chosen["select"] == max(p["select"] for p in curve) and chosen["pairs"] in (0, 32, 64)
    assert fold["held_out"]["reader"]["weights_sha256"] == chosen["weights_sha256"]
    for stage in ("bm25", "dense"):  # both first stages read again at N = 10, 20, 50, 100
        report = Report.from_dict(fold["held_out"]["first_stages"][stage]["report"])
        assert report.family.to_dict()["baseline"] == stage
        assert report.n == len(fold["held_out"]["per_query_nDCG@10"][stage][stage])
        assert len(report.comparisons("nDCG@10", against=stage)) == 12  # replace, RRF, convex x 4 depths
    c = Report.from_dict(fold["held_out"]["first_stages"]["bm25"]["report"]).compare("rrf@20", "bm25", "nDCG@10")
    assert c.ci[0] <= c.diff <= c.ci[1]
    assert fold["held_out"]["lesson"]["variant"] == "rrf@20"
    primary = res["primary"]["bce"]
    assert "tests" not in primary and "lesson_tests" not in primary and primary["incomplete"]["held_out"] == ["adi"]
    assert len(primary["incomplete"]["declared"]) == 5 and primary["rows"]["adi/bce"]["diff"] == c.diff
    assert primary["lesson_rows"]["adi/bce"]["diff"] == fold["held_out"]["lesson"]["mean_diff"]
    ledger = json.loads(progress.read_text(encoding="utf-8"))
    assert ledger["folds"]["adi/bce"]["training"]["pairs_seen"] == 64 and "not a result" in ledger["what"]
    assert os.listdir(tmp_path / "cache" / "cross-encoders")  # the checkpoints live in the cache it was given
