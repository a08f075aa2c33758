"""``gabarito evaluate`` and ``compare`` end to end on the help-center corpus, with the real
MiniLM model, on the memory engine and on an embedded ArcadeDB server under a temporary folder.

Run with ``pytest -m integration tests/test_evaluate_cli.py``.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HELPCENTER = ROOT / "data" / "helpcenter"

# Used only when the help-center data is not there.
FALLBACK_DOCS = {
    "trocas": "# Trocas e devoluções\n\n## Prazo\n\nVocê pode desistir da compra em até 30 dias corridos "
              "após o recebimento.\n\n## Reembolso\n\nO estorno volta para o mesmo cartão.\n",
    "frete": "# Prazos e frete\n\n## Frete grátis\n\nFrete grátis a partir de R$ 299,00 para o Nordeste.\n",
    "conta": "# Conta e segurança\n\n## Senha\n\nRedefina a senha pela página de login.\n",
}
FALLBACK_EVALUATION = [
    {"id": "q1", "query": "prazo para desistir da compra", "relevantIds": ["trocas"], "type": "exact"},
    {"id": "q2", "query": "frete grátis para o Nordeste", "relevantIds": ["frete"], "type": "exact"},
    {"id": "q3", "query": "esqueci minha senha", "relevantIds": ["conta"], "type": "paraphrase"},
    {"id": "q4", "query": "horário da loja física", "relevantIds": [], "type": "unanswerable"},
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    docs, evaluation = HELPCENTER / "docs", HELPCENTER / "evaluation.json"
    if docs.is_dir() and evaluation.is_file():
        return docs, evaluation
    base = tmp_path_factory.mktemp("fallback")
    (base / "docs").mkdir()
    for name, text in FALLBACK_DOCS.items():
        (base / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    (base / "evaluation.json").write_text(json.dumps(FALLBACK_EVALUATION, ensure_ascii=False), encoding="utf-8")
    return base / "docs", base / "evaluation.json"


@pytest.fixture()
def isolated(tmp_path, monkeypatch) -> Path:
    """Embedding cache and runs under tmp_path."""
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GABARITO_ARCADEDB_URL", raising=False)
    return tmp_path


def n_queries(evaluation: Path) -> int:
    return len(json.loads(evaluation.read_text(encoding="utf-8")))


def read_csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def evaluate(corpus, log: Path, *extra: str) -> int:
    docs, evaluation = corpus
    return main(["evaluate", "--documents", str(docs), "--evaluation", str(evaluation), "--log", str(log), *extra])


def check_run(record: dict, log: Path, evaluation: Path) -> None:
    table = read_csv(log.parent / record["run_id"] / "results.csv")
    assert len(table) == n_queries(evaluation) == len(record["per_query"])
    assert [row["id"] for row in table] == [r["id"] for r in record["per_query"]]
    saved = json.loads((log.parent / record["run_id"] / "run.json").read_text(encoding="utf-8"))
    assert saved["run_id"] == record["run_id"]
    s = record["summary"]
    assert s["n_answerable"] + s["n_unanswerable"] == s["n_queries"]
    assert 0 <= s["top1"]["value"] <= s["top3"]["value"] <= s["top5"]["value"] <= 1
    assert len(s["unanswerable_top_scores"]) == s["n_unanswerable"]


def test_memory_engine_dense_and_bm25(corpus, isolated, capsys):
    log = isolated / "runs" / "log.jsonl"
    assert evaluate(corpus, log, "--label", "minilm") == 0
    assert evaluate(corpus, log, "--method", "bm25") == 0
    captured = capsys.readouterr()
    assert "top-1 accuracy" in captured.out and "embedding cache: 0 hits" in captured.err  # progress on stderr
    dense, bm25 = logged(log)
    assert len(logged(log)) == 2
    for record in (dense, bm25):
        check_run(record, log, corpus[1])
        assert record["engine"]["name"] == "memory"
    assert dense["model"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert dense["model"]["dim"] == 384 and len(dense["model"]["weights_sha256"]) == 64
    assert dense["cache"]["misses"] == dense["n_chunks"] and bm25["cache"] is None
    assert bm25["config"]["analyzer"] == "standard" and bm25["config"]["model"] is None

    assert main(["compare", dense["run_id"], bm25["run_id"], "--log", str(log)]) == 0
    captured = capsys.readouterr()
    # the one warning allowed: scores tied to 6 decimals (BM25 on a 12-document corpus), which compare names
    others = [line for line in captured.err.splitlines() if "warning" in line and "equal scores" not in line]
    assert "RR@10" in captured.out and "hit@1" in captured.out and not others


def test_arcadedb_engine_dense_and_bm25_portuguese(corpus, isolated, capsys):
    log = isolated / "runs" / "log.jsonl"
    db = isolated / "arcadedb"
    assert evaluate(corpus, log, "--engine", "arcadedb", "--db-dir", str(db)) == 0
    assert evaluate(corpus, log, "--engine", "arcadedb", "--db-dir", str(db), "--method", "bm25",
                    "--analyzer", "portuguese") == 0
    assert capsys.readouterr().err.count("index built") == 2
    dense, bm25 = logged(log)
    for record in (dense, bm25):
        check_run(record, log, corpus[1])
        assert record["engine"]["name"] == "arcadedb" and record["engine"]["version"].startswith("26.10")
        assert record["engine"]["database"].startswith("eval_")
    assert dense["engine"]["database"] != bm25["engine"]["database"]
    assert bm25["engine"]["analyzer_class"] == "org.apache.lucene.analysis.pt.PortugueseAnalyzer"
    assert bm25["config"]["analyzer"] == "portuguese"

    # the same setup again reuses the stored index and the cached vectors, and finds the same
    assert evaluate(corpus, log, "--engine", "arcadedb", "--db-dir", str(db)) == 0
    assert "index reused" in capsys.readouterr().err
    again = logged(log)[-1]
    assert again["engine"]["index"] == "reused" and again["cache"] == {"hits": dense["n_chunks"], "misses": 0}
    assert again["summary"]["top1"]["value"] == dense["summary"]["top1"]["value"]


def test_bad_evaluation_exits_2_with_one_line_and_no_log(corpus, isolated):
    docs, evaluation = corpus
    queries = json.loads(evaluation.read_text(encoding="utf-8"))
    queries[1]["relevantIds"] = ["no-such-document"]
    bad = isolated / "bad-evaluation.json"
    bad.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    log = isolated / "runs" / "log.jsonl"
    env = {**os.environ, "GABARITO_CACHE_DIR": str(isolated / "cache")}
    proc = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(docs),
                           "--evaluation", str(bad), "--log", str(log)],
                          capture_output=True, text=True, env=env, cwd=isolated, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("gabarito: error: ") and proc.stderr.count("\n") == 1
    assert "'no-such-document' is not in the documents" in proc.stderr and "record 2" in proc.stderr
    assert proc.stdout == ""
    assert not log.exists() and not (isolated / "runs").exists()


def test_total_time_includes_the_intervals(corpus, isolated):
    """The printed total covers every step the user waits for, the bootstrap summary included."""
    log = isolated / "runs" / "log.jsonl"
    assert evaluate(corpus, log, "--method", "bm25") == 0
    t = logged(log)[-1]["timings"]
    steps = sum(v for k, v in t.items() if k != "total_s")
    assert t["summary_s"] > 0 and t["total_s"] >= steps


def test_device_auto_runs_where_torch_sees_a_gpu_and_is_recorded_not_hashed(corpus, isolated, capsys):
    from gabarito.retrieval.device import choose_device

    log = isolated / "runs" / "log.jsonl"
    assert evaluate(corpus, log, "--device", "auto", "--label", "auto") == 0
    assert evaluate(corpus, log, "--device", "cpu", "--label", "auto") == 0
    auto, cpu = logged(log)
    assert auto["model"]["device"] == choose_device("auto") and cpu["model"]["device"] == "cpu"
    assert auto["run_id"].split("-")[-1] == cpu["run_id"].split("-")[-1]  # the device is not a setting of the run
    assert evaluate(corpus, log, "--device", "tpu") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "tpu" in err[-1] and len(logged(log)) == 2  # one line, nothing logged
