"""``gabarito report --check``: a study rerun cold into a temporary folder, each file compared with
the committed one. A small study (BM25 in memory on six documents, scored with the project's one
scorer) is run, then checked twice from empty caches: every file is reproduced. Then the committed
files are altered the ways a real rerun can differ (a score's last digits, two documents swapped, a
number of the results) and the command says so, per file, with exit status 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito import cli
from gabarito.hashing import sha256_file
from gabarito.study.check import compare_file, compare_folders, compare_json, compare_trec

SCRIPT = '''"""A tiny study for the rerun check."""
import json
from pathlib import Path

from gabarito.measure.score import score_runs
from gabarito.retrieval.memory import BM25
from gabarito.study.runner import study_main

HERE = Path(__file__).resolve().parent


def run(ctx):
    docs = json.loads((HERE / "docs.json").read_text(encoding="utf-8"))
    gold = json.loads((HERE / "gold.json").read_text(encoding="utf-8"))
    with ctx.phase("search"):
        bm25 = BM25({d["id"]: d["text"] for d in docs})
        run_ = {q["id"]: dict(bm25.search(q["query"], 10)) for q in gold}
    qrels = {q["id"]: {d: 1 for d in q["relevantIds"]} for q in gold}
    ctx.write_run("bm25", run_)
    report = score_runs({"bm25": run_}, qrels, ["RR@10", "nDCG@10"], resamples=ctx.args.resamples, seed=ctx.seed)
    return {"provenance": ctx.provenance(corpus={"docs": len(docs)}, model=None, engine={"name": "memory"},
                                         parameters={}), "scores": report.to_dict()}


if __name__ == "__main__":
    study_main(__file__, run)
'''

DOCS = [{"id": f"d{i}", "text": t} for i, t in enumerate([
    "prazo para trocar um produto com defeito", "frete grátis para compras acima de cem reais",
    "como redefinir a senha da conta", "cupom de desconto não funciona no aplicativo",
    "prazo de entrega para o nordeste", "garantia estendida e assistência técnica"], start=1)]
GOLD = [{"id": "q1", "query": "trocar produto com defeito", "relevantIds": ["d1"]},
        {"id": "q2", "query": "frete grátis", "relevantIds": ["d2"]},
        {"id": "q3", "query": "esqueci a senha da conta", "relevantIds": ["d3"]},
        {"id": "q4", "query": "prazo de entrega", "relevantIds": ["d5", "d1"]}]


def _commit(study: Path) -> None:
    """Run the study as its author did: the files it writes are the committed ones."""
    from gabarito.study.runner import run_script
    from gabarito.study.spec import StudySpec

    run_script(StudySpec.load(study / "study.json"), [])


@pytest.fixture()
def study(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "mini"
    d.mkdir()
    (d / "docs.json").write_text(json.dumps(DOCS, ensure_ascii=False), encoding="utf-8")
    (d / "gold.json").write_text(json.dumps(GOLD, ensure_ascii=False), encoding="utf-8")
    (d / "gold.lock.json").write_text(json.dumps({"files": {"gold.json": sha256_file(d / "gold.json")}}))
    (d / "run_mini.py").write_text(SCRIPT, encoding="utf-8")
    (d / "study.json").write_text(json.dumps({"name": "mini", "title": "Mini", "script": "run_mini.py",
                                              "gold": [{"manifest": "gold.lock.json"}], "seed": 7,
                                              "resamples": 200}), encoding="utf-8")
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))
    _commit(d)
    assert (d / "results.json").is_file() and (d / "runs" / "bm25.trec").is_file()
    return d


def _check(study, capsys) -> tuple[int, dict[str, str]]:
    code = cli.main(["report", "--check", str(study)])
    out = capsys.readouterr().out
    verdicts = {}
    for line in out.splitlines():
        path, _, rest = line.partition(": ")
        verdicts[path] = rest
    return code, verdicts


def test_two_cold_reruns_reproduce_every_committed_file(study, capsys):
    for _ in range(2):
        code, verdicts = _check(study, capsys)
        assert code == 0, verdicts
        assert verdicts["mini/runs/bm25.trec"] == "identical"
        # only date, machine and timings can differ (within the same second, not even those)
        assert verdicts["mini/results.json"].startswith(("same numbers", "identical")), verdicts
    assert not (study / "out").exists()  # the rerun went to a temporary folder


def test_a_changed_score_a_swap_and_a_changed_number_are_each_named(study, capsys):
    trec = study / "runs" / "bm25.trec"
    lines = trec.read_text().splitlines()
    q, z, doc, rank, score, tag = lines[0].split()
    lines[0] = " ".join([q, z, doc, rank, f"{float(score) + 1e-6:.6f}", tag])
    trec.write_text("\n".join(lines) + "\n")
    code, verdicts = _check(study, capsys)
    # the run file is recorded by the run that wrote it (issue 39): an edit is named first
    assert code == 1 and verdicts["mini/runs/bm25.trec"].startswith("modified (the committed file no longer "
                                                                     "matches its results.sha256.json")
    assert "against the rerun: same ranks" in verdicts["mini/runs/bm25.trec"]

    i = next(i for i in range(len(lines) - 1) if lines[i].split()[0] == lines[i + 1].split()[0])
    a, b = lines[i].split(), lines[i + 1].split()  # two documents of the same question, swapped
    lines[i] = " ".join([a[0], a[1], b[2], a[3], a[4], a[5]])
    lines[i + 1] = " ".join([b[0], b[1], a[2], b[3], b[4], b[5]])
    trec.write_text("\n".join(lines) + "\n")
    results = json.loads((study / "results.json").read_text())
    results["scores"]["metrics"]["bm25"]["RR@10"] += 0.125
    (study / "results.json").write_text(json.dumps(results))
    code, verdicts = _check(study, capsys)
    assert code == 1
    assert "against the rerun: differs, 2 of " in verdicts["mini/runs/bm25.trec"]
    assert "2 within the top 10" in verdicts["mini/runs/bm25.trec"]
    # edited by hand: the manifest says so first, then what the rerun gave (issue 39, F2)
    assert verdicts["mini/results.json"].startswith("modified (the committed file no longer matches its "
                                                    "results.sha256.json")
    assert "against the rerun: differs, 1 values differ: /scores/metrics/bm25/RR@10" in verdicts["mini/results.json"]


def test_comparisons_by_hand(tmp_path):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("1 Q0 x 1 2.0 t\n1 Q0 y 2 1.0 t\n2 Q0 z 1 1.0 t\n")
    b.write_text("1 Q0 x 1 2.0 u\n1 Q0 y 2 1.0 u\n2 Q0 z 1 1.0 u\n")
    assert compare_trec(a, b)[0] == "identical"  # the run tag is the run's own name
    b.write_text("1 Q0 y 1 2.0 u\n1 Q0 x 2 1.0 u\n2 Q0 z 1 1.0 u\n")
    assert compare_trec(a, b) == ("differs", "2 of 3 lines in 1 of 2 questions; 2 within the top 10")
    ja, jb = tmp_path / "a.json", tmp_path / "b.json"
    ja.write_text(json.dumps({"m": {"mean": 0.5, "query_s": 1.0}, "wall_s": 3, "provenance": {"date": "x"}}))
    jb.write_text(json.dumps({"m": {"mean": 0.5, "query_s": 2.0}, "wall_s": 4, "provenance": {"date": "y"}}))
    timing = (("m", "query_s"),)  # the file's declared volatile paths (gabarito.study.volatile.DECLARED)
    assert compare_json(ja, jb, timing)[0] == "same numbers"
    assert compare_json(ja, jb) == ("differs", "1 values differ: /m/query_s")  # undeclared: compared
    jb.write_text(json.dumps({"m": {"mean": 0.6, "query_s": 2.0}, "wall_s": 4}))
    assert compare_json(ja, jb, timing) == ("differs", "1 values differ: /m/mean")
    jb.write_text(json.dumps({"m": {"mean": 0.5, "new": 1}}))
    assert compare_json(ja, jb, timing) == ("differs", "1 fields only one side has: /m/new")
    rates = lambda v: {"e": {"qps_ratio_to_arcadedb": v, "bm25_over_floor": v, "recall": 0.5, "qps": v},
                       "cache": {"hits": int(v), "misses": 3 - int(v)}}  # a shared cache: other hits, same vectors
    ja.write_text(json.dumps(rates(1.5)))
    jb.write_text(json.dumps(rates(2.5)))
    ratios = tuple(("e", k) for k in ("qps_ratio_to_arcadedb", "bm25_over_floor", "qps"))
    assert compare_json(ja, jb, ratios)[0] == "same numbers"  # timing ratios are measured, never repeated
    jb.write_text(json.dumps({**rates(2.5), "e": {**rates(2.5)["e"], "recall": 0.6}}))
    assert compare_json(ja, jb, ratios) == ("differs", "1 values differ: /e/recall")


def test_a_log_of_run_times_is_named_a_run_log_and_a_log_with_results_is_not(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"date": "x", "wall_s": 3.0, "state": "cold", "phases_s": {"load": 1.0}}\n'
                 '{"date": "y", "wall_s": 1.0, "state": "warm", "phases_s": {"load": 0.5}}\n')
    b.write_text('{"date": "z", "wall_s": 2.5, "state": "cold", "phases_s": {"load": 0.9}}\n')
    assert compare_file(a, b)[0] == "run log"
    b.write_text('{"date": "z", "wall_s": 2.5, "state": "cold", "mean": 0.5}\n')  # a result inside
    assert compare_file(a, b)[0] == "differs"


def test_run_folders_pair_by_configuration_in_the_order_they_ran_and_run_ids_compare_by_configuration(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    record = lambda run_id, mean: json.dumps({"run_id": run_id, "date": run_id[:8], "summary": {"mrr": mean}})
    for root, stamps in ((old, ("20261201-100000", "20261201-100005", "20261201-100009")),
                         (new, ("20261205-090000", "20261205-090003"))):
        for stamp, h in zip(stamps, ("aaaaaaaa", "bbbbbbbb", "aaaaaaaa")):
            (root / "runs" / f"{stamp}-{h}").mkdir(parents=True)
    (old / "runs" / "20261201-100000-aaaaaaaa" / "run.json").write_text(record("20261201-100000-aaaaaaaa", 0.5))
    (new / "runs" / "20261205-090000-aaaaaaaa" / "run.json").write_text(record("20261205-090000-aaaaaaaa", 0.5))
    (old / "runs" / "20261201-100005-bbbbbbbb" / "run.json").write_text(record("20261201-100005-bbbbbbbb", 0.5))
    (new / "runs" / "20261205-090003-bbbbbbbb" / "run.json").write_text(record("20261205-090003-cccccccc", 0.5))
    for root, ids in ((old, ("20261201-100000-aaaaaaaa", "20261201-100005-bbbbbbbb")),
                      (new, ("20261205-090000-aaaaaaaa", "20261205-090003-bbbbbbbb"))):
        (root / "runs" / "log.jsonl").write_text("".join(record(i, 0.5) + "\n" for i in ids))
    got = {c.path: (c.verdict, c.detail) for c in compare_folders(old, new)}
    assert got["runs/20261201-100000-aaaaaaaa/run.json"] == ("same numbers", "only the record of the run differs")
    assert got["runs/20261201-100005-bbbbbbbb/run.json"] == ("differs", "1 values differ: /run_id")  # another configuration
    assert got["runs/log.jsonl"][0] == "same numbers"
    assert got["runs/20261201-100009-aaaaaaaa/"][0] == "missing"  # the committed second run of aaaaaaaa
    assert len(got) == 4


EVALUATE_SCRIPT = '''"""A tiny study that writes gabarito evaluate run folders (one configuration twice)."""
from pathlib import Path

from gabarito.evaluation import EvalConfig, run_evaluation, write_run
from gabarito.evaluation.runlog import unique_run_id
from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.study.runner import study_main

HERE = Path(__file__).resolve().parent


def run(ctx):
    docs = load_documents(HERE / "docs.json")
    queries = load_evaluation(HERE / "gold.json", docs)
    runs, log, ids = ctx.out / "runs", ctx.out / "runs" / "log.jsonl", []
    for k in (3, 5, 3):
        rec = run_evaluation(docs, queries, EvalConfig(method="bm25", model=None, segmentation="document", k=k),
                             echo=None)
        rec["run_id"] = unique_run_id(rec, log, runs)
        write_run(rec, runs / rec["run_id"], log)
        ids.append(rec["run_id"])
    return {"provenance": ctx.provenance(corpus={"docs": len(docs)}, model=None, engine={"name": "memory"},
                                         parameters={}), "runs": ids}


if __name__ == "__main__":
    study_main(__file__, run)
'''


def test_the_command_pairs_evaluate_run_folders_by_configuration_in_the_order_they_ran(study, capsys):
    """Through ``gabarito report --check``: run folders named by another moment pair with the
    committed ones of the same configuration, the second run of a configuration with the second
    (even when one of them got a ``-2`` for running in the same second); a swap inside the
    committed second run is named in that folder, and nowhere else."""
    (study / "run_mini.py").write_text(EVALUATE_SCRIPT, encoding="utf-8")
    for p in (study / "results.json", study / "runs" / "bm25.trec"):
        p.unlink()
    _commit(study)
    committed = json.loads((study / "results.json").read_text())["runs"]
    assert len(committed) == 3 and committed[0][16:24] == committed[2][16:24] != committed[1][16:24]
    code, verdicts = _check(study, capsys)
    assert code == 0, verdicts
    folders = {path.split("/")[2] for path in verdicts if path.count("/") == 3}
    assert folders == set(committed), verdicts  # named as committed, whatever moment the rerun had
    for run_id in committed:
        assert verdicts[f"mini/runs/{run_id}/run.trec"] == "identical"
        # the record of the run (its moment) differs, unless the rerun fell in the same second
        assert verdicts[f"mini/runs/{run_id}/run.json"].startswith(("same numbers", "identical")), verdicts

    trec = study / "runs" / committed[2] / "run.trec"
    lines = trec.read_text().splitlines()
    i = next(i for i in range(len(lines) - 1) if lines[i].split()[0] == lines[i + 1].split()[0])
    a, b = lines[i].split(), lines[i + 1].split()  # two documents of the same question, swapped
    lines[i], lines[i + 1] = " ".join([*a[:2], b[2], *a[3:]]), " ".join([*b[:2], a[2], *b[3:]])
    trec.write_text("\n".join(lines) + "\n")
    from gabarito.study.integrity import record

    record(trec, when="2026-12-07T00:00:00+00:00")  # a run that wrote other ranks, not a hand edit
    code, verdicts = _check(study, capsys)
    assert code == 1
    assert verdicts[f"mini/runs/{committed[2]}/run.trec"].startswith("differs (2 of "), verdicts
    assert verdicts[f"mini/runs/{committed[0]}/run.trec"] == "identical"


READER_SCRIPT = '''"""A tiny study that reads a reader trained by another study."""
from pathlib import Path

from gabarito.hashing import sha256_file
from gabarito.retrieval.rerank.training import trained_reader_folder
from gabarito.study.runner import study_main

HERE = Path(__file__).resolve().parent


def run(ctx):
    folder = trained_reader_folder("trained:npl", HERE / "rerankers.json")
    return {"provenance": ctx.provenance(corpus={}, model=None, engine={"name": "memory"}, parameters={}),
            "reader_weights": sha256_file(folder / "model.safetensors")}


if __name__ == "__main__":
    study_main(__file__, run)
'''


def test_the_cold_rerun_reads_a_reader_trained_by_another_study_from_the_users_cache(study, capsys, tmp_path):
    """The rerun's cache is empty, yet the trained reader (an input) is read from the user's cache,
    by its weights' sha256; when the user's copy has other weights, the rerun stops."""
    (study / "run_mini.py").write_text(READER_SCRIPT, encoding="utf-8")
    (study / "runs" / "bm25.trec").unlink()
    folder = tmp_path / "cache" / "cross-encoders" / "heldout-npl-0123abcd"  # the fixture's cache
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    (study / "rerankers.json").write_text(json.dumps({"folds": {"npl": {"reader": {
        "id": "/elsewhere/heldout-npl-0123abcd", "weights_sha256": sha256_file(folder / "model.safetensors")}}}}))
    _commit(study)
    code, verdicts = _check(study, capsys)
    assert code == 0 and verdicts["mini/results.json"].startswith(("same numbers", "identical")), verdicts
    (folder / "model.safetensors").write_bytes(b"other weights")
    code = cli.main(["report", "--check", str(study)])
    err = capsys.readouterr().err
    assert code == 2
    assert "rerankers.json: trained reader heldout-npl-0123abcd is not in the cache or its weights differ" in err
