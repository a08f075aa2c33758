"""`python -m gabarito.cli pool | judge | judgments import`, from run folders to scoring against the qrels."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judging_fixtures import RUNS, write_run
from gabarito.judging.pool import pool_pairs, read_pool

ROOT = Path(__file__).resolve().parents[2]


def gabarito(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=300)


def run_folder(tmp_path, collection, name) -> Path:
    """A folder as `gabarito evaluate` leaves it: run.json naming its inputs, a TREC run, the qrels."""
    folder = tmp_path / name
    folder.mkdir()
    write_run(folder / "run.trec", name, RUNS[name])
    (folder / "qrels.trec").write_text("qa 0 d1 1\nqb 0 d8 1\n", encoding="utf-8")
    (folder / "run.json").write_text(json.dumps({"documents_path": str(collection["documents"]),
                                                 "evaluation_path": str(collection["evaluation"])}), encoding="utf-8")
    return folder


def grades_file(path, pool_path, assessor, grade_of) -> Path:
    pool, sha = read_pool(pool_path)
    path.write_text(json.dumps({"schema": "gabarito.grades/1", "pool_sha256": sha, "assessor": assessor,
                                "grades": [{"pair": p, "question": q, "doc": d, "grade": grade_of(q, d)}
                                           for p, q, d in pool_pairs(pool)]}), encoding="utf-8")
    return path


def test_pool_judge_import_from_run_folders(collection, tmp_path):
    runs = [run_folder(tmp_path, collection, name) for name in RUNS]
    pool = tmp_path / "pool.json"
    done = gabarito("pool", *runs, "--depth", "2", "--known", collection["evaluation"], "--seed", "5", "--out", pool)
    assert done.returncode == 0, done.stderr
    assert "frozen in" in done.stdout and (tmp_path / "pool.lock.json").exists()
    again = gabarito("pool", *runs, "--seed", "5", "--out", pool)
    assert again.returncode == 2 and "never rewritten" in again.stderr and again.stderr.count("\n") == 1
    page = tmp_path / "ana.html"
    done = gabarito("judge", pool, "--assessor", "Ana", "--out", page)
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in html and read_pool(pool)[1] in html
    assert not any(name in html for name in RUNS)
    answers = {("qa", "d1"): 2, ("qa", "d2"): 1, ("qb", "d8"): 2, ("qb", "d5"): 1}
    a = grades_file(tmp_path / "a.json", pool, "Ana", lambda q, d: answers.get((q, d), 0))
    b = grades_file(tmp_path / "b.json", pool, "Bruno", lambda q, d: 1 if (q, d) == ("qa", "d2") else 0
                    if (q, d) == ("qb", "d5") else answers.get((q, d), 0))
    out = tmp_path / "judged"
    done = gabarito("judgments", "import", a, b, "--pool", pool, "--out", out, "--resamples", "200")
    assert done.returncode == 0, done.stderr
    assert "Cohen's kappa unweighted" in done.stdout and "1 of" in done.stdout and "gabarito judge" in done.stdout
    adj_pool = out / "adjudication_pool.json"
    assert [d for _, _, d in pool_pairs(read_pool(adj_pool)[0])] == ["d5"]
    assert gabarito("judge", adj_pool, "--assessor", "Carla", "--out", tmp_path / "carla.html").returncode == 0
    c = grades_file(tmp_path / "c.json", adj_pool, "Carla", lambda q, d: 1)
    done = gabarito("judgments", "import", a, b, "--pool", pool, "--out", out, "--adjudication", c,
                    "--resamples", "200")
    assert done.returncode == 0, done.stderr
    qrels = (out / "qrels.trec").read_text(encoding="utf-8").split("\n")
    assert "qb 0 d5 1" in qrels and "qa 0 d1 2" in qrels and "qa 0 d3 0" in qrels
    # scored against the graded judgments by gabarito evaluate (nDCG uses the grades)
    ev = tmp_path / "ev"
    done = gabarito("evaluate", "--documents", collection["documents"], "--evaluation", out / "evaluation.json",
                    "--method", "bm25", "--engine", "memory", "--measures", "nDCG@10", "--out", ev,
                    "--log", tmp_path / "log.jsonl")
    assert done.returncode == 0, done.stderr
    record = json.loads((ev / "run.json").read_text(encoding="utf-8"))
    assert "nDCG@10" in record["measures"]


@pytest.mark.parametrize("case", ["bad_grade", "other_pool", "no_inputs", "recorded_missing"])
def test_errors_are_one_line_with_status_2(collection, tmp_path, case):
    pool = tmp_path / "pool.json"
    assert gabarito("pool", *collection["runs"], "--documents", collection["documents"], "--evaluation",
                    collection["evaluation"], "--seed", "1", "--out", pool).returncode == 0
    if case == "no_inputs":
        done = gabarito("pool", *collection["runs"], "--seed", "1", "--out", tmp_path / "p2.json")
        assert "--documents" in done.stderr
    elif case == "recorded_missing":
        folder = run_folder(tmp_path, collection, "denso_xyz")
        (folder / "run.json").write_text(json.dumps({"documents_path": "nowhere/docs.json",
                                                     "evaluation_path": str(collection["evaluation"])}))
        done = gabarito("pool", folder, "--seed", "1", "--out", tmp_path / "p2.json")
        assert "run.json" in done.stderr and "pass --documents" in done.stderr
        assert not (tmp_path / "p2.json").exists()
    else:
        bad = grades_file(tmp_path / "a.json", pool, "Ana", lambda q, d: 7 if case == "bad_grade" else 0)
        if case == "other_pool":
            bad.write_text(bad.read_text(encoding="utf-8").replace(read_pool(pool)[1], "f" * 64), encoding="utf-8")
        done = gabarito("judgments", "import", bad, "--pool", pool, "--out", tmp_path / "out")
        assert str(bad) in done.stderr and not (tmp_path / "out").exists()
    assert done.returncode == 2 and done.stderr.startswith("gabarito: error:") and done.stderr.count("\n") == 1


def test_pool_of_runs_on_more_questions_than_the_evaluation_keeps_the_evaluated_ones(collection, tmp_path):
    """Issue 42 item 10: runs holding a question the evaluation lacks pool the evaluated ones, with
    one warning counting what was left out; no question left is one line, nothing written."""
    extra = write_run(tmp_path / "extra.trec", "extra", {**RUNS["denso_xyz"], "qz": ["d7", "d6"], "qy": ["d2"]})
    pool = tmp_path / "pool.json"
    done = gabarito("pool", extra, collection["runs"][1], "--documents", collection["documents"], "--evaluation",
                    collection["evaluation"], "--seed", "3", "--out", pool)
    assert done.returncode == 0, done.stderr
    warning = done.stderr.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("gabarito: warning: 2 question(s)"), done.stderr
    assert "'qy'" in warning[0] and "left out of the pool" in warning[0]
    assert sorted(q["id"] for q in read_pool(pool)[0]["questions"]) == ["qa", "qb"]
    other = write_run(tmp_path / "other.trec", "other", {"qz": ["d1"]})
    none_left = tmp_path / "none.json"
    done = gabarito("pool", other, "--documents", collection["documents"], "--evaluation", collection["evaluation"],
                    "--seed", "3", "--out", none_left)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("gabarito: error: none of the runs' 1 questions") and "Traceback" not in done.stderr
    assert not none_left.exists() and not (tmp_path / "none.lock.json").exists()
