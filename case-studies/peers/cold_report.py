"""The whole report rebuilt from nothing in one run (``cold_report.json``, written by
``scripts/bench_cold_report.py``), as numbers a page or the developers' budget can state: the total
time, each study's, and how many of the files it wrote reproduce the committed ones."""

from __future__ import annotations

from typing import Mapping


#: How many of the longest studies the page names.
LONGEST = 2


def whole_report(cold: Mapping | None) -> dict | None:
    """The whole report measured cold in one run (``cold_report.json``, written by
    ``scripts/bench_cold_report.py``): total seconds (the studies' processes and the committed
    runs of the studies left out), per study seconds, the left-out studies' committed
    seconds, files reproduced, the studies that failed, the :data:`LONGEST` longest ``(study,
    seconds)``, the highest load recorded (``load_max``); ``None`` without that file."""
    if not cold:
        return None
    studies = cold.get("studies") or {}
    per = {n: r.get("process_wall_s") for n, r in studies.items()}
    checks = {n: r["check"] for n, r in studies.items() if "check" in r}
    left = {n: r.get("wall_s") for n, r in (cold.get("not_run") or {}).items() if r.get("wall_s") is not None}
    return {"total_s": sum(v or 0.0 for v in (*per.values(), *left.values())),
            "per_study_s": per, "committed_s": left,
            "files": sum(c["files"] for c in checks.values()),
            "reproduced": sum(c["reproduced"] for c in checks.values()),
            "not_reproduced_count": {n: c["files"] - c["reproduced"] for n, c in checks.items()},
            "not_reproduced": {n: c["not_reproduced"] for n, c in checks.items() if c["not_reproduced"]},
            "failed": sorted(n for n, r in studies.items() if "failed" in r),
            "longest": sorted({**per, **left}.items(), key=lambda kv: -(kv[1] or 0.0))[:LONGEST],
            "load_max": _load_max(cold)}


def _load_max(cold: Mapping) -> float | None:
    """The highest one-minute load average the run recorded (at its start and end, and before
    and after each study), or None when it recorded none; above
    :data:`gabarito.measure.timing.MAX_LOAD` other programs shared the processor."""
    machine = (cold.get("provenance") or {}).get("machine") or {}
    loads = [machine.get("load_average_start"), machine.get("load_average_end")]
    for r in (cold.get("studies") or {}).values():
        loads += [r.get("load_average_before"), r.get("load_average_after")]
    ones = [load[0] for load in loads if load]
    return max(ones) if ones else None
