"""``gabarito evaluate`` and ``gabarito compare`` driven as the command itself
(``python -m gabarito.cli``), on the help-center example with BM25 on the memory engine (no model):
the run is a study of one (its summary is the scorer's Report, its folder has a manifest, its ranked
lists and qrels are TREC files that rescore to the summary), and compare refuses an edited run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.core.measures import Measure
from gabarito.core.runs import Qrels, Run
from gabarito.evaluation.rows import METHOD, summarize
from gabarito.measure import stats
from gabarito.measure.report import SCHEMA, Report
from gabarito.measure.score import score_runs
from gabarito.study.integrity import MANIFEST, read_manifest

ROOT = Path(__file__).resolve().parents[2]
HELPCENTER = ROOT / "data" / "helpcenter"
FILES = ("results.csv", "run.json", "run.trec", "qrels.trec", "relatorio.html")


def gabarito(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GABARITO_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Two BM25 runs of the help-center example (section and document segmentation): the log
    and the two run folders."""
    if not (HELPCENTER / "docs").is_dir():
        pytest.skip("no help-center data")
    base = tmp_path_factory.mktemp("evaluate")
    log = base / "runs" / "log.jsonl"
    for extra in ([], ["--segmentation", "document"]):
        proc = gabarito(base, "evaluate", "--documents", str(HELPCENTER / "docs"), "--evaluation",
                        str(HELPCENTER / "evaluation.json"), "--method", "bm25", "--log", str(log), *extra)
        assert proc.returncode == 0, proc.stderr
        assert "run.trec" in proc.stdout and "qrels.trec" in proc.stdout
    ids = [json.loads(line)["run_id"] for line in log.read_text(encoding="utf-8").splitlines()]
    return log, [log.parent / run_id for run_id in ids]


def record(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


def test_the_run_folder_is_recorded_and_its_summary_is_the_scorers_report(runs):
    _log, folders = runs
    for folder in folders:
        assert set(read_manifest(folder / MANIFEST)) == set(FILES)
        rec = record(folder)
        assert rec["trec"] == {"run": "run.trec", "qrels": "qrels.trec", "tag": rec["run_id"]}
        block = rec["report"]
        assert block["schema"] == SCHEMA and block["seed"] == stats.DEFAULT_SEED
        report = Report.from_dict(block)
        assert Report.from_dict(report.to_dict()) == report
        s, k = rec["summary"], rec["config"]["k"]
        assert report.n == s["n_answerable"] and list(report.queries) == [
            r["id"] for r in rec["per_query"] if r["answerable"]]
        pairs = [("top1", "hit@1"), ("top3", "hit@3"), ("top5", "hit@5"), ("mrr", f"RR@{k}")]
        pairs += [(None, m) for m in rec["measures"]]
        for key, measure in pairs:
            cell = s[key] if key else s["measures"][measure]
            assert cell == {"value": report.mean(METHOD, measure), "ci95": list(report.interval(METHOD, measure))}


def test_every_summary_number_is_the_one_evaluate_wrote_before(runs):
    """The summary made through score_runs equals, to the last bit, the one the rows alone give
    (the computation evaluate used before it was a study of one), by type and severity too."""
    _log, folders = runs
    for folder in folders:
        rec = record(folder)
        assert rec["measures"] == ["nDCG@10", "AP@100", "R@100"]  # several answers: the graded ones
        before = summarize(rec["per_query"], rec["config"]["k"], measures=rec["measures"])
        assert before == rec["summary"]


def test_the_trec_files_rescore_to_the_summary(runs):
    _log, folders = runs
    for folder in folders:
        rec = record(folder)
        report = Report.from_dict(rec["report"])
        run, qrels = Run.from_trec(folder / "run.trec"), Qrels.from_trec(folder / "qrels.trec")
        assert set(qrels.judged()) == set(report.queries)
        depth = max(len(pairs) for pairs in run.values())
        assert depth > rec["config"]["k"]  # the whole ranked lists, not only the top k
        again = score_runs({METHOD: run}, qrels, report.measures, order=report.queries)
        for measure in report.measures:
            assert again.mean(METHOD, measure) == pytest.approx(report.mean(METHOD, measure), abs=1e-12)
            assert again.values(METHOD, measure) == report.values(METHOD, measure)
        ir_measures = pytest.importorskip("ir_measures")
        names = {m: ir_measures.parse_measure(Measure(m).ir_measures_name) for m in report.measures}
        outside = ir_measures.calc_aggregate(list(names.values()), ir_measures.read_trec_qrels(str(folder / "qrels.trec")),
                                             ir_measures.read_trec_run(str(folder / "run.trec")))
        for measure, name in names.items():
            assert outside[name] == pytest.approx(report.mean(METHOD, measure), abs=1e-12), measure


def _old_line(measure: str, a: list[float], b: list[float]) -> str:
    """The line compare printed before it scored through score_runs: compare_methods of the pair."""
    row = stats.compare_methods({"b": b, "a": a})[0]
    return (f"  {measure:<7} {row['mean_b']:.3f} -> {row['mean_a']:.3f} ({row['mean_diff']:+.3f}); "
            f"better on {row['wins']}, worse on {row['losses']}, tied on {row['ties']}; "
            f"sign test p={row['p_sign']:.3g}, randomization p={row['p_randomization']:.3g}")


def test_compare_prints_the_numbers_it_printed_before(runs):
    log, folders = runs
    a, b = (record(f) for f in folders)
    for measure in ("RR@10", "hit@1", "hit@3"):
        proc = gabarito(log.parent.parent, "compare", str(folders[0]), str(folders[1]), "--measure", measure)
        assert proc.returncode == 0, proc.stderr
        k = a["config"]["k"]
        for m in dict.fromkeys([measure, "hit@1"]):
            key = "rr" if m == f"RR@{k}" else None
            values = []
            for rec in (a, b):
                rows = [r for r in rec["per_query"] if r["answerable"]]
                if key:
                    values.append([r["rr"] for r in rows])
                else:
                    values.append([float(r[m]) for r in rows])
            # the same numbers, then Holm's p over the measures x pairs tested (here the measure and hit@1)
            family = len(dict.fromkeys([measure, "hit@1"]))
            assert any(line.startswith(_old_line(m, *values) + ", Holm p=") and line.endswith(f"(over {family} tests)")
                       for line in proc.stdout.splitlines())
        assert "changed: segmentation" in proc.stdout
    by_id = gabarito(log.parent.parent, "compare", a["run_id"], b["run_id"], "--log", str(log))
    assert by_id.returncode == 0 and by_id.stdout == gabarito(log.parent.parent, "compare", str(folders[0]),
                                                             str(folders[1])).stdout


def test_compare_on_a_measure_from_the_trec_files(runs):
    log, folders = runs
    proc = gabarito(log.parent.parent, "compare", *map(str, folders), "--measure", "ndcg@10", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    test = result["pairs"][0]["tests"]["nDCG@10"]
    reports = [Report.from_dict(record(f)["report"]) for f in folders]
    assert test["mean_a"] == pytest.approx(reports[0].mean(METHOD, "nDCG@10"), abs=1e-12)
    assert test["mean_b"] == pytest.approx(reports[1].mean(METHOD, "nDCG@10"), abs=1e-12)
    lists = {f"#{i}": Run.from_trec(f / "run.trec") for i, f in enumerate(folders, start=1)}
    qrels = Qrels.from_trec(folders[0] / "qrels.trec")
    order = [q for q in reports[0].queries]
    again = score_runs({"#2": lists["#2"], "#1": lists["#1"]}, qrels, ["nDCG@10", "hit@1"], order=order)
    c = again.compare("#2", "#1", "nDCG@10")
    assert (test["mean_diff"], test["p_randomization"], test["wins"], test["losses"]) == (c.diff, c.p, c.wins, c.losses)
    text = gabarito(log.parent.parent, "compare", *map(str, folders), "--measure", "R@100")
    assert text.returncode == 0 and "  R@100   1.000 -> 1.000 (+0.000)" in text.stdout


def test_compare_refuses_an_edited_run_in_one_line(runs, tmp_path):
    _log, folders = runs
    edited = tmp_path / "edited"
    shutil.copytree(folders[1], edited)
    rec = record(edited)
    rec["summary"]["mrr"]["value"] = rec["summary"]["mrr"]["value"] + 0.4  # the hand edit of the issue
    (edited / "run.json").write_text(json.dumps(rec, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    proc = gabarito(tmp_path, "compare", str(folders[0]), str(edited))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("gabarito: error: ")
    assert str(edited / "run.json") in proc.stderr and "modified after its run" in proc.stderr

    ranked = tmp_path / "ranked"
    shutil.copytree(folders[1], ranked)
    lines = (ranked / "run.trec").read_text(encoding="utf-8").splitlines(keepends=True)
    (ranked / "run.trec").write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")
    assert gabarito(tmp_path, "compare", str(folders[0]), str(ranked), "--measure", "RR@10").returncode == 0  # rows
    proc = gabarito(tmp_path, "compare", str(folders[0]), str(ranked), "--measure", "nDCG@10")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and str(ranked / "run.trec") in proc.stderr


def test_a_run_without_ranked_lists_still_compares_on_its_rows(runs, tmp_path, monkeypatch):
    """A run folder written before the TREC files and the manifest, listed as such: RR@n and hit@n
    as before, another measure refused in one line. Not listed, it is refused (issue 39, F8)."""
    _log, folders = runs
    old = tmp_path / "old"
    shutil.copytree(folders[1], old)
    for name in ("run.trec", "qrels.trec", MANIFEST):
        (old / name).unlink()
    rec = record(old)
    del rec["trec"], rec["report"]
    (old / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    proc = gabarito(tmp_path, "compare", str(folders[0]), str(old), "--measure", "hit@1")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and f"has no {MANIFEST}" in proc.stderr
    monkeypatch.setenv("GABARITO_LEGACY_FOLDERS", str(old))  # listed by the user as older than manifests
    assert gabarito(tmp_path, "compare", str(folders[0]), str(old), "--measure", "hit@1").returncode == 0
    proc = gabarito(tmp_path, "compare", str(folders[0]), str(old), "--measure", "nDCG@10")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "has no ranked lists" in proc.stderr
    proc = gabarito(tmp_path, "compare", str(folders[0]), str(old), "--measure", "RR@20")
    assert proc.returncode == 2 and "kept only the top 10 documents" in proc.stderr


def test_a_trec_file_that_would_reorder_documents_is_said_so():
    """Scores equal to 6 decimals come back from run.trec by doc id: the record says so, and compare
    warns when it reads such a file."""
    from gabarito.evaluation.paired import reordered
    from gabarito.evaluation.run import as_written

    kept = Run({"q": [("b", 0.9), ("a", 0.5000004), ("c", 0.5000001)]})
    assert as_written(kept, {"q": ["b", "a", "c"]})
    lost = Run({"q": [("b", 0.5000004), ("a", 0.5000001)]})
    assert lost.ids("q") == ["b", "a"] and not as_written(lost, {"q": ["b", "a"]})
    runs = [{"run_id": "x", "ranked_lists": {"order_as_scored": True}},
            {"run_id": "y", "ranked_lists": {"order_as_scored": False}}, {"run_id": "z"}]
    assert [w.split(":")[0] for w in reordered(runs)] == ["y"]


def test_the_help_center_runs_keep_their_order_in_the_trec_file(runs):
    _log, folders = runs
    for folder in folders:
        assert record(folder)["ranked_lists"]["order_as_scored"] is True


def test_fractional_grades_keep_the_rows_summary():
    """A BEIR score of 0.5 is relevant to the rows' hits but grade 0 to the graded measures: the
    summary then comes from the rows as before, and no report is claimed."""
    from gabarito.evaluation.rows import summary_report

    rows = [{"id": "q1", "answerable": True, "expected": ["a"], "returned": [{"id": "a", "score": 1.0}],
             "type": "t", "severity": "s", "hit@1": True, "hit@3": True, "hit@5": True, "rr": 1.0,
             "measures": {"nDCG@10": None}, "top_score": 1.0},
            {"id": "q2", "answerable": True, "expected": ["b"], "returned": [{"id": "c", "score": 1.0}, {"id": "b", "score": 0.5}],
             "type": "t", "severity": "s", "hit@1": False, "hit@3": True, "hit@5": True, "rr": 0.5,
             "measures": {"nDCG@10": 0.63}, "top_score": 1.0}]
    lists = {"q1": ["a"], "q2": ["c", "b"]}
    graded = {"q1": {"a": 0}, "q2": {"b": 1}}
    assert summary_report(rows, 10, lists, graded, measures=["nDCG@10"]) is None
    s = summarize(rows, 10, measures=["nDCG@10"], lists=lists, judgments=graded)
    assert s == summarize(rows, 10, measures=["nDCG@10"])
    assert s["top1"]["value"] == 0.5 and s["measures"]["nDCG@10"]["value"] == 0.63
    binary = {"q1": {"a": 1}, "q2": {"b": 1}}
    assert summary_report(rows, 10, lists, binary).mean(METHOD, "RR@10") == 0.75
