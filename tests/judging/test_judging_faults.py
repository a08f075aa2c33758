"""Issue 39, the judging commands under faults: each case drives ``python -m gabarito.cli pool |
judge | judgments import`` in a subprocess and checks its exit status, its one line and what it
left on disk. Disk faults (full, read-only, a Ctrl-C at one instant, a slow disk, a rival writer)
are simulated for one folder by ``faulty_disk.py`` (tests run as root, which ignores permission
bits, so a ``chmod`` would prove nothing)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.judging.pool import pool_pairs, read_pool

ROOT = Path(__file__).resolve().parents[2]
FAULTY = Path(__file__).with_name("faulty_disk.py")
sys.path.insert(0, str(ROOT / "tests" / "reliability"))
from test_reliability_cli import assert_one_line_error  # noqa: E402  (exit 2, one line, no traceback)


def gabarito(*args, faulty: tuple | None = None, **popen) -> subprocess.CompletedProcess:
    """The command, or the command on a disk that fails as ``faulty`` = (folder, mode, n) says."""
    head = [FAULTY, *faulty, "--"] if faulty else ["-m", "gabarito.cli"]
    return subprocess.run([sys.executable, *map(str, head), *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, **popen)


def listing(folder: Path) -> list[str]:
    """Every name under ``folder``, hidden ones included (temporary files and staging folders)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def pool_args(collection, out: Path, *extra) -> list:
    return ["pool", *collection["runs"], "--documents", collection["documents"], "--evaluation",
            collection["evaluation"], "--seed", "3", "--out", out, *extra]


@pytest.fixture
def pool(collection, tmp_path) -> Path:
    out = tmp_path / "pool.json"
    done = gabarito(*pool_args(collection, out))
    assert done.returncode == 0, done.stderr
    return out


def grades(path: Path, pool_path: Path, assessor: str, grade_of, *, exported_at: str | None = None,
           bom: bool = False) -> Path:
    """A grades file as the judging page exports it (``exported_at`` differs per assessor)."""
    data, sha = read_pool(pool_path)
    text = json.dumps({"schema": "gabarito.grades/1", "pool_sha256": sha, "assessor": assessor,
                       "exported_at": exported_at or f"2026-12-06T10:00:00.{len(assessor):03d}Z", "complete": True,
                       "grades": [{"pair": p, "question": q, "doc": d, "grade": grade_of(q, d)}
                                  for p, q, d in pool_pairs(data)]})
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def agreeing(tmp_path, pool, names=("Ana", "Bruno")) -> list[Path]:
    """Two assessors who agree on every pair (one frozen import, kappa 1.0)."""
    return [grades(tmp_path / f"{n}.json", pool, n, lambda q, d: 2 if d in ("d1", "d8") else 0) for n in names]


def disagreeing(tmp_path, pool, names=("Carla", "Eva")) -> list[Path]:
    return [grades(tmp_path / f"{names[0]}.json", pool, names[0], lambda q, d: 2 if d in ("d1", "d8") else 0),
            grades(tmp_path / f"{names[1]}.json", pool, names[1], lambda q, d: 1)]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in listing(folder) if (folder / name).is_file()}


# -- F5: frozen means frozen ------------------------------------------------------------------------

def test_a_folder_with_frozen_qrels_refuses_a_second_import_and_keeps_every_file(pool, tmp_path):
    """Before: the second import (other assessors) rewrote agreement.json (kappa 1.000 -> 0.000)
    and added an adjudication pool while judgments.json still named the first pair, exit 0."""
    out = tmp_path / "judged"
    done = gabarito("judgments", "import", *agreeing(tmp_path, pool), "--pool", pool, "--out", out,
                    "--resamples", "200")
    assert done.returncode == 0, done.stderr
    before = snapshot(out)
    assert "qrels.lock.json" in before
    again = gabarito("judgments", "import", *disagreeing(tmp_path, pool), "--pool", pool, "--out", out,
                     "--resamples", "200")
    line = assert_one_line_error(again, "qrels.lock.json", "already frozen", "another --out")
    assert "Carla" not in line
    assert snapshot(out) == before  # agreement.json untouched, no adjudication pool


def test_an_adjudication_import_by_other_assessors_is_refused(pool, tmp_path):
    """The agreement waiting for adjudication belongs to the assessors whose disagreements the
    adjudication pool holds: two others with the same disagreements cannot take its place."""
    out = tmp_path / "judged"
    first = disagreeing(tmp_path, pool)
    assert gabarito("judgments", "import", *first, "--pool", pool, "--out", out, "--resamples", "200").returncode == 0
    before = snapshot(out)
    others = [grades(tmp_path / "x.json", pool, "Xavier", lambda q, d: 2 if d in ("d1", "d8") else 0),
              grades(tmp_path / "y.json", pool, "Yara", lambda q, d: 1)]
    assert_one_line_error(gabarito("judgments", "import", *others, "--pool", pool, "--out", out, "--resamples", "200"),
                          "agreement.json", "other assessors")
    assert snapshot(out) == before


# -- F22 and the race: a pool and its lock together or not at all -----------------------------------

@pytest.mark.parametrize("at", [1, 2])
def test_ctrl_c_between_pool_and_lock_leaves_nothing_and_a_rerun_works(collection, tmp_path, at):
    """Before: Ctrl-C after the pool was in place and before its lock left pool.json alone; the
    rerun said "already exists… never rewritten" and judge "freeze manifest not found", for good."""
    folder = tmp_path / "pools"
    folder.mkdir()
    out = folder / "pool.json"
    stopped = gabarito(*pool_args(collection, out), faulty=(folder, "stop", at))
    assert stopped.returncode == 130 and "Traceback" not in stopped.stderr, stopped.stderr[-2000:]
    assert listing(folder) == []
    assert gabarito(*pool_args(collection, out)).returncode == 0
    assert gabarito("judge", out, "--assessor", "Ana", "--out", tmp_path / "ana.html").returncode == 0


def test_a_pool_left_without_its_lock_is_named_with_what_to_do(pool, collection, tmp_path):
    """What an interrupted earlier version left: a pool with no manifest (or a manifest alone)."""
    half = tmp_path / "half.json"
    half.write_bytes(pool.read_bytes())
    for args in (pool_args(collection, half), ("judge", half, "--assessor", "Ana", "--out", tmp_path / "a.html")):
        assert_one_line_error(gabarito(*args), "half.json", "never frozen", "delete it")
    assert not (tmp_path / "a.html").exists()
    lone_lock = tmp_path / "gone.lock.json"
    lone_lock.write_bytes((tmp_path / "pool.lock.json").read_bytes())
    assert_one_line_error(gabarito(*pool_args(collection, tmp_path / "gone.json")), "gone.json",
                          "delete gone.lock.json")
    half.unlink()
    assert gabarito(*pool_args(collection, half)).returncode == 0


def test_the_loser_of_a_race_for_the_same_out_names_the_pool_and_overwrites_nothing(collection, tmp_path):
    """Another ``gabarito pool`` puts its pool.json in place just before this one does: before,
    the file was silently replaced (or the loser named a temporary path)."""
    folder = tmp_path / "pools"
    folder.mkdir()
    out = folder / "pool.json"
    line = assert_one_line_error(gabarito(*pool_args(collection, out), faulty=(folder, "taken", 1)), str(out),
                                 "already exists")
    assert ".tmp" not in line and "staging" not in line
    assert out.read_text() == "rival" and listing(folder) == ["pool.json"]


def test_concurrent_pools_with_the_same_out_leave_one_frozen_pool(collection, tmp_path):
    out = tmp_path / "pool.json"
    procs = [subprocess.Popen([sys.executable, "-m", "gabarito.cli", *map(str, pool_args(collection, out))],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(p.wait(300), p.stderr.read()) for p in procs]
    assert sorted(code for code, _ in results) == [0, 2, 2], results
    for code, err in results:
        if code:
            assert err.count("\n") == 1 and str(out) in err and ".tmp" not in err and "staging" not in err, err
    read_pool(out)  # the winner's pool, verified against its own lock
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("pool", "."))) == [
        "pool.json", "pool.lock.json"]


def test_a_pool_modified_after_freezing_is_named_as_such(pool, tmp_path):
    """Before: "gold changed after it was frozen", the words of a study's gold files."""
    pool.write_text(pool.read_text(encoding="utf-8").replace("senha", "SENHA"), encoding="utf-8")
    line = assert_one_line_error(gabarito("judge", pool, "--assessor", "Ana", "--out", tmp_path / "a.html"),
                                 "pool.json", "the pool was changed after it was frozen in pool.lock.json")
    assert "gold" not in line and not (tmp_path / "a.html").exists()


# -- F23: hostile assessor names and guides ---------------------------------------------------------

HOSTILE = ["__DATA__", "__JS__ __CSS__", "</script><script>alert(1)</script>", r"__GUIDE__ \1 \g<0> $&"]


def _page_data(page: str) -> dict:
    head = '<script type="application/json" id="dados">'
    assert page.count(head) == 1
    return json.loads(page.split(head, 1)[1].split("</script>", 1)[0])


@pytest.mark.parametrize("assessor", HOSTILE)
def test_a_hostile_assessor_name_or_guide_leaves_the_page_working(pool, tmp_path, assessor):
    """Before: an assessor (or a guide) holding ``__DATA__`` took the pool's data in its place and
    left ``__DATA__`` in the script element: a dead page, exit 0."""
    guide = tmp_path / "guia.md"
    guide.write_text(f"# Guia\n\nNunca escreva {assessor} nem __DATA__ ou __JS__ aqui.\n", encoding="utf-8")
    page_path = tmp_path / "page.html"
    done = gabarito("judge", pool, "--assessor", assessor, "--guide", guide, "--out", page_path)
    assert done.returncode == 0, done.stderr
    page = page_path.read_text(encoding="utf-8")
    data = _page_data(page)
    assert data["assessor"] == assessor and data["pool_sha256"] == read_pool(pool)[1]
    assert len(data["questions"]) == 2
    script = (ROOT / "gabarito/judging/assets/judge.js").read_text(encoding="utf-8")
    assert page.count(script) == 1 and page.count("<script") == 2  # no script of the name's or the guide's


# -- F13: a full or read-only disk ------------------------------------------------------------------

@pytest.mark.parametrize("budget", [0, 1500, 4000])
def test_a_full_disk_during_import_is_one_line_and_writes_nothing(pool, tmp_path, budget):
    """Before: an OSError traceback; qrels.trec and evaluation.json were left without their lock."""
    folder = tmp_path / "disk"
    folder.mkdir()
    out = folder / "judged"
    proc = gabarito("judgments", "import", *agreeing(tmp_path, pool), "--pool", pool, "--out", out,
                    "--resamples", "200", faulty=(folder, "full", budget))
    line = assert_one_line_error(proc, "No space left on device", "nothing was written", str(out))
    assert ".tmp" not in line and "staging" not in line
    assert listing(folder) == []  # not even the folder it made


@pytest.mark.parametrize("command", ["pool", "judge"])
def test_a_full_disk_for_pool_or_page_is_one_line_and_writes_nothing(pool, collection, tmp_path, command):
    folder = tmp_path / "disk"
    folder.mkdir()
    args = pool_args(collection, folder / "p.json") if command == "pool" else \
        ("judge", pool, "--assessor", "Ana", "--out", folder / "a.html")
    assert_one_line_error(gabarito(*args, faulty=(folder, "full", 1000)), "No space left on device", str(folder))
    assert listing(folder) == []


@pytest.mark.parametrize("command", ["pool", "judge", "import"])
def test_a_read_only_folder_is_one_line_and_writes_nothing(pool, collection, tmp_path, command):
    folder = tmp_path / "ro"
    folder.mkdir()
    args = {"pool": pool_args(collection, folder / "p.json"),
            "judge": ("judge", pool, "--assessor", "Ana", "--out", folder / "a.html"),
            "import": ("judgments", "import", *agreeing(tmp_path, pool), "--pool", pool, "--out", folder / "j",
                       "--resamples", "200")}[command]
    assert_one_line_error(gabarito(*args, faulty=(folder, "readonly", 0)), "Read-only file system", str(folder))
    assert listing(folder) == []


# -- F24: SIGTERM and Ctrl-C leave no temporary file -------------------------------------------------

@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
@pytest.mark.parametrize("command", ["pool", "import"])
def test_a_signal_while_writing_leaves_no_temporary_file(pool, collection, tmp_path, sig, status, command):
    """Before: SIGTERM killed ``gabarito pool`` with its ``.pool.json.*.tmp`` left behind."""
    folder = tmp_path / "slow"
    folder.mkdir()
    args = pool_args(collection, folder / "p.json") if command == "pool" else \
        ("judgments", "import", *agreeing(tmp_path, pool), "--pool", pool, "--out", folder / "j", "--resamples", "200")
    proc = subprocess.Popen([sys.executable, str(FAULTY), str(folder), "hang", "300", "--", *map(str, args)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr.readline().strip() == "HANG"  # a file is half written
        assert any(".tmp" in name for name in listing(folder))
        proc.send_signal(sig)
        assert proc.wait(60) == status
    finally:
        proc.kill()
        proc.wait()
    assert "Traceback" not in proc.stderr.read()
    assert listing(folder) == []


# -- F14, F26: the grades file's JSON ----------------------------------------------------------------

def test_grades_nested_too_deeply_are_one_line(pool, tmp_path):
    """Before: a RecursionError traceback."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000)
    assert_one_line_error(gabarito("judgments", "import", deep, "--pool", pool, "--out", tmp_path / "out"),
                          "deep.json", "nested too deeply")
    assert not (tmp_path / "out").exists()


def test_a_grades_file_with_a_byte_order_mark_is_read(pool, tmp_path):
    """Before: "invalid JSON at line 1", though every other input accepts a BOM."""
    plain = agreeing(tmp_path, pool)
    marked = [grades(tmp_path / f"bom{i}.json", pool, name, lambda q, d: 2 if d in ("d1", "d8") else 0, bom=True)
              for i, name in enumerate(("Ana", "Bruno"))]
    assert marked[0].read_bytes().startswith(b"\xef\xbb\xbf")
    for files, out in ((plain, tmp_path / "o1"), (marked, tmp_path / "o2")):
        done = gabarito("judgments", "import", *files, "--pool", pool, "--out", out, "--resamples", "200")
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "o1" / "qrels.trec").read_bytes() == (tmp_path / "o2" / "qrels.trec").read_bytes()


# -- F17, F18: numeric options and --out, checked before any work -------------------------------------

@pytest.mark.parametrize("option,value,needle", [
    ("--seed", "-1", "--seed must be a whole number from 0"), ("--seed", str(2 ** 32), "--seed must be"),
    ("--resamples", "-3", "--resamples must be at least 100"), ("--resamples", "0", "--resamples must be")])
def test_import_numeric_options_are_checked_in_one_line(pool, tmp_path, option, value, needle):
    """Before: --seed -1 a ValueError traceback from numpy; --resamples -3 accepted, ci95 null, exit 0."""
    assert_one_line_error(gabarito("judgments", "import", *disagreeing(tmp_path, pool), "--pool", pool, "--out",
                          tmp_path / "out", option, value), needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra,needle", [(("--depth", "0"), "--depth must be at least 1"),
                                          (("--seed", "-5"), "--seed must be")])
def test_pool_numeric_options_are_checked_in_one_line(collection, tmp_path, extra, needle):
    out = tmp_path / "p.json"
    assert_one_line_error(gabarito(*pool_args(collection, out), *extra), needle)
    assert not out.exists()


def test_an_out_of_the_wrong_kind_is_one_line_before_any_work(pool, collection, tmp_path):
    """Before: ``judge --out FOLDER`` ended in an IsADirectoryError traceback after building the page."""
    folder = tmp_path / "folder"
    folder.mkdir()
    assert_one_line_error(gabarito("judge", tmp_path / "no_such_pool.json", "--assessor", "Ana", "--out", folder),
                          str(folder), "is a folder")
    assert_one_line_error(gabarito(*pool_args(collection, folder)), str(folder), "is a folder")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert_one_line_error(gabarito("judgments", "import", *agreeing(tmp_path, pool), "--pool", pool, "--out", a_file),
                          str(a_file), "is a file")
    assert listing(folder) == [] and a_file.read_text() == "x"


# -- minor: a copy with another name is not a second assessor ----------------------------------------

def test_two_grades_files_identical_but_for_the_name_are_refused(pool, tmp_path):
    """Before: accepted, kappa 1.000. Two real exports differ at least in their time."""
    a = grades(tmp_path / "a.json", pool, "Ana", lambda q, d: 1, exported_at="2026-12-06T10:00:00.000Z")
    b = tmp_path / "b.json"
    b.write_text(a.read_text(encoding="utf-8").replace('"Ana"', '"Bruno"'), encoding="utf-8")
    assert_one_line_error(gabarito("judgments", "import", a, b, "--pool", pool, "--out", tmp_path / "out"),
                          "b.json", "only the assessor's name changed")
    assert not (tmp_path / "out").exists()
