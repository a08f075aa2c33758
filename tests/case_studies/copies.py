"""Run a study script on a copy of its folder.

A script imports its study's other modules as ``studies.<study>.<module>``; run in place, that is the
repository's ``case-studies/``. Run from a copy, it must be the copy's modules, whose paths
(``HERE``, the lock files beside them) name the copy: :func:`studies_env` gives a subprocess a
``PYTHONPATH`` whose ``studies`` package is the copied ``case-studies`` folder, ahead of the
installed one.

:func:`judgments_copy` is the judgments study's folder copied for a test that writes into it (its
adjudication, its blind regrade), with the flagship's gold files beside it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JUDGMENTS = ROOT / "case-studies" / "judgments"
FLAGSHIP = ROOT / "case-studies" / "benchmark_rrf"
#: the flagship's frozen question sets the judgments study reads, and their names there
GOLD = ["questions.json", "questions_extended.json", "questions_published.json",
        "protocols/questions_name_only.json", "protocols/questions_disjoint.json"]
SETS = ["main", "extended", "published", "name_only", "disjoint"]


def load(path: str | Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def judgments_copy(tmp_path: Path, *, leave_out: tuple[str, ...] = ("results.json",),
                   flagship: list[str] | tuple[str, ...] = tuple(GOLD)) -> Path:
    """``<tmp_path>/case-studies/judgments``: the judgments folder without the files matching
    ``leave_out`` (glob patterns), and the flagship's files ``flagship`` (paths inside
    ``benchmark_rrf``) beside it; returns the copied judgments folder."""
    here = tmp_path / "case-studies" / "judgments"
    shutil.copytree(JUDGMENTS, here, ignore=shutil.ignore_patterns(*leave_out))
    for rel in flagship:
        target = here.parent / "benchmark_rrf" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FLAGSHIP / rel, target)
    return here


def studies_env(case_studies: str | Path, env: dict | None = None) -> dict:
    """``env`` (default: this process's) with ``PYTHONPATH`` = a folder holding ``studies`` (a link
    to the copied ``case_studies``), then the repository (for ``gabarito``)."""
    case_studies = Path(case_studies).resolve()
    out = dict(os.environ if env is None else env)
    if case_studies == (ROOT / "case-studies").resolve():  # in place: the installed package is the copy
        out["PYTHONPATH"] = str(ROOT)
        return out
    init = case_studies / "__init__.py"
    if not init.exists():
        init.write_bytes((ROOT / "case-studies" / "__init__.py").read_bytes())
    top = case_studies.parent / ".import"
    top.mkdir(exist_ok=True)
    link = top / "studies"
    if not link.is_symlink():
        link.symlink_to(case_studies, target_is_directory=True)
    out["PYTHONPATH"] = os.pathsep.join([str(top), str(ROOT)])
    return out
