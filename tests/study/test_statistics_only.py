"""A study stores its statistics beside what it measured, and ``--statistics-only`` recomputes them
from a results file already written: no search, no training, every other key kept, the file
stamped (when, which commit), an edited file or other gold refused in one line with nothing
written. Driven through ``gabarito study`` itself on the judgments study (its results copied to a
temporary folder) and through the runner on a toy study."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.study.records import write_measurement
from gabarito.study.runner import run_study

sys.path.insert(0, str(Path(__file__).parent))
from toy import toy_study  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
JUDGMENTS = ROOT / "case-studies" / "judgments"
KEY = "acceptable_misses_all_sets"  # studies.judgments.findings.ACCEPTABLE


def _gabarito(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def _copy_without_statistics(out: Path) -> dict:
    committed = json.loads((JUDGMENTS / "results.json").read_text(encoding="utf-8"))
    older = {k: v for k, v in committed.items() if k != KEY}
    out.mkdir()
    write_measurement(out / "results.json", older)  # as a run before the statistics were stored
    return committed


def test_statistics_only_adds_the_stored_statistics_through_the_command(tmp_path):
    out = tmp_path / "judgments"
    committed = _copy_without_statistics(out)
    done = _gabarito("study", "judgments", "--statistics-only", "--out", str(out))
    assert done.returncode == 0, done.stderr
    now = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert now[KEY] == committed[KEY]  # what the committed file holds
    assert {k: v for k, v in now.items() if k not in (KEY, "provenance")} == \
        {k: v for k, v in committed.items() if k not in (KEY, "provenance")}  # nothing else moved
    stamp = now["provenance"]["migrations"][-1]
    assert stamp["what"].startswith("statistics stored from the measured values") and KEY in stamp["what"]
    assert "runs" not in {p.name for p in out.iterdir()}  # no search was run


def test_statistics_only_refuses_an_edited_file_and_writes_nothing(tmp_path):
    out = tmp_path / "judgments"
    _copy_without_statistics(out)
    path = out / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["n_pairs"] += 1
    path.write_text(json.dumps(data), encoding="utf-8")  # edited after its run
    before = path.read_bytes()
    done = _gabarito("study", "judgments", "--statistics-only", "--out", str(out))
    lines = [x for x in done.stderr.strip().splitlines() if "error: " in x]
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(lines) == 1, done.stderr  # one line
    assert "results.json: modified after its run" in lines[0]
    assert path.read_bytes() == before
    missing = _gabarito("study", "judgments", "--statistics-only", "--out", str(tmp_path / "none"))
    assert missing.returncode == 2 and "run the study first" in missing.stderr


def test_a_run_stores_its_statistics_and_statistics_only_never_runs(tmp_path):
    spec = toy_study(tmp_path)
    calls = []

    def run(ctx):
        calls.append("run")
        return {"provenance": ctx.provenance(corpus={}, model=None, engine={"name": "none"}, parameters={}),
                "values": [1.0, 3.0]}

    def statistics(results, ctx):
        return {"mean": sum(results["values"]) / len(results["values"])}

    path = run_study(spec, run, [], statistics=statistics)
    assert json.loads(path.read_text())["mean"] == 2.0 and calls == ["run"]
    data = json.loads(path.read_text())
    data["values"] = [5.0]
    write_measurement(path, {k: v for k, v in data.items() if k != "mean"})  # a later run, before stored stats
    run_study(spec, run, ["--statistics-only"], statistics=statistics)
    assert calls == ["run"] and json.loads(path.read_text())["mean"] == 5.0
    (spec.dir / "questions.json").write_text('{"pairs": [1]}')  # the gold changed since
    from gabarito.errors import GabaritoError

    with pytest.raises(GabaritoError):
        run_study(spec, run, ["--statistics-only"], statistics=statistics)
    with pytest.raises(SystemExit):  # a study without statistics has no such option
        run_study(spec, run, ["--statistics-only"])


def test_statistics_stored_again_are_dated_once_per_change_and_the_same_values_leave_the_file_alone(tmp_path):
    out = tmp_path / "judgments"
    committed = _copy_without_statistics(out)
    path = out / "results.json"
    assert _gabarito("study", "judgments", "--statistics-only", "--out", str(out)).returncode == 0
    first = path.read_bytes()
    again = _gabarito("study", "judgments", "--statistics-only", "--out", str(out))
    assert again.returncode == 0 and "left as it was" in again.stderr + again.stdout
    assert path.read_bytes() == first  # the same values: no second stamp, no rewrite
    data = json.loads(first)
    data[KEY] = {"stored": "in an older shape"}  # as a file written before the statistic changed shape
    write_measurement(path, data)
    assert _gabarito("study", "judgments", "--statistics-only", "--out", str(out)).returncode == 0
    now = json.loads(path.read_text(encoding="utf-8"))
    assert now[KEY] == committed[KEY]
    def stamps(d):
        return [m for m in d["provenance"].get("migrations", []) if KEY in m["what"]]

    assert len(stamps(now)) == len(stamps(json.loads(first))) + 1 == len(stamps(committed)) + 2
    assert stamps(now)[-1]["what"] == f"statistics stored from the measured values: {KEY}"
