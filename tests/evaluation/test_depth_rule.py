"""Issue 42, items 1, 6 and 10: every measure honest about its depth, ``compare`` fit for collections
with many relevant documents per question. Each test drives ``gabarito evaluate`` / ``gabarito
compare`` in a subprocess, on the memory engine and small generated collections (BM25, no model),
except the hybrid test, which needs the packaged MiniLM offline (skipped without it).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

PY = sys.executable
WORDS = [f"w{i}" for i in range(40)]


def gabarito(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(cwd / "cache"),
           "GABARITO_ENCODER_BACKEND": "torch"}
    return subprocess.run([PY, "-m", "gabarito.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.startswith("gabarito: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    return proc.stderr


def collection(folder: Path, *, n_docs: int, n_queries: int, relevant: int, seed: int = 1) -> Path:
    """``docs.json`` (each document three paragraphs, all sharing a filler line, so BM25 finds them
    all) and ``evaluation.json`` (``relevant`` documents per question)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n_docs):
        body = " ".join(rng.choice(WORDS) for _ in range(30))
        docs.append({"id": f"d{i:03d}", "title": f"Doc {i}",
                     "text": "\n\n".join([body, " ".join(rng.choice(WORDS) for _ in range(20)), "common filler text " * 3])})
    queries = [{"id": f"q{j}", "query": " ".join(rng.sample(WORDS, 3)),
                "relevantIds": rng.sample([d["id"] for d in docs], relevant)} for j in range(n_queries)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (folder / "evaluation.json").write_text(json.dumps(queries), encoding="utf-8")
    return folder


def evaluate(folder: Path, out: str, *extra: str, method: str = "bm25") -> subprocess.CompletedProcess:
    return gabarito(folder, "evaluate", "--documents", "docs.json", "--evaluation", "evaluation.json", "--method",
                    method, "--segmentation", "paragraph", "--log", "runs/log.jsonl", "--out", f"runs/{out}", *extra)


def record(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


def trec_lists(folder: Path) -> dict[str, list[str]]:
    lists: dict[str, list[tuple[int, str]]] = {}
    for line in (folder / "run.trec").read_text(encoding="utf-8").splitlines():
        qid, _q0, doc, rank, _score, _tag = line.split()
        lists.setdefault(qid, []).append((int(rank), doc))
    return {q: [d for _r, d in sorted(pairs)] for q, pairs in lists.items()}


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """160 documents of three chunks, 6 questions with 8 relevant documents each; three BM25 runs:
    ``deep`` (the default depth), ``doc`` (whole documents) and ``shallow`` (``--depth 50``)."""
    folder = collection(tmp_path_factory.mktemp("many"), n_docs=160, n_queries=6, relevant=8)
    for out, extra in (("deep", ()), ("doc", ("--segmentation", "document")), ("shallow", ("--depth", "50"))):
        proc = evaluate(folder, out, *extra)
        assert proc.returncode == 0, proc.stderr[-2000:]
        (folder / f"{out}.stdout").write_text(proc.stdout, encoding="utf-8")
    return folder


# -- item 1: one document depth, searched to and cut to -------------------------------------------------

def test_the_default_depth_follows_the_measures_and_run_trec_holds_it(many):
    """Before: 50 chunks gave 43-48 documents per list and "R@100" was .396; now every list holds
    100 documents (the chunk depth grew to reach them) and R@100 is the share of relevant ones there."""
    folder = many / "runs" / "deep"
    rec = record(folder)
    assert rec["measures"] == ["nDCG@10", "AP@100", "R@100"]
    ranked = rec["ranked_lists"]
    assert ranked["depth"] == 100 and ranked["shortest"] == ranked["longest"] == 100 and ranked["chunk_depth"] >= 100
    lists = trec_lists(folder)
    assert sorted(lists) == [f"q{j}" for j in range(6)] and all(len(x) == 100 for x in lists.values())
    expected = {q["id"]: set(q["relevantIds"]) for q in json.loads((many / "evaluation.json").read_text())}
    by_hand = sum(len(expected[q] & set(lists[q][:100])) / len(expected[q]) for q in expected) / len(expected)
    assert rec["summary"]["measures"]["R@100"]["value"] == pytest.approx(by_hand, abs=1e-12)
    page = (folder / "relatorio.html").read_text(encoding="utf-8")
    assert "até a profundidade buscada (documentos por pergunta: 100)" in page
    printed = (many / "deep.stdout").read_text(encoding="utf-8")
    assert f"ranked lists (run.trec, every measure): 100 documents per question, from {ranked['chunk_depth']} " \
           f"chunks searched\n" in printed


def test_a_measure_deeper_than_the_depth_is_refused_and_a_default_one_named_at_it(many, tmp_path):
    proc = evaluate(many, "refused", "--depth", "50", "--measures", "nDCG@10,R@100")
    one_line_error(proc, "measure R@100 needs lists of 100 documents", "--depth is 50", "R@50")
    assert not (many / "runs" / "refused").exists()
    shallow = record(many / "runs" / "shallow")  # --depth 50 with the default measures: named honestly
    assert shallow["measures"] == ["nDCG@10", "AP@50", "R@50"] and shallow["ranked_lists"]["depth"] == 50
    assert "R@100" not in shallow["summary"]["measures"]
    assert all(len(x) == 50 for x in trec_lists(many / "runs" / "shallow").values())


def test_hybrid_and_single_methods_are_cut_to_one_document_depth(tmp_path):
    """Before: with 50 chunks a hybrid list held 35-39 documents and a BM25 list 29-33 on this
    collection; now every method holds exactly --depth documents per question; compare warns that the
    hybrid run's RRF scores tie within the ranks its measures read."""
    from gabarito.retrieval.models import resolve

    if resolve("sentence-transformers/all-MiniLM-L6-v2", engine="sentence-transformers").origin == "hub":
        pytest.skip("no offline MiniLM here")
    folder = collection(tmp_path / "small", n_docs=40, n_queries=5, relevant=5, seed=2)
    for method in ("bm25", "dense", "hybrid"):
        proc = evaluate(folder, method, "--depth", "20", method=method)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rec = record(folder / "runs" / method)
        assert rec["ranked_lists"]["depth"] == 20 and rec["measures"] == ["nDCG@10", "AP@20", "R@20"]
        assert [len(x) for x in trec_lists(folder / "runs" / method).values()] == [20] * 5, method
    hybrid = record(folder / "runs" / "hybrid")
    assert hybrid["ranked_lists"]["ties"]["first_rank"] is not None
    proc = gabarito(folder, "compare", "runs/bm25", "runs/hybrid", "--measure", "R@20")
    assert proc.returncode == 0, proc.stderr
    assert f"{hybrid['run_id']}: in {hybrid['ranked_lists']['ties']['questions']} questions documents have equal " \
           f"scores" in proc.stderr


# -- item 6: compare's measures --------------------------------------------------------------------------

def compared(folder: Path, *args: str) -> dict:
    proc = gabarito(folder, "compare", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_measure_is_repeatable_and_takes_comma_lists(many):
    result = compared(many, "runs/deep", "runs/doc", "--measure", "nDCG@10,AP@100", "--measure", "R@100")
    assert result["measures"] == ["nDCG@10", "AP@100", "R@100", "hit@1"]
    assert list(result["pairs"][0]["tests"]) == ["nDCG@10", "AP@100", "R@100", "hit@1"]
    one = compared(many, "runs/deep", "runs/doc", "--measure", "nDCG@10")
    assert one["pairs"][0]["tests"]["nDCG@10"]["p_randomization"] == \
        result["pairs"][0]["tests"]["nDCG@10"]["p_randomization"]  # each measure scored as if alone


def test_default_measures_follow_the_judgments(many, tmp_path):
    result = compared(many, "runs/deep", "runs/doc")
    assert result["measures"] == ["RR@10", "nDCG@10", "AP@100", "R@100", "hit@1"]
    single = collection(tmp_path / "single", n_docs=30, n_queries=5, relevant=1)
    for out in ("a", "b"):
        assert evaluate(single, out, *(("--segmentation", "document") if out == "b" else ())).returncode == 0
    assert compared(single, "runs/a", "runs/b")["measures"] == ["RR@10", "hit@1"]


def holm_by_hand(pvalues: list[float]) -> list[float]:
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        out[i] = running
    return out


def test_holm_runs_over_every_measure_times_every_pair(many):
    result = compared(many, "runs/deep", "runs/doc", "runs/shallow", "--measure", "nDCG@10,R@50")
    tests = [t for pair in result["pairs"] for t in pair["tests"].values()]
    assert len(tests) == 6 and all(t["holm_family"] == 6 for t in tests)  # 2 pairs x (2 measures + hit@1)
    expected = holm_by_hand([t["p_randomization"] for t in tests])
    assert [t["p_holm"] for t in tests] == pytest.approx(expected, abs=1e-15)
    text = gabarito(many, "compare", "runs/deep", "runs/doc", "runs/shallow", "--measure", "nDCG@10,R@50").stdout
    assert text.count("(over 6 tests)") == 6


def test_compare_refuses_a_measure_deeper_than_a_runs_lists(many):
    shallow = record(many / "runs" / "shallow")
    proc = gabarito(many, "compare", "runs/deep", "runs/shallow", "--measure", "R@100")
    one_line_error(proc, f"run {shallow['run_id']} searched its lists to 50 documents", "R@50", "--depth 100")
    result = compared(many, "runs/deep", "runs/shallow", "--measure", "R@50,AP")
    assert result["measures"] == ["R@50", "AP@50", "hit@1"]  # a measure with no cutoff: at the shallowest depth
    assert "depth" in result["pairs"][0]["changed"] and [r["depth"] for r in result["runs"]] == [100, 50]


# -- item 10: pages and labels ---------------------------------------------------------------------------

def test_the_run_page_shows_the_measured_values_per_question_and_a_scale_per_measure(many):
    folder = many / "runs" / "deep"
    rec, page = record(folder), (folder / "relatorio.html").read_text(encoding="utf-8")
    table = page.split('id="perguntas"')[1].split("</table>")[0]
    for name in ("nDCG@10", "MAP@100", "Recall@100"):
        assert f">{name}</th>" in table
    from gabarito.publish import formatting as fmt

    first = table.split("<tbody>")[1].split("</tr>")[0]
    assert fmt.num(rec["per_query"][0]["measures"]["AP@100"]) in first
    assert "nunca acerta" not in page and "Recall@100: a fração dos documentos relevantes" in page
    assert "releitura" not in page  # no reader ran: no "replace" row


def test_a_label_with_a_bidi_override_or_an_invisible_mark_is_refused(many):
    for label in ("run\u202etxt.exe", "a\u200bb"):
        proc = evaluate(many, "bidi", "--label", label)
        one_line_error(proc, "--label holds a control character or a format one")
        assert label not in proc.stderr and not (many / "runs" / "bidi").exists()


def test_a_run_older_than_the_depth_rule_is_flagged_per_measure(many, tmp_path, monkeypatch):
    """A run folder written before runs recorded their depth (listed as older than manifests): its
    lists hold what 50 chunks gave, so each measure deeper than its rows is flagged, not silently read."""
    import shutil

    from gabarito.study.integrity import MANIFEST

    old = tmp_path / "old"
    shutil.copytree(many / "runs" / "doc", old)
    (old / MANIFEST).unlink()
    rec = record(old)
    rec["ranked_lists"] = {"chunk_depth": 50, "documents": 279, "order_as_scored": True}  # as written before
    (old / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    monkeypatch.setenv("GABARITO_LEGACY_FOLDERS", str(old))
    proc = gabarito(many, "compare", "runs/deep", str(old), "--measure", "RR@10,R@100,nDCG@10")
    assert proc.returncode == 0, proc.stderr
    flagged = [line for line in proc.stderr.splitlines() if "recorded no list depth" in line]
    assert [line.split(": run ")[0].removeprefix("gabarito: warning: ") for line in flagged] == ["R@100", "nDCG@10"]
    assert "lists hold what 50 chunks gave" in flagged[0] and "fewer than 100 documents" in flagged[0]
    assert " ? " in proc.stdout.splitlines()[2] + " "  # the table shows its depth as not recorded
