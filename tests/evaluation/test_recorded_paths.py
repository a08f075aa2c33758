"""``gabarito evaluate`` records its input paths relative to the folder it ran in, or as typed,
never resolved to the machine's absolute folders (issue 43, item 4).

Until 2026-12-07 a run given absolute paths (as the help center's judged runs were) kept them in
``run.json`` and the log: the record named the build machine's folders. Each test starts
``python -m gabarito.cli`` as a user would (BM25 on the memory engine, no model, no network).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability.test_reliability_cli import evaluate as run_evaluate, gabarito, project  # noqa: F401


def evaluate(cwd: Path, documents: str, evaluation: str, out: str) -> dict:
    """Run ``gabarito evaluate`` (BM25, memory engine) in ``cwd``; return the ``run.json`` it wrote under ``out``."""
    done = run_evaluate(cwd, "--engine", "memory", "--out", out, documents=documents, evaluation=evaluation)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((cwd / out / "run.json").read_text(encoding="utf-8"))


def machine_folders(project: Path) -> tuple[str, ...]:
    return tuple({str(project), str(project.resolve())})


def test_relative_paths_are_recorded_as_typed(project):
    record = evaluate(project, "docs", "evaluation.json", "runs/rel")
    assert (record["documents_path"], record["evaluation_path"]) == ("docs", "evaluation.json")
    for written in [*(project / "runs" / "rel").iterdir(), project / "runs" / "log.jsonl"]:
        text = written.read_text(encoding="utf-8-sig")
        assert not any(folder in text for folder in machine_folders(project)), written.name


def test_absolute_paths_inside_the_folder_are_recorded_relative_and_still_found(project):
    record = evaluate(project, str(project / "docs"), str(project.resolve() / "evaluation.json"), "runs/abs")
    assert (record["documents_path"], record["evaluation_path"]) == ("docs", "evaluation.json")
    log = [json.loads(line) for line in (project / "runs" / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["documents_path"], r["evaluation_path"]) for r in log] == [("docs", "evaluation.json")]
    for written in [*(project / "runs" / "abs").iterdir(), project / "runs" / "log.jsonl"]:
        text = written.read_text(encoding="utf-8-sig")
        assert not any(folder in text for folder in machine_folders(project)), written.name
    # the folder is still its run's (manifest), and the paths recorded are found from where the run was made
    done = gabarito("pool", "runs/abs", "--depth", "2", "--seed", "1", "--out", "pool.json", cwd=project)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (project / "pool.json").is_file()


def test_a_path_outside_the_folder_is_kept_as_typed(project):
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    typed = str(project / "docs")
    record = evaluate(elsewhere, typed, "../evaluation.json", "runs/out")
    assert (record["documents_path"], record["evaluation_path"]) == (typed, "../evaluation.json")
