"""Saving an evaluation run: the spreadsheet (``results.csv``), ``run.json``, the ranked lists
(``run.trec``), the judgments they were scored against (``qrels.trec``) and the run log.

Every run record is appended to a JSONL log (``runs/log.jsonl`` by default); a record holds the
segmentation version, model and weights hash, engine, parameters, corpus and gold hashes, date,
commit, the summary, the scorer's :class:`~gabarito.measure.report.Report` (``report``, schema
``gabarito.report/1``) and the per-query rows, so two runs can be compared later
(:mod:`gabarito.evaluation.compare`). The run folder is written like a study's results: each file's
sha256 is recorded in its manifest (``results.sha256.json``, :mod:`gabarito.study.integrity`), so a
file edited after the run is refused by ``gabarito compare``.
"""

from __future__ import annotations

import atexit
import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from gabarito.errors import GabaritoError
from gabarito.evaluation.config import CSV_COLUMNS
from gabarito.core.runs import Qrels, Run
from gabarito.hashing import atomic_write_bytes, file_mode
from gabarito.study.integrity import record as record_written
from gabarito.study.records import append_jsonl, now_iso, write_measurement

#: The files of a run folder besides ``run.json``: the spreadsheet, the TREC run, the qrels.
CSV_FILE, RUN_FILE, QRELS_FILE = "results.csv", "run.trec", "qrels.trec"
#: The fields of a run record that name the user's input files (:func:`recorded_path`).
PATH_FIELDS = ("documents_path", "evaluation_path")


def recorded_path(path: str | Path | None, base: str | Path | None = None) -> str | None:
    """An input path as a run record keeps it, never resolved to an absolute one: a relative path
    exactly as typed; an absolute path inside ``base`` (the current folder by default, where the
    command ran and where ``gabarito pool`` looks for it again) relative to it, so no record names
    the machine's own folders; an absolute path elsewhere as typed (the user chose it)."""
    if path is None:
        return None
    text = str(path)
    if not Path(text).is_absolute():
        return text
    base = Path.cwd() if base is None else Path(base)
    for inside, folder in ((Path(os.path.normpath(text)), Path(os.path.normpath(base))),
                           (Path(text).resolve(), base.resolve())):
        if inside.is_relative_to(folder):
            return inside.relative_to(folder).as_posix()
    return text


class RunRecord(dict):
    """A run record (a JSON-ready ``dict``) that also carries the run's ranked document lists
    (``ranked``: a :class:`~gabarito.core.runs.Run`, as deep as searched) and the judgments it was
    scored against (``qrels``), which :func:`write_run` writes as TREC files."""

    def __init__(self, data=(), *, ranked: Run | None = None, qrels: Qrels | None = None):
        super().__init__(data)
        self.ranked, self.qrels = ranked, qrels


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


#: A spreadsheet reads a cell starting with one of these as a formula (CSV injection).
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _text_cell(value: object) -> str:
    """A text cell a spreadsheet shows as text: one starting like a formula gets a leading ``'``
    (OWASP's advice for CSV injection); numbers are written by :func:`_cell` and never start so."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def results_csv(record: dict) -> str:
    """The spreadsheet: one row per query, columns :data:`CSV_COLUMNS`. ``returned`` is the
    top-k as ``id (0.833); id (0.412); ...`` (3 significant digits), ``expected`` joins the
    relevant ids with ``; ``, hits are 1/0 (blank when not defined)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in record["per_query"]:
        returned = "; ".join(f"{x['id']} ({x['score']:.3g})" for x in r["returned"])
        top = r["top_score"]
        writer.writerow([_text_cell(r["id"]), _text_cell(r["query"]), _text_cell(r["type"]),
                         _text_cell(r["severity"]), _cell(r["answerable"]), _text_cell("; ".join(r["expected"])),
                         _text_cell(returned), _cell(r["hit@1"]), _cell(r["hit@3"]), _cell(r["hit@5"]),
                         _cell(r["rr"]), _text_cell(r["false_positive"]), "" if top is None else f"{top:.4g}",
                         _text_cell(r["top_segment"])])
    return buf.getvalue()


def write_run(record: dict, out_dir: str | Path, log_path: str | Path) -> dict[str, Path]:
    """Write ``out_dir/results.csv`` (UTF-8 with a byte-order mark, so spreadsheets read the
    accents), ``out_dir/run.json`` and, for a :class:`RunRecord` that carries them, the ranked
    lists ``out_dir/run.trec`` (tagged with the run id) and the judgments ``out_dir/qrels.trec``;
    then append the record to the JSONL log at ``log_path``. The input paths (:data:`PATH_FIELDS`)
    are written as :func:`recorded_path` keeps them. Each file's sha256 is recorded in
    ``out_dir/results.sha256.json`` (``run.json`` through
    :func:`gabarito.study.records.write_measurement`, the writer of the studies' results), and
    ``run.json`` names the TREC files under ``trec``.

    All or nothing: everything is rendered first, the files are written in a temporary
    folder renamed into place as ``out_dir``, then the record is appended to the log
    (:func:`gabarito.study.records.append_jsonl`: one write, cut back off if it fails part way,
    e.g. disk full; the error names the log); if that fails, ``out_dir`` is removed again. An
    ``out_dir`` that already holds files is refused (an empty one, such as the folder
    :func:`unique_run_id` reserved, is filled). The log line is appended with ``O_APPEND`` under
    a lock, never by rewriting the log. Returns the paths written (``csv``, ``json``, ``log``,
    and ``run``/``qrels`` when written)."""
    out_dir, log_path = Path(out_dir), Path(log_path)
    ranked, qrels = getattr(record, "ranked", None), getattr(record, "qrels", None)
    trec = ranked is not None and qrels is not None
    try:
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise GabaritoError("already holds a run or other files; choose another output folder", path=out_dir)
        if trec:
            record["trec"] = {"run": RUN_FILE, "qrels": QRELS_FILE, "tag": str(record["run_id"])}
        for field in PATH_FIELDS:  # relative to the folder the command ran in, or as typed
            if field in record:
                record[field] = recorded_path(record[field])
        try:
            csv_bytes = results_csv(record).encode("utf-8-sig")
            json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False)  # refused before anything is written
        except (TypeError, ValueError) as exc:
            raise GabaritoError(f"the run record cannot be saved ({exc})", path=out_dir) from exc
    except GabaritoError:
        _release(record.get("run_id"), keep=None)
        raise
    stage: Path | None = None
    placed = False
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
        os.chmod(stage, file_mode(0o777))  # mkdtemp makes it 0700; a run folder follows the umask
        _write_files(stage, record, csv_bytes, ranked if trec else None, qrels if trec else None)
        os.replace(stage, out_dir)
        placed = True
        try:
            append_jsonl(log_path, record)  # one write; a failed one is cut back off the log
        except OSError as exc:
            raise GabaritoError(f"cannot append the run to the log ({exc.strerror or exc}); the log is as it "
                                f"was and the run was not kept", path=log_path) from exc
    except BaseException as exc:
        if placed:
            shutil.rmtree(out_dir, ignore_errors=True)
        elif stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        _release(record.get("run_id"), keep=None)
        if isinstance(exc, OSError):
            raise GabaritoError(f"cannot write the run ({exc.strerror or exc})",
                                path=exc.filename or out_dir) from exc
        raise
    _release(record.get("run_id"), keep=out_dir)
    paths = {"csv": out_dir / CSV_FILE, "json": out_dir / "run.json", "log": log_path}
    if trec:
        paths.update(run=out_dir / RUN_FILE, qrels=out_dir / QRELS_FILE)
    return paths


def _write_files(folder: Path, record: dict, csv_bytes: bytes, ranked: Run | None, qrels: Qrels | None) -> None:
    """The run folder's files, each recorded in the folder's manifest as it is written;
    ``run.json`` last."""
    when = now_iso()
    record_written(atomic_write_bytes(folder / CSV_FILE, csv_bytes), when=when)
    if ranked is not None and qrels is not None:
        record_written(ranked.write_trec(folder / RUN_FILE, str(record["run_id"])), when=when)
        record_written(qrels.write_trec(folder / QRELS_FILE), when=when)
    write_measurement(folder / "run.json", record)


def warn_damaged(log_path: str | Path, warn: Callable[[str], None]) -> Callable[[int, str], None]:
    """The ``on_damaged`` of :func:`read_log` that gives ``warn`` one line per damaged line."""
    return lambda lineno, why: warn(f"log {log_path} line {lineno} is damaged ({why}); skipped")


def read_log(log_path: str | Path, on_damaged: Callable[[int, str], None] | None = None) -> list[tuple[int, dict]]:
    """``(line number, record)`` for every sound line of a JSONL log, in order. A damaged line
    (cut short, not JSON, nested too deeply, not UTF-8, not an object) is skipped and passed to
    ``on_damaged`` with its line number and the reason; blank lines are ignored. A missing log
    is empty."""
    log_path = Path(log_path)
    try:
        data = log_path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise GabaritoError(f"cannot read the log ({exc.strerror or exc})", path=log_path) from None
    out = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            reason = "not UTF-8"
        except json.JSONDecodeError as exc:
            reason = f"invalid JSON ({exc.msg}), probably cut short"
        except RecursionError:
            reason = "JSON nested too deeply to read"
        else:
            if isinstance(rec, dict):
                out.append((lineno, rec))
                continue
            reason = f"a JSON {type(rec).__name__}, not a record"
        if on_damaged is not None:
            on_damaged(lineno, reason)
    return out


def check_log_path(log_path: str | Path) -> Path:
    """Refuse, before any work, a log path that cannot be appended to: a folder, a path under a
    file, or a place this process may not write."""
    log_path = Path(log_path)
    if log_path.is_dir():
        raise GabaritoError("is a folder; --log must name a file (e.g. runs/log.jsonl)", path=log_path)
    parent = next((p for p in [log_path.parent, *log_path.parent.parents] if p.exists()), Path("."))
    if not parent.is_dir():
        raise GabaritoError(f"cannot hold a log: {parent} is a file, not a folder", path=log_path)
    target = log_path if log_path.exists() else parent
    if not os.access(target, os.W_OK | (0 if log_path.exists() else os.X_OK)):
        raise GabaritoError("cannot be written by this user", path=target)
    return log_path


#: Run folders reserved by :func:`unique_run_id` in this process and not yet written.
_RESERVED: dict[str, Path] = {}


def _release(run_id: object, keep: Path | None) -> None:
    """Remove the empty folder reserved for ``run_id`` unless it is where the run went."""
    path = _RESERVED.pop(str(run_id), None)
    if path is not None and (keep is None or path.resolve() != Path(keep).resolve()):
        try:
            path.rmdir()
        except OSError:
            pass


def unique_run_id(record: dict, log_path: str | Path, runs_dir: str | Path,
                  warn: Callable[[str], None] | None = None) -> str:
    """Give the record a run id that is neither in the log nor a folder of ``runs_dir`` (two
    runs of one config in the same second get ``-2``, ``-3``, ...); returns it.

    The id is *reserved* by creating the empty folder ``runs_dir/<id>`` (``mkdir`` is atomic),
    so runs started at the same moment by several processes never pick the same id; the run
    is then written into that folder (:func:`write_run`), or the folder is removed again when the
    run goes elsewhere or fails. ``warn`` gets one line per damaged line of the log (skipped)."""
    log_path, runs_dir = Path(log_path), Path(runs_dir)
    on_damaged = warn_damaged(log_path, warn) if warn is not None else None
    taken = {str(rec.get("run_id")) for _n, rec in read_log(log_path, on_damaged)}
    base = record["run_id"]
    candidate, n = base, 1
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        while True:
            if candidate not in taken:
                try:
                    os.mkdir(runs_dir / candidate)
                    break
                except FileExistsError:
                    pass
            n += 1
            candidate = f"{base}-{n}"
    except OSError as exc:
        raise GabaritoError(f"cannot reserve a run folder ({exc.strerror or exc})",
                            path=exc.filename or runs_dir) from None
    if not _RESERVED:
        atexit.register(_release_all)
    _RESERVED[candidate] = runs_dir / candidate
    record["run_id"] = candidate
    return candidate


def _release_all() -> None:
    """On the way out (a normal exit, or SIGTERM/Ctrl-C turned into an exception by the command):
    remove every folder still reserved and never written, so a stopped run leaves no empty
    ``runs/<id>/`` behind."""
    for run_id in list(_RESERVED):
        _release(run_id, keep=None)
    atexit.unregister(_release_all)
