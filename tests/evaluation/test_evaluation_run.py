"""``gabarito evaluate`` / ``compare`` on a tiny corpus, memory engine, with a fake encoder.

The fake encoder hashes each lower-cased word into one of 64 dimensions and normalises the
counts, so a query scores highest on the chunk that shares the most of its words. The expected
ranks below were worked out by hand from the word overlaps.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gabarito import evaluation as ev
from gabarito.evaluation import run as evrun
from gabarito.evaluation import runlog
from gabarito.cli import main
from gabarito.evaluation.compare import compare_runs, config_differences, load_runs, measure_values, setting_details
from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.errors import GabaritoError
from gabarito.evaluation import CSV_COLUMNS, EvalConfig, run_evaluation, write_run
from gabarito.retrieval.models import EmbeddingCache

FAKE_MODEL = "test/fake-bow-64"

DOCS = {
    "refunds": "# Refunds\n\n## Deadline\n\nYou can ask for a refund within thirty days of delivery.\n\n"
               "## Method\n\nRefunds go back to the original card.\n",
    "shipping": "# Shipping\n\n## Costs\n\nShipping is free above fifty dollars.\n\n"
                "## Tracking\n\nTrack the parcel with the code sent by email.\n",
    "account": "# Account\n\n## Password\n\nReset your password from the login page.\n\n"
               "## Email\n\nChange the email address in settings.\n",
    "warranty": "# Warranty\n\nProducts carry a one year warranty against defects.\n",
}

QUERIES = [
    {"id": "q1", "query": "refund within thirty days", "relevantIds": ["refunds"], "type": "exact",
     "severity": "high"},
    {"id": "q2", "query": "track parcel code", "relevantIds": ["shipping"], "type": "exact", "severity": "low"},
    # shares track/parcel/code/email with the shipping tracking section, only email with the account:
    # shipping comes first (a false positive), the account second (RR 1/2).
    {"id": "q3", "query": "track parcel code email", "relevantIds": ["account"], "type": "paraphrase",
     "severity": "high"},
    {"id": "q4", "query": "warranty defects one year", "relevantIds": ["warranty"], "type": "typo",
     "severity": "high"},
    {"id": "q5", "query": "reset password login", "relevantIds": ["account"], "type": "paraphrase",
     "severity": "low"},
    {"id": "q6", "query": "opening hours physical store", "relevantIds": [], "type": "unanswerable",
     "severity": "medium"},
]


class FakeEncoder:
    """Bag of words hashed into 64 dimensions (md5, so the same on every run), L2-normalised."""

    model_id = FAKE_MODEL
    dim = 64
    query_prefix = ""
    document_prefix = ""
    weights_sha256 = hashlib.sha256(b"fake-bow-64").hexdigest()

    def __init__(self):
        self.documents_encoded = 0

    def provenance(self) -> dict:
        return {"model_id": self.model_id, "origin": "test", "dim": self.dim, "weights_sha256": self.weights_sha256}

    def encode(self, texts, *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out

    def encode_documents(self, texts, **kw) -> np.ndarray:
        self.documents_encoded += len(texts)
        return self.encode(texts, **kw)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


@pytest.fixture()
def corpus(tmp_path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    evaluation = tmp_path / "evaluation.json"
    evaluation.write_text(json.dumps(QUERIES, indent=1), encoding="utf-8")
    return docs, evaluation


@pytest.fixture()
def cache(tmp_path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "embeddings")


def run(corpus, cache, encoder=None, echo=None, **cfg) -> dict:
    docs_path, eval_path = corpus
    docs = load_documents(docs_path)
    queries = load_evaluation(eval_path, docs)
    config = EvalConfig(**{"model": FAKE_MODEL, "k": 5, **cfg})
    return run_evaluation(docs, queries, config, encoder=encoder or FakeEncoder(), cache=cache,
                          documents_path=docs_path, evaluation_path=eval_path, echo=echo)


def rows(record) -> dict[str, dict]:
    return {r["id"]: r for r in record["per_query"]}


# -- the run ----------------------------------------------------------------------------------

def test_hits_and_reciprocal_ranks_by_hand(corpus, cache):
    record = run(corpus, cache)
    r = rows(record)
    assert [r[q]["hit@1"] for q in ("q1", "q2", "q3", "q4", "q5")] == [True, True, False, True, True]
    assert [r[q]["rr"] for q in ("q1", "q2", "q3", "q4", "q5")] == [1.0, 1.0, 0.5, 1.0, 1.0]
    assert r["q3"]["hit@3"] is True and r["q3"]["hit@5"] is True
    assert [d["id"] for d in r["q3"]["returned"][:2]] == ["shipping", "account"]
    assert r["q3"]["false_positive"] == "shipping"
    assert r["q3"]["top_segment"] == "shipping#0001"  # the Tracking section
    assert r["q1"]["false_positive"] == "" and r["q1"]["top_segment"] == "refunds#0000"
    # every document returned once, best chunk's score, in score order, at most k
    for row in record["per_query"]:
        ids = [d["id"] for d in row["returned"]]
        scores = [d["score"] for d in row["returned"]]
        assert len(ids) == len(set(ids)) == 4
        assert scores == sorted(scores, reverse=True)
        assert row["top_score"] == scores[0]


def test_summary_counts_only_answerable_queries(corpus, cache):
    record = run(corpus, cache)
    s = record["summary"]
    assert (s["n_queries"], s["n_answerable"], s["n_unanswerable"]) == (6, 5, 1)
    assert s["top1"]["value"] == pytest.approx(0.8)
    assert s["top3"]["value"] == s["top5"]["value"] == 1.0
    assert s["mrr"]["value"] == pytest.approx(0.9)
    low, high = s["top1"]["ci95"]
    assert 0 <= low <= 0.8 <= high <= 1
    assert run(corpus, cache)["summary"]["top1"]["ci95"] == [low, high]  # fixed seed
    assert s["by_type"]["exact"]["top1"]["value"] == 1.0
    assert s["by_type"]["paraphrase"]["top1"]["value"] == 0.5
    assert s["by_type"]["paraphrase"]["mrr"]["value"] == pytest.approx(0.75)
    assert s["by_type"]["unanswerable"]["n_answerable"] == 0 and s["by_type"]["unanswerable"]["top1"] is None
    assert s["by_severity"]["high"]["n_answerable"] == 3
    assert s["by_severity"]["high"]["top1"]["value"] == pytest.approx(2 / 3)


def test_unanswerable_query_keeps_its_top_score_and_false_positive(corpus, cache):
    record = run(corpus, cache)
    q6 = rows(record)["q6"]
    assert q6["answerable"] is False and q6["expected"] == []
    assert q6["hit@1"] is None and q6["rr"] is None
    assert q6["false_positive"] == q6["returned"][0]["id"]
    assert record["summary"]["unanswerable_top_scores"] == [
        {"id": "q6", "top_score": q6["top_score"], "top_doc": q6["returned"][0]["id"]}]


def test_rank_beyond_k_scores_zero_and_hits_beyond_k_are_undefined(corpus, cache):
    record = run(corpus, cache, k=1)
    q3 = rows(record)["q3"]
    assert q3["rr"] == 0.0 and q3["hit@1"] is False and q3["hit@3"] is None
    assert len(q3["returned"]) == 1
    assert record["summary"]["top3"] is None and record["summary"]["mrr"]["value"] == pytest.approx(0.8)


def test_embedding_cache_hits_on_the_second_run(corpus, cache):
    lines = []
    first = run(corpus, cache, echo=lines.append)
    n = first["n_chunks"]
    assert first["cache"] == {"hits": 0, "misses": n}
    encoder = FakeEncoder()
    second = run(corpus, cache, encoder=encoder, echo=lines.append)
    assert second["cache"] == {"hits": n, "misses": 0} and encoder.documents_encoded == 0
    assert any(f"{n} hits, 0 misses" in line for line in lines)
    assert second["per_query"] == first["per_query"]


def test_record_provenance(corpus, cache):
    docs_path, eval_path = corpus
    record = run(corpus, cache, label="baseline")
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", record["run_id"])
    assert record["config"] == {"segmentation": "section", "prefix_title": True, "method": "dense",
                                "model": FAKE_MODEL, "engine": "memory", "analyzer": None, "k": 5,
                                "chunk_depth": None, "depth": None, "rrf_k": 60, "label": "baseline",
                                "reranker": None, "rerank_n": 20, "rerank_fuse": "replace", "measures": None,
                                "fusion": None, "fusion_in": "python"}
    assert record["segmentation"] == {"spec": "section", "version": "1", "prefix_title": True}
    assert record["model"]["model_id"] == FAKE_MODEL and record["model"]["dim"] == 64
    assert record["engine"]["name"] == "memory"
    assert record["n_chunks"] == 7 and record["n_documents"] == 4
    assert record["documents_path"] == str(docs_path) and record["evaluation_path"] == str(eval_path)
    assert record["evaluation_file_sha256"] == hashlib.sha256(eval_path.read_bytes()).hexdigest()
    assert len(record["evaluation_sha256"]) == len(record["corpus_sha256"]) == 64
    assert set(record["timings"]) >= {"encode_corpus_s", "encode_queries_s", "search_s", "total_s"}
    assert {"commit", "dirty"} <= set(record["git"]) and "python" in record["machine"]
    json.dumps(record, allow_nan=False)
    # the label does not change the run id's hash; a setting does
    assert run(corpus, cache)["run_id"][-8:] == record["run_id"][-8:]
    assert run(corpus, cache, k=3)["run_id"][-8:] != record["run_id"][-8:]


def test_bm25_and_hybrid_on_the_memory_engine(corpus, cache):
    bm25 = run(corpus, cache, method="bm25")
    assert bm25["model"] is None and bm25["cache"] is None and bm25["config"]["model"] is None
    assert bm25["config"]["analyzer"] == "standard"
    r = rows(bm25)
    assert r["q1"]["returned"][0]["id"] == "refunds" and r["q5"]["returned"][0]["id"] == "account"
    assert r["q6"]["returned"] == [] and r["q6"]["top_score"] is None and r["q6"]["false_positive"] == ""
    hybrid = run(corpus, cache, method="hybrid")
    assert hybrid["config"]["model"] == FAKE_MODEL and hybrid["config"]["analyzer"] == "standard"
    assert all(0 < d["score"] <= 2 / 61 for row in hybrid["per_query"] for d in row["returned"])
    assert rows(hybrid)["q1"]["returned"][0]["id"] == "refunds"


def test_config_is_checked_before_anything_runs(corpus, cache):
    for bad, message in [({"method": "sparse"}, "unknown method"),
                         ({"engine": "elastic"}, "unknown engine"),
                         ({"segmentation": "sentences"}, "unknown segmentation spec"),
                         ({"k": 0}, "k must be at least 1"),
                         ({"k": 20, "chunk_depth": 10}, "chunk_depth"),
                         ({"method": "bm25", "analyzer": "portuguese"}, "needs --engine arcadedb"),
                         ({"method": "bm25", "analyzer": "klingon"}, "unknown analyzer"),
                         ({"model": "other/model"}, "the encoder given is")]:
        with pytest.raises(GabaritoError, match=message):
            run(corpus, cache, **bad)
    # an analyzer is ignored (and recorded as None) where BM25 is not used
    assert EvalConfig(analyzer="portuguese").effective().analyzer is None


# -- writing ----------------------------------------------------------------------------------

def test_write_run_writes_csv_json_and_log(corpus, cache, tmp_path):
    record = run(corpus, cache)
    log = tmp_path / "runs" / "log.jsonl"
    paths = write_run(record, tmp_path / "runs" / record["run_id"], log)
    with open(paths["csv"], encoding="utf-8-sig", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert tuple(table[0]) == CSV_COLUMNS
    assert len(table) == len(QUERIES)
    q3 = next(row for row in table if row["id"] == "q3")
    assert q3["expected"] == "account" and q3["hit@1"] == "0" and q3["hit@3"] == "1" and q3["rr"] == "0.5000"
    assert q3["false_positive"] == "shipping"
    assert re.fullmatch(r"shipping \([0-9.]+\); account \([0-9.]+\)(; [a-z]+ \([0-9.]+\))*", q3["returned"])
    q6 = next(row for row in table if row["id"] == "q6")
    assert q6["answerable"] == "0" and q6["hit@1"] == "" and q6["rr"] == "" and q6["top_score"] != ""
    assert json.loads(paths["json"].read_text(encoding="utf-8")) == json.loads(json.dumps(record))
    # the ranked lists and judgments as TREC files, every file recorded in the folder's manifest
    from gabarito.core.runs import Qrels, Run
    from gabarito.study.integrity import MANIFEST, read_manifest, state

    assert set(read_manifest(paths["json"].parent / MANIFEST)) == {"results.csv", "run.json", "run.trec", "qrels.trec"}
    assert all(state(paths[name]) is None for name in ("csv", "json", "run", "qrels"))
    ranked = Run.from_trec(paths["run"])
    assert [ranked.ids(r["id"])[:len(r["returned"])] for r in record["per_query"]] == [
        [x["id"] for x in r["returned"]] for r in record["per_query"]]
    assert Qrels.from_trec(paths["qrels"]) == {r["id"]: {d: 1 for d in r["expected"]} for r in record["per_query"]
                                                if r["expected"]}
    assert paths["run"].read_text().split("\n")[0].endswith(record["run_id"])
    assert [json.loads(line)["run_id"] for line in log.read_text().splitlines()] == [record["run_id"]]
    with pytest.raises(GabaritoError, match="already holds"):
        write_run(record, paths["csv"].parent, log)
    assert len(log.read_text().splitlines()) == 1


def test_a_failed_write_leaves_nothing_behind(corpus, cache, tmp_path, monkeypatch):
    log = tmp_path / "runs" / "log.jsonl"
    record = run(corpus, cache)
    write_run(record, tmp_path / "runs" / "first", log)
    before = log.read_bytes()

    # fails while rendering, after the CSV was rendered: a value JSON cannot hold
    broken = copy.deepcopy(record)
    broken["summary"]["bad"] = float("nan")
    with pytest.raises(GabaritoError, match="cannot be saved"):
        write_run(broken, tmp_path / "runs" / "second", log)
    assert not (tmp_path / "runs" / "second").exists()
    assert log.read_bytes() == before

    # fails at the very last step (the log), after the run folder was put in place
    def boom(path, rec):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runlog, "append_jsonl", boom)
    with pytest.raises(GabaritoError, match="No space left"):
        write_run(record, tmp_path / "runs" / "third", log)
    assert not (tmp_path / "runs" / "third").exists()
    assert log.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["first", "log.jsonl"]  # no temp left


def test_unique_run_id(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"run_id": "20260101-000000-abcdef12"}) + "\n")
    record = {"run_id": "20260101-000000-abcdef12"}
    assert ev.unique_run_id(record, log, tmp_path) == "20260101-000000-abcdef12-2"
    assert (tmp_path / "20260101-000000-abcdef12-2").is_dir()  # reserved: no other process can take it
    assert ev.unique_run_id({"run_id": "20260101-000000-abcdef12"}, log, tmp_path).endswith("-3")


# -- compare ----------------------------------------------------------------------------------

def improved(record: dict, run_id: str) -> dict:
    """A copy of ``record`` in which q3 found the account first (RR 1/2 -> 1, hit@1 0 -> 1)."""
    other = copy.deepcopy(record)
    other["run_id"] = run_id
    q3 = rows(other)["q3"]
    q3["returned"] = [q3["returned"][1], q3["returned"][0], *q3["returned"][2:]]
    q3.update({"hit@1": True, "rr": 1.0, "false_positive": ""})
    return other


def untied(warnings) -> list[str]:
    """The warnings beside the one for tied scores (the fake model's lists tie where no word is shared)."""
    return [w for w in warnings if "equal scores" not in w]


def test_compare_counts_wins_losses_and_flips(corpus, cache):
    base = run(corpus, cache)
    base["run_id"] = "A"
    other = improved(base, "B")
    other["config"]["segmentation"] = "paragraph"
    q1 = rows(other)["q1"]  # and q1 got worse: refunds at rank 2
    q1["returned"] = [q1["returned"][1], q1["returned"][0], *q1["returned"][2:]]
    result = compare_runs([base, other], "RR@5")
    pair = result["pairs"][0]
    assert pair["changed"] == ["segmentation"] and untied(result["warnings"]) == []
    rr = pair["tests"]["RR@5"]
    assert (rr["wins"], rr["losses"], rr["ties"]) == (1, 1, 3)
    assert rr["mean_diff"] == pytest.approx(0.0) and rr["p_sign"] == 1.0
    hit = pair["tests"]["hit@1"]
    assert (hit["wins"], hit["losses"], hit["ties"]) == (1, 1, 3)
    assert [(f["id"], f["change"]) for f in pair["flipped"]] == [("q1", "lost"), ("q3", "gained")]
    assert pair["flipped"][1]["top_a"] == "shipping" and pair["flipped"][1]["top_b"] == "account"
    assert pair["n"] == 5  # the unanswerable query is not compared
    assert [r["measure"] for r in result["runs"]] == [pytest.approx(0.9), pytest.approx(0.9)]
    assert measure_values(other, "hit@1") == {"q1": 0.0, "q2": 1.0, "q3": 1.0, "q4": 1.0, "q5": 1.0}
    with pytest.raises(GabaritoError, match="kept only the top 5"):
        compare_runs([base, other], "RR@10")


@pytest.mark.parametrize("name", ["RR@5", "mrr@5", " HIT@1 ", "hit@3", "nDCG@5", "RR", "RR@x", "P@1", "rr@0"])
def test_compare_parses_measure_names_as_measure_does(corpus, cache, name):
    """compare reads a measure name through gabarito.core.measures.Measure (loosely: any case,
    MRR@n is RR@n); a record's rows give RR@n and hit@n, any other measure needs the run's ranked
    lists (run.trec), which an in-memory record does not have."""
    from gabarito.core.measures import Measure

    base = run(corpus, cache)
    base["run_id"] = "A"
    other = improved(base, "B")
    q1 = rows(other)["q1"]  # a loss for the win on q3: the summary's top-1 still holds
    q1["returned"] = [q1["returned"][1], q1["returned"][0], *q1["returned"][2:]]
    try:
        parsed = Measure.parse(name, loose=True)
    except GabaritoError:
        parsed = None
    if parsed is None:
        with pytest.raises(GabaritoError, match=re.escape(f"unknown measure {name!r}")):
            compare_runs([base, other], name)
        return
    if parsed.cutoff is None:  # named at the lists' depth (RR -> RR@100): deeper than the rows' k
        with pytest.raises(GabaritoError, match=re.escape(f"run A kept only the top 5 documents, so it has no "
                                                          f"{parsed}@100")):
            compare_runs([base, other], name)
        return
    if parsed.kind not in ("RR", "hit"):
        with pytest.raises(GabaritoError, match=re.escape(f"run A has no ranked lists (run.trec, qrels.trec "
                                                          f"beside its run.json), so it has no {parsed}")):
            compare_runs([base, other], name)
        return
    result = compare_runs([base, other], name)
    assert result["measure"] == str(parsed) and str(parsed) in result["pairs"][0]["tests"]
    assert result["pairs"][0]["tests"][str(parsed)] == compare_runs([base, other], str(parsed))["pairs"][0]["tests"][str(parsed)]


def test_compare_refuses_different_gold(corpus, cache):
    base = run(corpus, cache)
    other = improved(base, "B")
    other["evaluation_sha256"] = "0" * 64
    with pytest.raises(GabaritoError, match="different gold"):
        compare_runs([base, other])


def test_compare_warns_when_two_settings_changed(corpus, cache):
    base = run(corpus, cache)
    other = run(corpus, cache, segmentation="paragraph", k=4)
    assert config_differences(base, other) == ["segmentation", "k"]
    result = compare_runs([base, other], "RR@3")
    assert len(untied(result["warnings"])) == 1
    assert "2 settings (segmentation, k)" in untied(result["warnings"])[0]
    # a setting one run does not use is not a difference: dense vs bm25 changes only the method
    bm25 = run(corpus, cache, method="bm25")
    assert config_differences(base, bm25) == ["method"]


def test_compare_names_a_model_setting_changed_under_the_same_weights(corpus, cache):
    """Two runs differing only in what the model does to a text (its fingerprint: pooling, ...)."""
    base = run(corpus, cache)
    assert base["model"]["fingerprint"]
    other = json.loads(json.dumps(base))
    other["model"]["fingerprint"] = "f" * 64
    assert config_differences(base, other) == ["model_settings"]
    other["model"]["settings"] = {"modules": [{"type": "Pooling", "settings": {"pooling_mode_cls_token": True}}]}
    base = {**base, "model": {**base["model"], "settings": {
        "modules": [{"type": "Pooling", "settings": {"pooling_mode_cls_token": False}}]}}}
    assert setting_details(base, other) == ["modules[0].settings.pooling_mode_cls_token: False -> True"]
    # another model id implies other weights and another fingerprint: only "model" is named
    other["config"]["model"] = "another/model"
    other["model"]["weights_sha256"] = "e" * 64
    assert config_differences(base, other) == ["model"]
    # a record from before the fingerprint was kept: nothing to compare, nothing claimed
    del other["model"]["fingerprint"]
    other["config"]["model"] = base["config"]["model"]
    assert config_differences(base, other) == []


def test_load_runs_by_id_and_by_path(corpus, cache, tmp_path):
    log = tmp_path / "runs" / "log.jsonl"
    a, b = run(corpus, cache), run(corpus, cache, method="bm25")
    b["run_id"] += "-b"
    pa = write_run(a, tmp_path / "runs" / a["run_id"], log)
    write_run(b, tmp_path / "runs" / b["run_id"], log)
    loaded = load_runs([a["run_id"], str(tmp_path / "runs" / b["run_id"] / "run.json"), str(pa["json"].parent)], log)
    assert [r["run_id"] for r in loaded] == [a["run_id"], b["run_id"], a["run_id"]]
    with pytest.raises(GabaritoError, match="no run 'nope'"):
        load_runs(["nope"], log)


# -- the command, with the fake encoder in place of the model --------------------------------------

@pytest.fixture()
def fake_model(monkeypatch, tmp_path):
    monkeypatch.setattr(evrun, "load_encoder", lambda model_id: FakeEncoder())
    monkeypatch.setattr("gabarito.retrieval.models.check_model_id", lambda model_id, **_kw: None)  # no such id
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))


def test_cli_evaluate_and_compare(corpus, fake_model, tmp_path, capsys):
    docs, evaluation = corpus
    log = tmp_path / "runs" / "log.jsonl"
    common = ["evaluate", "--documents", str(docs), "--evaluation", str(evaluation), "--model", FAKE_MODEL,
              "--log", str(log), "--k", "5"]
    assert main(common + ["--label", "dense"]) == 0
    assert main(common + ["--method", "bm25"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "top-1 accuracy   0.800" in out and "embedding cache: 0 hits, 7 misses" in captured.err
    ids = [json.loads(line)["run_id"] for line in log.read_text().splitlines()]
    assert len(ids) == 2 and all((log.parent / i / "results.csv").is_file() for i in ids)
    assert main(["compare", *ids, "--log", str(log), "--measure", "RR@5"]) == 0
    captured = capsys.readouterr()
    assert "RR@5" in captured.out and "better on" in captured.out and untied(captured.err.splitlines()) == []
    assert main(["compare", *ids, "--log", str(log), "--measure", "hit@1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][0]["changed"] == ["method"]


def test_cli_bad_evaluation_exits_2_and_writes_nothing(corpus, fake_model, tmp_path, capsys):
    docs, _ = corpus
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"query": "x", "relevantIds": ["missing-doc"]}]), encoding="utf-8")
    log = tmp_path / "runs" / "log.jsonl"
    code = main(["evaluate", "--documents", str(docs), "--evaluation", str(bad), "--log", str(log)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("gabarito: error: ") and err.count("\n") == 1 and "missing-doc" in err
    assert not (tmp_path / "runs").exists()
    assert main(["evaluate", "--documents", str(docs), "--evaluation", str(bad), "--method", "bm25",
                 "--analyzer", "portuguese", "--log", str(log)]) == 2
    assert "needs --engine arcadedb" in capsys.readouterr().err
    assert main(["compare", "nope", "--log", str(log)]) == 2


class ReversingReader:
    """A second reader that prefers whatever the first stage put last (plumbing, not quality)."""

    name = "reverse"

    def __init__(self):
        self.seen = []

    def score(self, query, texts):
        import numpy as np

        self.seen.append(len(texts))
        return np.arange(len(texts), dtype=float)

    def provenance(self):
        return {"id": "reverse", "origin": "test", "kind": "fake"}


def test_rerank_option_reorders_only_the_first_n_chunks(corpus, cache):
    docs_path, eval_path = corpus
    docs = load_documents(docs_path)
    queries = load_evaluation(eval_path, docs)
    base = run(corpus, cache)
    reader = ReversingReader()
    cfg = EvalConfig(model=FAKE_MODEL, k=5, reranker="reverse", rerank_n=2)
    record = run_evaluation(docs, queries, cfg, encoder=FakeEncoder(), cache=cache, echo=None, reranker=reader)
    assert set(reader.seen) == {2} and record["reranker"]["id"] == "reverse"
    assert record["config"]["rerank_n"] == 2 and "rerank_s" in record["timings"]
    for before, after in zip(base["per_query"], record["per_query"]):
        b = [d["segment"] for d in before["returned"]]
        a = [d["segment"] for d in after["returned"]]
        scores = [d["score"] for d in after["returned"]]
        assert scores == sorted(scores, reverse=True) and all(s == s and abs(s) < 1e9 for s in scores)
        if len(b) >= 1:
            assert a[0] != b[0]  # the old second chunk is read first now


def test_unloadable_reranker_is_a_one_line_error(corpus, cache):
    with pytest.raises(GabaritoError) as err:
        run(corpus, cache, reranker="/nonexistent/cross-encoder")
    assert "cannot load reranker" in str(err.value) and "\n" not in str(err.value)


def test_rerank_fuse_convex_weights_run_from_the_first_stage_to_the_reader(corpus, cache):
    """convex:0 keeps the first stage's order of the top N, convex:1 is the reader's order
    (the same as replacing), and the setting is recorded and changes the run's id."""
    docs_path, eval_path = corpus
    docs = load_documents(docs_path)
    queries = load_evaluation(eval_path, docs)

    def order(fuse: str) -> tuple[dict, list]:
        cfg = EvalConfig(model=FAKE_MODEL, k=5, reranker="reverse", rerank_n=3, rerank_fuse=fuse)
        record = run_evaluation(docs, queries, cfg, encoder=FakeEncoder(), cache=cache, echo=None,
                                reranker=ReversingReader())
        return record, [[d["segment"] for d in r["returned"]] for r in record["per_query"]]

    base = [[d["segment"] for d in r["returned"]] for r in run(corpus, cache)["per_query"]]
    (_, replaced), (first, kept), (_, reader) = order("replace"), order("convex:0"), order("convex:1")
    assert kept == base and reader == replaced and replaced != base
    rrf, _ = order("rrf")
    assert first["config"]["rerank_fuse"] == "convex:0" and rrf["config"]["rerank_fuse"] == "rrf"
    assert first["run_id"].split("-")[-1] != rrf["run_id"].split("-")[-1]


def test_rerank_fuse_without_a_reader_or_with_a_bad_weight_is_refused():
    with pytest.raises(GabaritoError, match="needs a reranker"):
        EvalConfig(rerank_fuse="rrf").effective()
    with pytest.raises(GabaritoError, match="within"):
        EvalConfig(reranker="splade", rerank_fuse="convex:2").effective()
    assert EvalConfig(reranker="splade", rerank_fuse=" Convex:0.30 ").effective().rerank_fuse == "convex:0.3"
    assert EvalConfig().effective().rerank_fuse == "replace"
