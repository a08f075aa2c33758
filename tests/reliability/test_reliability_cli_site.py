"""Ctrl-C and concurrent builds through the ``gabarito`` command: a study script interrupted,
`gabarito site` interrupted while a notebook runs (SIGINT to the process group, as a terminal
sends it, and to the process alone), and several `gabarito site` builds into one folder.

The site cases build a small project (tests/publish/test_site.py's fixture) and start Jupyter
kernels: they are integration tests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from test_reliability_cli import PY, gabarito


# -- Ctrl-C in the front door of the study scripts ----------------------------------------------------

STUDY = """
import time
from gabarito.errors import run_main

def main(argv):
    print("started", flush=True)
    time.sleep(120)
    return 0

run_main(main)
"""


def _started(proc: subprocess.Popen) -> None:
    assert proc.stdout.readline().strip() == "started"


def test_a_study_script_interrupted_is_one_line_and_130(tmp_path):
    """`run_main` (every study script, and `gabarito report` through them) said nothing about
    Ctrl-C: a KeyboardInterrupt traceback."""
    script = tmp_path / "study.py"
    script.write_text(STUDY)
    proc = subprocess.Popen([PY, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started(proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted", err


def test_gabarito_stops_when_a_study_it_runs_is_interrupted(tmp_path, capsys):
    """A study interrupted under `gabarito report`/`study` stops gabarito too, exit 130 and the
    study's one line, not "study X exited with status 130" (exit 2) or the next study."""
    from types import SimpleNamespace

    from gabarito.cli import run_study

    script = tmp_path / "study.py"
    script.write_text("from gabarito.errors import run_main\n\ndef main(argv):\n    raise KeyboardInterrupt\n\n"
                      "run_main(main)\n")
    with pytest.raises(SystemExit) as stop:
        run_study(SimpleNamespace(name="demo", dir=tmp_path, script="study.py"), [])
    assert stop.value.code == 130 and capsys.readouterr().err == "interrupted\n"


# -- Ctrl-C while the site runs its notebooks; concurrent site builds ------------------------------------

def site_project(root: Path, *, sleep: bool) -> Path:
    """A small site project (tests/publish/test_site.py's fixture); with ``sleep`` its notebook
    ends with a cell that writes ``root/started`` and sleeps two minutes."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "publish"))
    from test_site import FIXTURE_NOTEBOOK, make_fixture

    from gabarito.study.records import write_results

    cells = list(FIXTURE_NOTEBOOK)
    if sleep:
        cells.append(("code", f"import pathlib, time\npathlib.Path({str(root / 'started')!r}).write_text('x')\n"
                              f"time.sleep(120)"))
    make_fixture(root, notebook=cells)
    results = root / "case-studies" / "demo" / "results.json"
    write_results(results, json.loads(results.read_text(encoding="utf-8")))  # recorded as its run wrote it
    return root


def kernels_in(folder: Path) -> list[int]:
    """Processes whose working directory is ``folder`` (a notebook's kernel runs there)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(os.readlink(f"/proc/{pid}/cwd")) == folder.resolve():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.integration
@pytest.mark.parametrize("target", ["process group", "process alone"])
def test_cli_ctrl_c_while_the_site_runs_a_notebook_is_one_line_and_130(tmp_path, target):
    """Before: Ctrl-C gave a 52-line asyncio.CancelledError traceback (exit 1), SIGINT to the
    process alone "DeadKernelError: Kernel died" (exit 2)."""
    root = site_project(tmp_path / "project", sleep=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([PY, "-m", "gabarito.cli", "site", "--root", str(root), "--out", str(tmp_path / "site"),
                             "--renderer", "smalldocs"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (root / "started").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the notebook never started"
            time.sleep(0.2)
        if target == "process group":  # what a terminal's Ctrl-C does
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "gabarito: interrupted", err[-3000:]
    assert [ln for ln in err.splitlines() if not ln.startswith("site: ")] == ["gabarito: interrupted"]
    assert not (tmp_path / "site").exists()
    for _ in range(50):  # the kernel is gone
        if not kernels_in(root / "notebooks"):
            break
        time.sleep(0.2)
    assert kernels_in(root / "notebooks") == []


@pytest.mark.integration
def test_cli_concurrent_site_builds_into_one_folder_all_succeed(tmp_path):
    """Issue 22: the site's folder swap failed with a raw OSError under contention (5 of 180)."""
    root = site_project(tmp_path / "project", sleep=False)
    out = tmp_path / "site"

    def build(_i):
        return [gabarito("site", "--root", str(root), "--out", str(out), "--renderer", "smalldocs", "--no-execute",
                         cwd=tmp_path) for _ in range(3)]

    with ThreadPoolExecutor(4) as pool:
        procs = [p for batch in pool.map(build, range(4)) for p in batch]
    assert [p.returncode for p in procs] == [0] * len(procs), [p.stderr[-500:] for p in procs if p.returncode]
    assert (out / "index.html").is_file() and (out / "notebooks" / "benchmark_rrf.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []  # no half-swapped folder
