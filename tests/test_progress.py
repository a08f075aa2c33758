"""Issue 42, item 2: progress on every long step, through the ``gabarito`` command.

Under a pseudo-terminal (``pty.openpty()``, the slave as the process's stderr) ``gabarito evaluate``
draws a bar with a count and a rate for encoding, searching and the second reading, and ``gabarito
pool`` one for pooling; with stderr a pipe, or with
``--quiet`` / ``GABARITO_QUIET=1``, nothing of a bar appears, nor sentence-transformers' and
Hugging Face's own bars. The help-center example (a few of its documents), memory engine.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.test_reliability_cli import MINILM, offline_minilm

ROOT = Path(__file__).resolve().parents[1]
HELPCENTER = ROOT / "data" / "helpcenter"
DOCS = ("trocas-e-devolucoes", "prazos-e-frete", "conta-e-seguranca")

#: What a tqdm bar of ours prints: "desc:  40%|####  | 12/30 [00:01<00:02, 9.87text/s]".
BAR = re.compile(r"(?P<desc>[\w ()/.:-]+):\s+\d+%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+) "
                 r"\[[^\]]*?(?P<rate>[\d.]+ ?\w+/s)\]")
#: Anything of a bar, ours or a library's.
ANY_BAR = re.compile(r"\d+%\||\bit/s\b|\w+/s\]|Batches|Loading weights")


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """Three help-center documents and the questions they answer, as a project folder."""
    if not (HELPCENTER / "evaluation.json").is_file():
        pytest.skip("no help-center example data")
    base = tmp_path_factory.mktemp("progress")
    (base / "docs").mkdir()
    for name in DOCS:
        (base / "docs" / f"{name}.md").write_text((HELPCENTER / "docs" / f"{name}.md").read_text(encoding="utf-8"),
                                                  encoding="utf-8")
    questions = [q for q in json.loads((HELPCENTER / "evaluation.json").read_text(encoding="utf-8"))
                 if q["relevantIds"] and set(q["relevantIds"]) <= set(DOCS)]
    (base / "evaluation.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    return base


def evaluate(project: Path, *extra: str, terminal: bool, env: dict | None = None) -> tuple[int, str, str]:
    """``gabarito evaluate`` of the example (see :func:`gabarito`)."""
    return gabarito(project, "evaluate", "--documents", "docs", "--evaluation", "evaluation.json",
                    "--log", "runs/log.jsonl", *extra, terminal=terminal, env=env)


def gabarito(project: Path, *args: str, terminal: bool, env: dict | None = None) -> tuple[int, str, str]:
    """Run ``gabarito ARGS`` in ``project`` with stderr a pseudo-terminal (``terminal``) or a pipe;
    return the exit status, stdout and stderr."""
    environ = {k: v for k, v in os.environ.items() if k != "GABARITO_QUIET"}
    environ.update({"HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache"),
                    "GABARITO_ENCODER_BACKEND": "torch", **(env or {})})
    return run_with_stderr([sys.executable, "-m", "gabarito.cli", *args], project, environ, terminal=terminal)


def run_with_stderr(command: list[str], cwd: Path, environ: dict, *, terminal: bool) -> tuple[int, str, str]:
    """Run ``command`` with stderr a pseudo-terminal or a pipe; the exit status, stdout, stderr."""
    if not terminal:
        proc = subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(command, cwd=cwd, env=environ, stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL)
    os.close(slave)
    err = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the slave side closed: the process ended
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    out = proc.stdout.read().decode("utf-8", "replace")
    proc.stdout.close()
    return proc.wait(timeout=600), out, err.decode("utf-8", "replace")


def bars(stderr: str) -> dict[str, list[re.Match]]:
    """Every drawn state of every bar, by its description."""
    out: dict[str, list[re.Match]] = {}
    for m in BAR.finditer(stderr.replace("\r", "\n")):
        out.setdefault(m["desc"].strip(), []).append(m)
    return out


def test_a_terminal_shows_a_bar_with_count_and_rate_for_encoding_searching_and_reading(example):
    offline_minilm()
    questions = len(json.loads((example / "evaluation.json").read_text(encoding="utf-8")))
    code, _out, err = evaluate(example, "--method", "hybrid", "--model", MINILM, "--reranker", f"bi:{MINILM}",
                               "--rerank-n", "5", terminal=True)
    assert code == 0, err[-2000:]
    drawn = bars(err)
    encoding = [d for d in drawn if d.startswith("encoding")]
    assert encoding, err[-2000:]
    assert {"searching dense", "searching bm25", "reading (bi-encoder)"} <= set(drawn), sorted(drawn)
    for desc in [*encoding, "searching dense", "searching bm25", "reading (bi-encoder)"]:
        last = drawn[desc][-1]
        assert last["n"] == last["total"], desc  # counted to the end
        assert last["rate"].endswith("/s"), desc
    assert int(drawn["searching bm25"][-1]["total"]) == questions
    assert "Batches" not in err and "Loading weights" not in err  # the libraries' own bars are off
    assert "Traceback" not in err


def test_a_pipe_gets_no_bar_at_all(example):
    offline_minilm()
    code, _out, err = evaluate(example, "--method", "hybrid", "--model", MINILM, terminal=False)
    assert code == 0, err[-2000:]
    assert "embedding cache:" in err  # the run's own lines are still there
    assert not ANY_BAR.search(err), err[-2000:]


@pytest.mark.parametrize("how", ["--quiet", "GABARITO_QUIET=1"])
def test_quiet_under_a_terminal_shows_no_bar(example, how):
    extra, env = (["--quiet"], None) if how == "--quiet" else ([], {"GABARITO_QUIET": "1"})
    code, _out, err = evaluate(example, "--method", "bm25", *extra, terminal=True, env=env)
    assert code == 0, err[-2000:]
    assert not ANY_BAR.search(err), err[-2000:]
    loud_code, _out, loud = evaluate(example, "--method", "bm25", terminal=True)  # the same run, not quiet
    assert loud_code == 0 and "searching bm25" in bars(loud), loud[-2000:]


def test_pooling_shows_its_bar_on_a_terminal_and_none_with_quiet(example):
    for out in ("words", "words-doc"):
        seg = "section" if out == "words" else "document"
        code, _out, err = evaluate(example, "--method", "bm25", "--segmentation", seg, "--out", out, terminal=False)
        assert code == 0, err[-2000:]
    code, _out, err = gabarito(example, "pool", "words", "words-doc", "--seed", "3", "--out", "pool.json",
                               terminal=True)
    assert code == 0, err[-2000:]
    last = bars(err)["pooling"][-1]
    assert last["n"] == last["total"] and last["rate"].endswith("/s")
    code, _out, err = gabarito(example, "pool", "words", "words-doc", "--seed", "3", "--out", "quiet.json",
                               "--quiet", terminal=True)
    assert code == 0 and (example / "quiet.json").is_file(), err[-2000:]
    assert not ANY_BAR.search(err), err[-2000:]


NOTEBOOK_RUN = """
import sys
from pathlib import Path
from gabarito.publish.site.execute import execute_notebook
execute_notebook(Path(sys.argv[1]), Path(sys.argv[2]), log=Path(sys.argv[3]))
"""


def test_a_notebook_run_counts_its_cells_on_a_terminal(tmp_path):
    """The site build's notebook execution (library level: a whole ``gabarito site`` is too long
    for this file), in a child process whose stderr is a pseudo-terminal."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = {i}") for i in range(3)])
    src = tmp_path / "tiny.ipynb"
    nbformat.write(nb, str(src))
    command = [sys.executable, "-c", NOTEBOOK_RUN, str(src), str(ROOT), str(tmp_path / "kernel.log")]
    code, _out, err = run_with_stderr(command, tmp_path, dict(os.environ), terminal=True)
    assert code == 0, err[-2000:]
    last = bars(err)["running tiny.ipynb"][-1]
    assert (last["n"], last["total"]) == ("3", "3") and last["rate"].endswith("/s")
    code, _out, err = run_with_stderr(command, tmp_path, {**os.environ, "GABARITO_QUIET": "1"}, terminal=True)
    assert code == 0 and not ANY_BAR.search(err), err[-2000:]
