"""The cost chapter's findings about the whole report's budget (``budget.json``, written by
``scripts/bench_cold_warm.py``): each study's runs from nothing and warm, per encoder backend, their
wall time by category of phase, and whether a run from nothing wrote the committed ranked lists."""

from __future__ import annotations

import re
from typing import Mapping

from gabarito.errors import GabaritoError

#: The study the cost chapter's budget figures speak of.
FLAGSHIP = "benchmark_rrf"
#: How a study's phase names fall into the page's categories (first rule that matches wins).
PHASE_RULES = [
    ("model", r"model"), ("encode", r"encod|embed|dense first|vectors?$"), ("latency", r"latenc|bench"),
    ("statistics", r"statist|score table|headline|calibration|scor"),
    ("index", r"index|ingest|server|warm_up|build"), ("queries", r"search|bm25|knn|rrf|splade|mmr|sweep|first stage"),
    ("load", r"load|gold|fetch"),
]


def phase_category(name: str) -> str:
    low = name.lower()
    for category, pattern in PHASE_RULES:
        if re.search(pattern, low):
            return category
    return "other"


def by_category(phases: Mapping[str, float] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, seconds in (phases or {}).items():
        key = phase_category(name)
        out[key] = out.get(key, 0.0) + float(seconds)
    return out


#: How ``scripts/bench_cold_warm.py`` names a run: its state, then its encoder backend.
RUN_STATES = ("cold", "warm")


def run_state(run: str, backend: str) -> str:
    """The state (``cold`` from nothing, ``warm`` with everything kept) of the run the budget keys
    ``run``, found among the keys the benchmark writes for its ``backend`` (never taken apart)."""
    for state in RUN_STATES:
        if run == f"{state}_{backend}":
            return state
    raise GabaritoError(f"budget run {run!r} is not one the benchmark writes for backend {backend!r}")


def budget_rows(budget: Mapping) -> list[dict]:
    """Per measured study and run (cold per backend, warm): its state and backend, wall time and
    seconds by category."""
    out = []
    for study, runs in budget["measured"].items():
        for run, r in runs.items():
            if "failed" in r:
                out.append({"study": study, "run": run, "failed": r["failed"]})
                continue
            out.append({"study": study, "run": run, "state": run_state(run, r["backend"]), "backend": r["backend"],
                        "wall_s": r["wall_s"], "process_wall_s": r["process_wall_s"],
                        "categories": by_category(r["phases_s"]), "runs_vs_committed": r.get("runs_vs_committed")})
    return out


def rerun_agreement(budget: Mapping, study: str = FLAGSHIP) -> list[dict]:
    """Per run of ``study`` from nothing (``cold_<backend>``): how many of its ranked lists (TREC
    files) came out byte for byte as committed (``identical``), with the same documents in the same
    order (``same_ranks``), or in another order (``differing``: their names); runs that failed or
    wrote no list are left out."""
    out = []
    for run, r in (budget["measured"].get(study) or {}).items():
        cold = "failed" not in r and run_state(run, r["backend"]) == "cold"
        same = r.get("runs_vs_committed") if cold else None
        if not same or not same["files"]:
            continue
        out.append({"run": run, "backend": r.get("backend"), "files": same["files"], "identical": same["identical"],
                    "same_ranks": same["same_rankings_other_scores"], "differing": list(same["differing_rankings"])})
    return out
