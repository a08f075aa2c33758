"""What the cost page states about evaluation speed, from ``measures.json``
(``bench_measures.py``): numbers and keys, no sentences; :mod:`studies.peers.findings` re-exports
:func:`evaluation_cost`, which the page calls."""

from __future__ import annotations

import statistics
from typing import Mapping


def _over(times: Mapping, peer: str, route: str) -> float | None:
    """``peer``'s median seconds over ``route``'s in one section of ``measures.json`` (None when
    either did not run)."""
    if peer not in times or route not in times:
        return None
    return times[peer]["median_s"] / times[route]["median_s"]


#: What :func:`_like_for_like` adds to a row (None for a file written before that benchmark).
_LIKE_FOR_LIKE = ("prebuilt_ranx_ratio", "first_calls_s", "oneshot_peak_mb", "load_start", "load_rounds")


def _like_for_like(c: Mapping, measures: Mapping) -> dict:
    """The rest of a like-for-like section: ranx's warm evaluation over gabarito's ``Run``
    (``prebuilt_ranx_ratio``), the cache-filling or compiling first call of each tool that makes
    one (``first_calls_s``, seconds; left out of every median), each one-shot tool's median peak
    resident memory in MB (``oneshot_peak_mb``), the one-minute load average when the benchmark
    started (``load_start``) and its lowest and highest before a round (``load_rounds``: the
    benchmark's own work included)."""
    pre, shot = c["prebuilt"], c["oneshot"]
    rounds = [load[0] for load in c.get("load_average_per_round") or [] if load]
    start = ((measures.get("provenance") or {}).get("machine") or {}).get("load_average_start")
    return {"prebuilt_ranx_ratio": _over(pre, "ranx", "gabarito"),
            "first_calls_s": {t: v["first_call_s"] for t, v in pre.items() if v.get("first_call_s") is not None},
            "oneshot_peak_mb": {t: statistics.median(v["peak_rss_kib"]) / 1024 for t, v in shot.items()
                                if v.get("peak_rss_kib")},
            "load_start": start[0] if start else None,
            "load_rounds": (min(rounds), max(rounds)) if rounds else None}


def evaluation_cost(measures: Mapping) -> list[dict]:
    """Per synthetic run (by size): queries, rows, gabarito's median seconds evaluating its ``Run``
    (``gabarito_s``), ir_measures' over it, ranx's warm median over the columnar core's
    (``ranx_ratio``) and its first call (``ranx_first_s``: the first of the process compiles),
    and the largest per-query difference between gabarito and ir_measures on any measure.

    From the like-for-like benchmark (``files``, ``prebuilt``, ``oneshot`` sections) those are its
    ``prebuilt`` times, and the row adds, each a peer's time over gabarito's (above 1: gabarito is
    faster): ``files_s`` and ``files_ranx_ratio``/``files_ir_measures_ratio`` (from the TREC files
    to the means, in one process, ranx already compiled), ``oneshot_s`` and
    ``oneshot_ranx_ratio``/``oneshot_ir_measures_ratio`` (a fresh process each), and
    ``ranx_max_abs_diff`` (ranx's per-query values against ir_measures' and gabarito's). Those are
    None for a file written before, and every ranx number is None when ranx was not installed;
    the keys of :data:`_LIKE_FOR_LIKE` are described in :func:`_like_for_like`."""
    out = []
    for name, c in measures["collections"].items():
        if "prebuilt" in c:
            pre, files, shot = c["prebuilt"], c["files"], c["oneshot"]
            agree = c["agreement"]
            ranx_diffs = [a["max_abs_diff"] for k, v in agree.items() if k.startswith("ranx") for a in v.values()]
            out.append({"name": name, "queries": c["queries"], "rows": c["rows"],
                        "gabarito_s": pre["gabarito"]["median_s"], "ir_measures_ratio": _over(pre, "ir_measures", "gabarito"),
                        "ranx_ratio": _over(pre, "ranx", "gabarito_columns"),
                        "ranx_first_s": (pre.get("ranx") or {}).get("first_call_s"),
                        "max_abs_diff": max(a["max_abs_diff"] for a in agree["gabarito_vs_ir_measures"].values()),
                        "files_s": files["gabarito"]["median_s"], "files_ranx_ratio": _over(files, "ranx", "gabarito"),
                        "files_ir_measures_ratio": _over(files, "ir_measures", "gabarito"),
                        "oneshot_s": shot["gabarito"]["median_s"], "oneshot_ranx_ratio": _over(shot, "ranx", "gabarito"),
                        "oneshot_ir_measures_ratio": _over(shot, "ir_measures", "gabarito"),
                        "ranx_max_abs_diff": max(ranx_diffs) if ranx_diffs else None,
                        **_like_for_like(c, measures)})
            continue
        tools = c["tools"]
        agree = c.get("agreement_with_ir_measures") or {}
        ranx = tools.get("ranx") or {}
        out.append({"name": name, "queries": c["queries"], "rows": c["rows"], "gabarito_s": tools["gabarito"]["median_s"],
                    "ir_measures_ratio": (tools.get("ir_measures") or {}).get("ratio_to_gabarito_median"),
                    "ranx_ratio": ranx.get("ratio_to_gabarito_columns_median"), "ranx_first_s": ranx.get("first_call_s"),
                    "max_abs_diff": max((a["max_abs_diff"] for a in agree.values()), default=None),
                    **dict.fromkeys(("files_s", "files_ranx_ratio", "files_ir_measures_ratio", "oneshot_s",
                                     "oneshot_ranx_ratio", "oneshot_ir_measures_ratio", "ranx_max_abs_diff",
                                     *_LIKE_FOR_LIKE))})
    return sorted(out, key=lambda r: r["rows"])
