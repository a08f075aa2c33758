"""Run a study script on a copy of its folder.

A script imports its study's other modules as ``studies.<study>.<module>``; run in place, that is the
repository's ``case-studies/``. Run from a copy, it must be the copy's modules, whose paths
(``HERE``, the lock files beside them) name the copy: :func:`studies_env` gives a subprocess a
``PYTHONPATH`` whose ``studies`` package is the copied ``case-studies`` folder, ahead of the
installed one.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
