"""Saving an evaluation run: the spreadsheet (``results.csv``), ``run.json`` and the run log.

Every run record is appended to a JSONL log (``runs/log.jsonl`` by default); a record holds the
segmentation version, model and weights hash, engine, parameters, corpus and gold hashes, date,
commit and the per-query rows, so two runs can be compared later (:mod:`gabarito.evaluation.compare`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gabarito.errors import GabaritoError
from gabarito.evaluation.config import CSV_COLUMNS
from gabarito.study.records import append_jsonl


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


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
        writer.writerow([r["id"], r["query"], r["type"], r["severity"], _cell(r["answerable"]),
                         "; ".join(r["expected"]), returned, _cell(r["hit@1"]), _cell(r["hit@3"]),
                         _cell(r["hit@5"]), _cell(r["rr"]), r["false_positive"],
                         "" if top is None else f"{top:.4g}", r["top_segment"]])
    return buf.getvalue()


def write_run(record: dict, out_dir: str | Path, log_path: str | Path) -> dict[str, Path]:
    """Write ``out_dir/results.csv`` (UTF-8 with a byte-order mark, so spreadsheets read the
    accents), ``out_dir/run.json`` and append the record to the JSONL log at ``log_path``.

    All or nothing: everything is rendered first, the two files are written in a temporary
    folder renamed into place as ``out_dir``, then the log is rewritten atomically
    (:func:`gabarito.study.records.append_jsonl`); if that fails, ``out_dir`` is removed again. An
    ``out_dir`` that already holds files is refused. Returns the three paths."""
    out_dir, log_path = Path(out_dir), Path(log_path)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise GabaritoError("already holds a run or other files; choose another output folder", path=out_dir)
    try:
        csv_bytes = results_csv(record).encode("utf-8-sig")
        json_bytes = (json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise GabaritoError(f"the run record cannot be saved ({exc})", path=out_dir) from exc
    stage: Path | None = None
    placed = False
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
        for name, data in (("results.csv", csv_bytes), ("run.json", json_bytes)):
            with open(stage / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(stage, out_dir)
        placed = True
        append_jsonl(log_path, record)
    except BaseException as exc:
        if placed:
            shutil.rmtree(out_dir, ignore_errors=True)
        elif stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        if isinstance(exc, OSError):
            raise GabaritoError(f"cannot write the run ({exc.strerror or exc})",
                                path=exc.filename or out_dir) from exc
        raise
    return {"csv": out_dir / "results.csv", "json": out_dir / "run.json", "log": log_path}


def _logged_ids(log_path: Path) -> set[str]:
    if not log_path.exists():
        return set()
    ids = set()
    for line in log_path.read_text(encoding="utf-8").splitlines():
        try:
            ids.add(json.loads(line).get("run_id"))
        except (json.JSONDecodeError, AttributeError):
            continue
    return ids


def unique_run_id(record: dict, log_path: str | Path, runs_dir: str | Path) -> str:
    """Give the record a run id that is neither in the log nor a folder of ``runs_dir`` (two
    runs of one config in the same second get ``-2``, ``-3``, ...); returns it."""
    log_path, runs_dir = Path(log_path), Path(runs_dir)
    taken = _logged_ids(log_path)
    base = record["run_id"]
    candidate, n = base, 1
    while candidate in taken or (runs_dir / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    record["run_id"] = candidate
    return candidate
