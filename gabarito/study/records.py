"""Run records: provenance, atomic results files, TREC run files, and the gold-hash guard."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Mapping

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file

from gabarito.paths import ROOT  # noqa: E402
from gabarito.study.integrity import record as record_written  # noqa: E402
from gabarito.study.integrity import state as written_state  # noqa: E402
from gabarito.study.integrity import verify as verify_written  # noqa: E402


def git_state(cwd: str | Path = ROOT) -> dict:
    """Current commit and whether the work tree has uncommitted changes (None outside git)."""
    def run(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                                  check=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


#: Instruction-set extensions that pick a numeric library's code path (ONNX Runtime's, torch's,
#: glibc's): two machines that differ in them may round differently (docs/reproducibility.md).
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16",
              "amx_tile", "asimd", "sve")


def processor(cpuinfo: str | Path = "/proc/cpuinfo") -> dict:
    """The CPU's model name and which of :data:`SIMD_FLAGS` it has, read from ``cpuinfo``
    (Linux); elsewhere ``platform.processor()`` and no flags."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return {"model": platform.processor() or None, "simd": None}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    have = set((fields.get("flags") or fields.get("Features") or "").split())
    model = fields.get("model name") or fields.get("Model name") or platform.processor() or None
    return {"model": model, "simd": [f for f in SIMD_FLAGS if f in have]}


def machine() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "cpu": processor(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
    }


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def gold_hashes(study_dir: str | Path, files: Iterable[str]) -> dict[str, str]:
    study_dir = Path(study_dir)
    return {f: sha256_file(study_dir / f) for f in files}


def provenance(*, corpus: Mapping, gold_sha256: Mapping[str, str], model: Mapping | None,
               engine: Mapping, parameters: Mapping, git: Mapping | None = None) -> dict:
    """Everything an auditor needs to tell which inputs produced a results file. ``git`` is the
    code's state when the run started (default: now); a study's own outputs (its TREC runs,
    written before the results) must not make the tree it ran on look dirty."""
    return {
        "corpus": dict(corpus),
        "gold_sha256": dict(gold_sha256),
        "model": dict(model) if model else None,
        "engine": dict(engine),
        "parameters": dict(parameters),
        "git": dict(git) if git is not None else git_state(),
        "date": now_iso(),
        "machine": machine(),
    }


def write_results(path: str | Path, results: Mapping) -> Path:
    """Write a results file atomically; it must carry provenance with gold hashes. Its sha256 is
    recorded in the folder's manifest (:mod:`gabarito.study.integrity`)."""
    prov = results.get("provenance") or {}
    if not prov.get("gold_sha256"):
        raise GabaritoError("results lack provenance.gold_sha256", path=path)
    return write_measurement(path, results)


def write_measurement(path: str | Path, data: Mapping) -> Path:
    """Write a results file a page reads (a study's results, a benchmark's JSON) atomically and
    record its sha256 in the folder's manifest, so that a later edit is refused."""
    written = atomic_write_json(path, data)
    record_written(written, when=now_iso())
    return written


def stamp_migration(data: dict, what: str, when: str, *, commit: str | None = None, once: bool = True) -> None:
    """Note in a results file's provenance (or at its top when it has none) that a one-off
    migration ``what`` rewrote it on ``when`` (at ``commit`` when given): once per ``what``, or
    every time with ``once=False`` (a change that may happen again, each one dated)."""
    target = data["provenance"] if isinstance(data.get("provenance"), dict) else data
    done = target.setdefault("migrations", [])
    if not once or not any(m.get("what") == what for m in done):
        done.append({"what": what, "date": when, **({"commit": commit} if commit else {})})


def require_same(stored, now, where: str, path: Path | None = None, tol: float = 1e-12) -> None:
    """Stop (one line naming ``where`` and ``path``) unless ``now`` holds exactly the keys, lengths
    and values of ``stored``, floats to ``tol``: what a one-off migration checks before it rewrites
    a committed file from its own values."""
    if isinstance(stored, dict) and isinstance(now, dict) and stored.keys() == now.keys():
        for k in stored:
            require_same(stored[k], now[k], f"{where}/{k}", path, tol)
    elif isinstance(stored, (list, tuple)) and isinstance(now, (list, tuple)) and len(stored) == len(now):
        for i, (a, b) in enumerate(zip(stored, now)):
            require_same(a, b, f"{where}/{i}", path, tol)
    elif isinstance(stored, float) or isinstance(now, float):
        if stored is None or now is None or not math.isclose(stored, now, rel_tol=0, abs_tol=tol):
            raise GabaritoError(f"not reproduced: {where}: {stored!r} stored, {now!r} now", path=path)
    elif stored != now:
        raise GabaritoError(f"not reproduced: {where}: {stored!r} stored, {now!r} now", path=path)


def write_migrated(plans: Iterable[tuple[Path, dict]], what: str) -> None:
    """Write each ``(path, data)`` a one-off migration ``what`` rewrote: stamped
    (:func:`stamp_migration`, one date for all) and recorded (:func:`write_measurement`)."""
    when = now_iso()
    for path, data in plans:
        stamp_migration(data, what, when)
        write_measurement(path, data)


def check_results_gold(results_path: str | Path) -> dict[str, str]:
    """Refuse results changed after their run (:func:`gabarito.study.integrity.verify`) and
    results whose recorded gold hashes differ from the gold files beside them."""
    results_path = Path(results_path)
    verify_written(results_path)
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"cannot read results ({exc})", path=results_path) from None
    recorded = (results.get("provenance") or {}).get("gold_sha256") or {}
    if not recorded:
        raise GabaritoError("results carry no gold hash", path=results_path)
    for rel, expected in recorded.items():
        gold = results_path.parent / rel
        got = sha256_file(gold) if gold.exists() else "missing"
        if got != expected:
            raise GabaritoError(
                f"results were computed against another gold ({rel}: {expected[:12]}… recorded, "
                f"{got[:12]}… now): rerun the study",
                path=results_path,
            )
    return dict(recorded)


def _truncate(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:  # not a regular file (a pipe, /dev/full): nothing to cut back
        pass


def append_jsonl(path: str | Path, record: Mapping) -> Path:
    """Append one record as one line to a JSONL log; the file is never rewritten.

    The line is written with a single ``write`` on a file opened with ``O_APPEND``, under an
    exclusive ``flock`` on the log, so appends from several processes never interleave or
    lose a line. A log whose last line was cut short (a process killed mid-write) gets a
    newline first, so the damaged line stays on its own and readers can skip it. A write that
    fails part way (disk full) is cut back off, so the log is left as it was. The file mode
    follows the umask."""
    import fcntl

    path = Path(path)
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            _truncate(fd, size)  # a disk full mid-record leaves no cut-short line behind
            raise
    finally:
        os.close(fd)  # releases the lock
    return path


def stale_reason(results_path: str | Path, *, gold_sha256: Mapping[str, str],
                 corpus_sha256: str | None = None) -> str | None:
    """Why a results file must be recomputed (None when it is current for these inputs)."""
    results_path = Path(results_path)
    if not results_path.exists():
        return "no results yet"
    modified = written_state(results_path)
    if modified:
        return modified
    try:
        prov = json.loads(results_path.read_text(encoding="utf-8")).get("provenance") or {}
    except json.JSONDecodeError:
        return "results file is not valid JSON"
    if dict(prov.get("gold_sha256") or {}) != dict(gold_sha256):
        return "gold differs from the one the results were computed on"
    if corpus_sha256 and (prov.get("corpus") or {}).get("sha256") != corpus_sha256:
        return "corpus differs from the one the results were computed on"
    return None
