"""What installing gabarito costs, as the evaluate chapter states it: functions of
``install.json`` (written by ``scripts/bench_install.py``)."""

from __future__ import annotations

from typing import Mapping

from gabarito.errors import GabaritoError

#: the installs ``bench_install.py`` measures: the wheel alone, and the wheel with the extras
CORE, FULL = "core", "full"


def install_summary(install: Mapping) -> dict:
    """The core install (size in MB, torch's share, packages, seconds, pip version) and, where it
    was measured, the full one and how much more it takes; ``extras``: the full install's extras."""
    installs = install.get("installs") or {}
    if CORE not in installs:
        raise GabaritoError("holds no core install (run scripts/bench_install.py)", path="install.json")
    core, full = installs[CORE], installs.get(FULL)
    out = {key: core[key] for key in ("size_mb", "torch_mb", "packages", "seconds", "pip")}
    out["torch_share"] = core["torch_mb"] / core["size_mb"] if core["size_mb"] else None
    out["extras"] = ((install.get("provenance") or {}).get("parameters") or {}).get("extras")
    out["full"] = None if full is None else {
        "size_mb": full["size_mb"], "packages": full["packages"], "seconds": full["seconds"],
        "extra_mb": full["size_mb"] - core["size_mb"], "extra_packages": full["packages"] - core["packages"]}
    return out
