"""The reranking study, run for real in its quick mode: embedded ArcadeDB, the real models, the frozen gold.

The study (its script, the modules beside it and ``study.json``) is copied into a temporary tree with
``data/`` linked beside it, so the gold hashes the runner records (relative to the study folder) resolve
there exactly as in the repository.
"""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.study.records import check_results_gold

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "reranking"
pytestmark = pytest.mark.integration

READERS = ("bi-encoder mpnet", "maxsim MiniLM", "splade-tiny")
STAGES = ("bm25", "dense MiniLM", "dense e5", "rrf", "splade")


@pytest.fixture()
def study_copy(tmp_path):
    tree = tmp_path / "repo"
    dst = tree / "case-studies" / "reranking"
    shutil.copytree(STUDY, dst, ignore=shutil.ignore_patterns("results.json", "__pycache__"))
    (tree / "data").symlink_to(ROOT / "data", target_is_directory=True)
    return dst


def run(study: Path, *args: str, timeout: int = 3000):
    return subprocess.run([sys.executable, str(study / "run_rerank.py"), *args], capture_output=True, text=True,
                          check=False, timeout=timeout, env={**os.environ, "HF_HUB_DISABLE_PROGRESS_BARS": "1"})


def test_quick_run_writes_complete_results(study_copy, tmp_path):
    not_a_model = tmp_path / "not-a-cross-encoder"
    not_a_model.mkdir()
    proc = run(study_copy, "--quick", "--db-dir", str(tmp_path / "db"), "--reranker", str(not_a_model))
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = study_copy / "results.json"
    res = json.loads(path.read_text())
    assert check_results_gold(path) == {"../../data/helpcenter/evaluation.json": res["provenance"]["gold_sha256"][
        "../../data/helpcenter/evaluation.json"]}

    assert res["study"] == "reranking" and res["mode"] == "quick" and res["title"]
    assert {"load", "headline", "calibration", "mmr", "cost"} <= set(res["phases_s"]) and res["wall_s"] > 0
    prov = res["provenance"]
    assert prov["parameters"]["seed"] == 20261202 and prov["parameters"]["questions"] == 15
    assert prov["engine"]["bm25"]["index"] == "built"  # a fresh --db-dir: built through open_or_build
    assert prov["corpus"]["n_docs"] == 12 and prov["corpus"]["n_chunks"] == 89 and len(prov["corpus"]["sha256"]) == 64
    assert prov["engine"]["bm25"]["version"] and "Portuguese" in prov["engine"]["bm25"]["analyzer_class"]
    for name, model in prov["model"].items():
        assert len(model["weights_sha256"]) == 64 and model["origin"], name
    assert prov["git"]["commit"] and prov["machine"]["cpu_count"] >= 1 and prov["date"]

    setup = res["setup"]
    assert (setup["n_questions"], setup["n_answerable"], setup["n_unanswerable"]) == (15, 12, 3)
    assert setup["better_dense"] in ("dense MiniLM", "dense e5") and setup["readers"] == list(READERS)
    for name, diff in setup["score_table_vs_live_max_abs_diff"].items():
        assert diff < 1e-3, name

    ce = res["cross_encoder"]
    assert ce["measured"] is False and ce["reason"] == {"code": "rerank.no_cross_encoder_loaded",
                                                        "tried": [str(not_a_model)]}
    assert ce["attempts"][0]["error"]["code"].startswith("error.")  # a code, never the raw text alone

    assert len(res["headline"]) == len(STAGES) * len(READERS)
    for row in res["headline"]:
        assert row["N"] == 20 and 0 <= row["recall@20"] <= 1
        for when in ("before", "after"):
            assert set(row[when]) == {"n", "hit@1", "hit@3", "hit@5", "mrr"} and row[when]["n"] == 12
        for cutoff in ("cutoff1", "cutoff3"):
            gl = row[cutoff]
            assert gl["gained"] + gl["lost"] + gl["same"] == 12 and 0 < gl["p"] <= 1
            assert len(gl["gained_ids"]) == gl["gained"] and len(gl["lost_ids"]) == gl["lost"]
    # re-reading the whole list cannot change recall; N = 1 changes nothing
    sweep = {(r["first_stage"], r["reader"], r["N"]): r for r in res["n_sweep"]}
    for stage in STAGES:
        before = res["first_stages"][stage]
        for reader in READERS:
            assert sweep[(stage, reader, 1)]["hit@1"] == before["hit@1"]
            assert sweep[(stage, reader, 100)]["recall@N"] == before["recall@100"]
    assert res["first_stages"]["dense e5"]["recall@100"] == 1.0  # 89 chunks: dense returns them all
    assert len(res["reader_input"]) == len(STAGES) * len(READERS)
    assert all({"prefixed", "bare"} <= set(r) for r in res["reader_input"])

    lat = res["latency_ms"]
    for reader in READERS:
        assert set(lat["per_N"][reader]) == {"5", "20"}
        assert all(cell["median"] > 0 and cell["n"] >= 3 for cell in lat["per_N"][reader].values())
        for spec in ("recursive:60:0", "recursive:150:0", "recursive:400:0"):
            assert lat["per_chunk_size"][spec][reader]["median"] > 0
            tokens = res["tokens"]["per_chunk_size"][spec][reader]
            assert tokens["pair_tokens"]["mean"] > tokens["chunk_tokens"]["mean"] > 0
    assert len(lat["yardstick"]) == 4
    assert set(lat["same_work_twice"]) == set(READERS)

    scorers = res["calibration"]["scorers"]
    assert "cosine e5 (first stage)" in scorers and "cosine MiniLM (first stage)" in scorers
    for reader in READERS:
        assert any(name.startswith(reader) for name in scorers)
    for name, s in scorers.items():
        assert 0 <= s["auc_answerable_vs_unanswerable"] <= 1, name
        assert s["chosen_and_validated"]["seed"] == 20261202
        assert [t["max_through"] for t in s["table"]] == [0.0, 0.05, 0.1, 0.2, 0.3, 0.5]

    mmr = res["mmr"]
    assert mmr["n_chunks"] == 297 and [r["lambda"] for r in mmr["rows"]] == [1.0, 0.9, 0.7, 0.5]
    for row in mmr["rows"]:
        assert 0 <= row["repeated_text_fraction_top5"] <= 1 and 1 <= row["distinct_documents_top5"] <= 5
        assert row["doc_level"]["hit@5"] >= row["chunk_level"]["hit@5"]
    assert mmr["rows"][0]["top5_changed_vs_lambda_1"] == 0
    if mmr["example"] is not None:
        assert len(mmr["example"]["before"]) == len(mmr["example"]["after"]) == 5

    cost = res["cost"]
    assert set(cost["listwise_llm"]["prompts"]) == {"10", "20"}
    tokens10 = cost["listwise_llm"]["prompts"]["10"]["input_tokens"]
    tokens20 = cost["listwise_llm"]["prompts"]["20"]["input_tokens"]
    assert tokens10 and all(tokens20[k]["mean"] > tokens10[k]["mean"] for k in tokens10)
    main = cost["storage"]["per_segmentation"]["recursive:150:0"]
    assert main["bytes_one_vector_per_chunk"] == 89 * 384 * 4
    assert main["bytes_one_vector_per_token"] == main["tokens_total"] * 384 * 4 > main["bytes_one_vector_per_chunk"]

    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    assert not math.isnan(res["wall_s"])


def test_refuses_gold_edited_after_freezing(tmp_path):
    tree = tmp_path / "repo"
    dst = tree / "case-studies" / "reranking"
    shutil.copytree(STUDY, dst, ignore=shutil.ignore_patterns("results.json", "__pycache__"))
    shutil.copytree(ROOT / "data" / "helpcenter", tree / "data" / "helpcenter")
    evaluation = tree / "data" / "helpcenter" / "evaluation.json"
    evaluation.write_text(evaluation.read_text().replace("desistir", "desistir ", 1))
    proc = run(dst, "--quick", timeout=300)
    assert proc.returncode == 2
    assert "gold changed after it was frozen" in proc.stderr.strip().splitlines()[-1]
    assert "reranking: load" not in proc.stderr  # refused before anything ran
    assert not (dst / "results.json").exists()
