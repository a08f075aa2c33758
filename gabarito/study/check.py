"""Does a rerun from nothing reproduce a study's committed files?

``gabarito report --check STUDY`` reruns the study's script cold (``--cold``) into a temporary
folder, with an empty vector cache (``$GABARITO_CACHE_DIR``) and its own database folder, and
compares every file the rerun wrote with the committed file of the same name. A reader trained by
another study (``trained:<fold>``) is an input of the study, like its gold: the rerun reads it from
the user's own cache, checked by the weights' sha256 that the training results record
(``$GABARITO_TRAINED_READERS``); training it again is the training study's own rerun. The verdicts:

* ``identical``: byte for byte;
* ``same numbers``: a JSON results file whose values all agree once the record of the run itself is
  set aside, by its path from the file's root (:func:`gabarito.study.volatile.volatile`): the
  provenance, date, commit, machine, phase timings and wall time at the root, a vector cache's hits
  and misses and an evaluation's timings, and the measured times and rates the file's declaration
  names (:data:`gabarito.study.volatile.DECLARED`), which no rerun repeats; every other value is
  compared, whatever its name (a ``latency_ms`` no declaration names is compared);
* ``run log``: a JSON-lines log whose every record holds only the record of a run (its date, state
  and times: a line added per run, e.g. ``wall_times.jsonl``), which no rerun repeats; not a result;
* ``same ranks``: a TREC run file with the same documents in the same order for every question;
  only scores differ (in their last digits, typically);
* ``differs``: how many lines and questions of a run file differ (and how many of them within the
  top 10), or the first paths of a JSON file whose values differ;
* ``missing`` (committed, not written by the rerun) and ``new`` (written, not committed);
* ``modified``: the committed file no longer matches the sha256 its run recorded in the folder's
  ``results.sha256.json``, whatever the rerun gave (not reproduced).

A ``gabarito evaluate`` run is named by the moment it ran and its configuration's hash
(``20261205-110512-1ccc9fc0``): a rerun's run folders are paired with the committed ones of the same
configuration, in the order they ran, and a run id inside a file is compared by its configuration
part only. A JSON-lines file is compared record by record, like a JSON file.

:func:`compare_file` is the comparison; :func:`check_study` the rerun. The verdicts of a file are
ordered from the best (``identical``) to the worst, and :data:`REPRODUCED` says which count as
reproduced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from gabarito.errors import GabaritoError
from gabarito.study.integrity import MANIFEST, manifest_path, read_manifest, state
from gabarito.study.runner import run_script
from gabarito.study.spec import StudySpec
from gabarito.study.volatile import declared, volatile

#: Verdicts that count as reproduced.
REPRODUCED = ("identical", "same numbers", "same ranks", "run log")
#: Keys of a log record that describe the run (with the volatile ones), never a result.
RUN_LOG_KEYS = frozenset({"state"})
#: A ``gabarito evaluate`` run id: when it ran, 8 hex digits of its configuration's hash, and
#: ``-2``, ``-3``, ... for a later run of the same configuration in the same second
#: (:func:`gabarito.evaluation.runlog.unique_run_id`).
_RUN_ID = r"(\d{8}-\d{6})-([0-9a-f]{8})(?:-(\d+))?"
RUN_ID = re.compile(rf"^{_RUN_ID}$")
RUN_ID_IN = re.compile(rf"\b{_RUN_ID}\b")
#: How many differing JSON paths a verdict names.
SHOWN_PATHS = 5


@dataclass(frozen=True)
class FileCheck:
    """One file's verdict: ``path`` relative to the study folder, ``verdict``, ``detail``."""

    path: str
    verdict: str
    detail: str = ""

    @property
    def reproduced(self) -> bool:
        return self.verdict in REPRODUCED

    def line(self) -> str:
        return f"{self.path}: {self.verdict}" + (f" ({self.detail})" if self.detail else "")


def trec_lists(path: Path) -> dict[str, list[tuple[str, str]]]:
    """``{question: [(document, score), ...]}`` in rank order (the file's rank column)."""
    rows: dict[str, list[tuple[int, str, str]]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise GabaritoError(f"expected 6 columns, got {len(parts)}", path=path, record=f"line {n}")
        rows.setdefault(parts[0], []).append((int(parts[3]), parts[2], parts[4]))
    return {q: [(d, s) for _, d, s in sorted(r)] for q, r in rows.items()}


def compare_trec(committed: Path, rerun: Path) -> tuple[str, str]:
    """The verdict of a rerun TREC run file against the committed one (the run tag is ignored)."""
    a, b = trec_lists(committed), trec_lists(rerun)
    docs_a = {q: [d for d, _ in v] for q, v in a.items()}
    docs_b = {q: [d for d, _ in v] for q, v in b.items()}
    if a == b:
        return "identical", ""
    if docs_a == docs_b:
        return "same ranks", "scores differ, documents and order the same"
    questions = sorted(set(docs_a) | set(docs_b))
    lines = top = changed = 0
    for q in questions:
        x, y = docs_a.get(q, []), docs_b.get(q, [])
        diff = [i for i in range(max(len(x), len(y))) if (x[i] if i < len(x) else None) != (y[i] if i < len(y) else None)]
        lines += len(diff)
        top += sum(1 for i in diff if i < 10)
        changed += bool(diff)
    total = sum(len(v) for v in docs_a.values())
    return "differs", f"{lines} of {total} lines in {changed} of {len(questions)} questions; {top} within the top 10"


def _walk(a, b, path: str, segments: tuple[str, ...] = (),
          declared_paths: tuple[tuple[str, ...], ...] = ()) -> Iterator[tuple[str, str]]:
    """``(kind, path)`` of every difference: ``value`` (the same place holds another value) or
    ``key`` (a key or list item only one side has). Every value is compared except those
    :func:`volatile` names by their path (with the file's ``declared_paths``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            here = (*segments, str(k))
            if volatile(here, declared_paths):
                continue
            if k not in a or k not in b:
                yield "key", f"{path}/{k}" + ("" if k in b else " (committed only)")
            else:
                yield from _walk(a[k], b[k], f"{path}/{k}", here, declared_paths)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield "key", f"{path}[{len(a)} vs {len(b)} items]"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _walk(x, y, f"{path}[{i}]", (*segments, "[]"), declared_paths)
    elif isinstance(a, str) and isinstance(b, str):
        if RUN_ID_IN.sub(r"<run>-\2", a) != RUN_ID_IN.sub(r"<run>-\2", b):  # a run id: its configuration
            yield "value", path or "/"
    elif a != b or type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        yield "value", path or "/"


def _load_json(path: Path, lines: bool):
    try:
        text = path.read_text(encoding="utf-8")
        return [json.loads(x) for x in text.splitlines() if x.strip()] if lines else json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"not JSON ({exc})", path=path) from None


def compare_json(committed: Path, rerun: Path, paths: tuple[tuple[str, ...], ...] = ()) -> tuple[str, str]:
    """The verdict of a rerun JSON (or JSON-lines: a list of records) file against the committed
    one (the values :func:`volatile` names set aside, with the file's declared ``paths``)."""
    if committed.read_bytes() == rerun.read_bytes():
        return "identical", ""
    lines = rerun.suffix == ".jsonl"
    a, b = _load_json(committed, lines), _load_json(rerun, lines)
    found = {"value": [], "key": []}
    if lines:  # each record of a log is compared from its own root
        pairs = [(x, y, f"[{i}]") for i, (x, y) in enumerate(zip(a, b))]
        if len(a) != len(b):
            found["key"].append(f"[{len(a)} vs {len(b)} records]")
    else:
        pairs = [(a, b, "")]
    for x, y, where in pairs:
        for kind, p in _walk(x, y, where, (), paths):
            found[kind].append(p)
    if not found["value"] and not found["key"]:
        return "same numbers", "only the record of the run differs"
    parts = []
    for kind, what in (("value", "values differ"), ("key", "fields only one side has")):
        if found[kind]:
            more = ", …" if len(found[kind]) > SHOWN_PATHS else ""
            parts.append(f"{len(found[kind])} {what}: " + ", ".join(found[kind][:SHOWN_PATHS]) + more)
    return "differs", "; ".join(parts)


def _is_run_log(path: Path, paths: tuple[tuple[str, ...], ...] = ()) -> bool:
    """Whether every line of a JSON-lines file is a record of a run (volatile keys and its state)."""
    try:
        records = _load_json(path, lines=True)
    except GabaritoError:
        return False
    return bool(records) and all(isinstance(r, dict) and all(
        k in RUN_LOG_KEYS or volatile((k,), paths) for k in r) for r in records)


def compare_file(committed: Path, rerun: Path, paths: tuple[tuple[str, ...], ...] = ()) -> tuple[str, str]:
    """Verdict and detail for one file present in both places (``paths``: its declared volatile
    paths, :func:`gabarito.study.volatile.declared`)."""
    if committed.read_bytes() == rerun.read_bytes():
        return "identical", ""
    if rerun.suffix == ".jsonl" and _is_run_log(committed, paths) and _is_run_log(rerun, paths):
        return "run log", "dates and times of the runs, a line per run; not a result"
    if rerun.suffix == ".trec":
        return compare_trec(committed, rerun)
    if rerun.suffix in (".json", ".jsonl"):
        return compare_json(committed, rerun, paths)
    a = committed.read_text(encoding="utf-8", errors="replace").splitlines()
    b = rerun.read_text(encoding="utf-8", errors="replace").splitlines()
    differing = sum(1 for x, y in zip(a, b) if x != y) + abs(len(a) - len(b))
    return "differs", f"{differing} of {max(len(a), len(b))} lines"


def _run_folders(root: Path) -> dict[tuple[Path, str], list[Path]]:
    """``{(parent, configuration hash): [run folder, ...] in the order they ran}`` under ``root``
    (paths relative to it)."""
    found: dict[tuple[Path, str], list[tuple[tuple[str, int], Path]]] = {}
    for p in root.rglob("*"):
        m = RUN_ID.match(p.name)
        if m and p.is_dir():  # in the order they ran: time, then the same second's -2, -3, ...
            found.setdefault((p.parent.relative_to(root), m.group(2)), []).append(
                ((m.group(1), int(m.group(3) or 1)), p.relative_to(root)))
    return {key: [p for _, p in sorted(folders)] for key, folders in sorted(found.items())}


def pair_run_folders(committed: Path, rerun: Path) -> tuple[dict[Path, Path], list[Path]]:
    """Each rerun run folder (relative) -> the committed one of the same configuration and order,
    and the committed run folders left without a pair (in parents the rerun wrote runs into)."""
    mine, theirs = _run_folders(committed), _run_folders(rerun)
    pairs, unpaired = {}, []
    for key, new in theirs.items():
        old = mine.get(key, [])
        pairs.update(zip(new, old))
        unpaired += old[len(new):]
    parents = {parent for parent, _ in theirs}
    unpaired += [f for (parent, h), olds in mine.items() if parent in parents and (parent, h) not in theirs
                 for f in olds]
    return pairs, sorted(unpaired)


def _committed_path(rel: Path, pairs: dict[Path, Path]) -> Path:
    """Where the committed counterpart of a rerun file lies (through its run folder's pair)."""
    for i in range(len(rel.parts) - 1, 0, -1):
        head = Path(*rel.parts[:i])
        if head in pairs:
            return pairs[head].joinpath(*rel.parts[i:])
    return rel


def _manifest_state(path: Path) -> str | None:
    """Why a committed file that its folder's manifest records is not the one recorded, or None
    (also None for a file no manifest records: a TREC run, a log written beside the results)."""
    if path.name not in read_manifest(manifest_path(path)):
        return None
    return state(path)


def compare_folders(committed: Path, rerun: Path) -> list[FileCheck]:
    """Every file the rerun wrote (under ``rerun``) against ``committed`` (a run folder's files
    against those of its pair, :func:`pair_run_folders`, named as committed; each with the volatile
    paths declared for ``<committed's name>/<its path>``); committed files of the same folders that
    the rerun did not write, and committed run folders without a pair, are ``missing``."""
    out = []
    pairs, unpaired = pair_run_folders(committed, rerun)
    # the manifests (results.sha256.json) record each run's own files: a rerun's never matches
    written = sorted(p for p in rerun.rglob("*") if p.is_file() and not p.name.endswith(".sha256.json")
                     and not p.name.startswith("."))  # the manifest's lock file
    folders = {}
    for p in written:
        rel = _committed_path(p.relative_to(rerun), pairs)
        folders[rel.parent] = p.parent
        mine = committed / rel
        if not mine.is_file():
            out.append(FileCheck(p.relative_to(rerun).as_posix(), "new", "written by the rerun, not committed"))
            continue
        verdict, detail = compare_file(mine, p, declared(f"{committed.name}/{rel.as_posix()}"))
        changed = _manifest_state(mine)
        if changed:  # whatever the rerun gave, the committed file is not the one its run wrote
            verdict, detail = "modified", (f"the committed file no longer matches its {MANIFEST}: {changed}; "
                                           f"against the rerun: {verdict}" + (f", {detail}" if detail else ""))
        out.append(FileCheck(rel.as_posix(), verdict, detail))
    for folder, theirs in sorted(folders.items()):
        if folder == Path("."):
            continue
        for p in sorted((committed / folder).glob("*")):
            if (p.is_file() and not p.name.endswith(".sha256.json") and not p.name.startswith(".")
                    and not (theirs / p.name).exists()):
                out.append(FileCheck((folder / p.name).as_posix(), "missing", "committed, not written by the rerun"))
    out += [FileCheck(f.as_posix() + "/", "missing", "a committed run the rerun did not repeat") for f in unpaired]
    return out


def check_study(spec: StudySpec, extra: list[str] | None = None, *, keep: Path | None = None) -> list[FileCheck]:
    """Rerun ``spec`` cold into a temporary folder (empty vector cache, own database folder; trained
    readers read from the user's cache) and compare what it wrote with the committed files.
    ``keep``: copy the rerun's folder there."""
    from unittest import mock

    from gabarito.retrieval.models.sources import cache_dir
    from gabarito.retrieval.rerank.training import TRAINED_READERS_ENV

    readers = str(cache_dir() / "cross-encoders")  # inputs, not results: read where they are
    with tempfile.TemporaryDirectory(prefix=f"gabarito-check-{spec.name.replace('/', '-')}-") as tmp:
        tmp = Path(tmp)
        env = {"GABARITO_CACHE_DIR": str(tmp / "cache"), TRAINED_READERS_ENV: readers}
        with mock.patch.dict(os.environ, env):  # restored afterwards, whatever happens
            run_script(spec, ["--out", str(tmp / "out"), "--db-dir", str(tmp / "db"), "--cold", *(extra or [])])
        if keep is not None:
            shutil.copytree(tmp / "out", keep, dirs_exist_ok=True)
        return compare_folders(spec.dir, tmp / "out")
