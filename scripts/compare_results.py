"""Regression guard: do two results files hold the same numbers?

    python scripts/compare_results.py OLD.json NEW.json [--tol 1e-12]
    python scripts/compare_results.py --study benchmark_rrf NEW.json   # OLD = the committed file (git HEAD)

Walks both JSON trees and reports every path where a number, string, boolean or list length
differs, with floats compared to ``--tol`` (absolute, relative to max(1, |old|)). Paths that are
expected to vary between runs are skipped: latencies, wall times and phase timings, dates,
commits, machine, load averages, versions of the tool itself, cache hit counts and anything
named like a duration. Keys present on one side only are listed apart (new keys are allowed;
removed ones are a failure). Exit status 0 when nothing but skipped paths differ, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: key names (anywhere in the tree) whose values vary from run to run by nature
VOLATILE = re.compile(
    r"(^|_)(latency|latency_ms|wall|wall_s|phases|phases_s|timings|date|git|commit|machine|load|loadavg|"
    r"history|elapsed|seconds|duration|cache|embedding_cache|index_state|index|state|frozen_at|server|"
    r"version|versions|rrf_python|queries_per_s|qps|throughput|rss|memory|build_s|ingest_s|time|times|"
    r"timing|_s|ms|per_s|warm|cold|mode|vector_graph_build_s|gabarito_version|run_id|log|database|tuning_run|heldout_run)$"
    r"|(_s|_ms|_seconds)$")


def _volatile(key: str) -> bool:
    return bool(VOLATILE.search(str(key)))


def diff(old, new, path: str, out: dict, tol: float) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if _volatile(key):
                continue
            if key not in new:
                out["removed"].append(f"{path}/{key}")
            else:
                diff(old[key], new[key], f"{path}/{key}", out, tol)
        out["added"].extend(f"{path}/{k}" for k in new if k not in old and not _volatile(k))
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            out["changed"].append(f"{path}: list of {len(old)} -> {len(new)}")
        for i, (a, b) in enumerate(zip(old, new)):
            diff(a, b, f"{path}[{i}]", out, tol)
        return
    numbers = (int, float)
    if isinstance(old, numbers) and isinstance(new, numbers) and not isinstance(old, bool) \
            and not isinstance(new, bool):
        if isinstance(old, float) or isinstance(new, float):
            if math.isnan(old) and math.isnan(new):
                return
            if abs(old - new) > tol * max(1.0, abs(old)):
                out["changed"].append(f"{path}: {old!r} -> {new!r}")
        elif old != new:
            out["changed"].append(f"{path}: {old!r} -> {new!r}")
        return
    if old != new:
        out["changed"].append(f"{path}: {str(old)[:80]!r} -> {str(new)[:80]!r}")


def committed(study: str) -> dict:
    text = subprocess.run(["git", "show", f"HEAD:case-studies/{study}/results.json"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    return json.loads(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="OLD.json NEW.json, or NEW.json with --study")
    ap.add_argument("--study", help="compare NEW.json with the committed results of this study")
    ap.add_argument("--tol", type=float, default=1e-12)
    ap.add_argument("--show", type=int, default=30, help="differences printed per kind")
    args = ap.parse_args(argv)
    if args.study:
        old, new = committed(args.study), json.loads(Path(args.files[0]).read_text())
    else:
        old, new = (json.loads(Path(f).read_text()) for f in args.files[:2])
    out = {"changed": [], "removed": [], "added": []}
    diff(old, new, "", out, args.tol)
    for kind in ("changed", "removed", "added"):
        items = out[kind]
        print(f"{kind}: {len(items)}")
        for line in items[: args.show]:
            print(f"  {line}")
    ok = not out["changed"] and not out["removed"]
    print("IDENTICAL (numbers, ranks, counts)" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
