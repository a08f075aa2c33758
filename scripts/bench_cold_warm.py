"""The cold-run budget: each study's wall time by phase, from nothing (cold) and again (warm), and
a site rebuild with no change; written to ``case-studies/peers/budget.json``.

Cold = a fresh, empty cache folder (``GABARITO_CACHE_DIR``: no unpacked model, no ONNX export,
no vector, no database) and a fresh data folder (datasets copied again from the mirror); warm =
the same study rerun at once on that cache. Each run is the study's own script (``gabarito
study <name> --out <scratch>``), so the phases are what the runner records (``phases_s``,
``wall_s``); the process's wall time (imports included) is kept beside them. ``--backends``
runs the cold pass once per encoder backend (``auto``: ONNX Runtime when verified, ``torch``).

Studies not run here are listed with the phases of their committed results (a warm run: their
vectors were cached) and the measured encoding rate of ``case-studies/peers/encoders.json``,
so the page can state what their cold run would add and on what basis.

    python scripts/bench_cold_warm.py --studies benchmark_rrf,helpcenter,standard_collections,judgments --backends auto,torch
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.measure.timing import load_average
from gabarito.study.runner import say, variant_main
from gabarito.study.spec import StudySpec, all_studies

ROOT = Path(__file__).resolve().parent.parent

PEERS = ROOT / "case-studies" / "peers"


def add_arguments(ap) -> None:
    ap.add_argument("--studies", default="benchmark_rrf,helpcenter,standard_collections,judgments", help="studies run cold and warm here")
    ap.add_argument("--backends", default="auto,torch", help="encoder backends of the cold pass")
    ap.add_argument("--scratch", type=Path, default=None, help="folder for the caches and outputs (default: temp)")
    ap.add_argument("--site", action=argparse.BooleanOptionalAction, default=True, help="also time two site builds")


def run_once(name: str, cache: Path, data: Path, out: Path, backend: str, mirror: str | None,
             extra_env: dict | None = None, compare_runs: bool = True) -> dict:
    """One run of study ``name`` in a child process; its results' phases and the process wall time.
    ``extra_env``: more environment for the child (added last); ``compare_runs``: also compare its
    TREC files with the committed ones byte for byte (``runs_vs_committed``)."""
    env = {**os.environ, "GABARITO_CACHE_DIR": str(cache), "GABARITO_DATA_DIR": str(data),
           "GABARITO_ENCODER_BACKEND": backend, **(extra_env or {})}
    cmd = [sys.executable, "-m", "gabarito.cli", "study", name, "--out", str(out)]
    if mirror:
        env["GABARITO_DATA_MIRROR"] = mirror
    load_before = load_average()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return {"failed": f"exit {proc.returncode}: {tail[:400]}", "process_wall_s": wall}
    spec = all_studies()[name]
    results = json.loads((out / spec.results).read_text(encoding="utf-8"))
    return {"process_wall_s": round(wall, 2), "wall_s": results.get("wall_s"), "phases_s": results.get("phases_s"),
            "backend": backend, "load_average_before": load_before, "load_average_after": load_average(),
            "notices": [line for line in proc.stderr.splitlines() if "notice:" in line][:5],
            **({"runs_vs_committed": same_runs(out / "runs", spec.dir / "runs")} if compare_runs else {})}


def same_runs(new: Path, old: Path) -> dict:
    """The run's TREC files against the committed ones, byte for byte (same rankings, same scores)."""
    files = sorted(p.name for p in new.glob("*.trec")) if new.is_dir() else []
    differ = [f for f in files if not (old / f).is_file() or (old / f).read_bytes() != (new / f).read_bytes()]
    ranks = [f for f in differ if (old / f).is_file() and _rankings(old / f) == _rankings(new / f)]
    return {"files": len(files), "identical": len(files) - len(differ), "same_rankings_other_scores": len(ranks),
            "differing_rankings": [f for f in differ if f not in ranks][:20]}


def _rankings(path: Path) -> list[tuple[str, str, str]]:
    """(query, document, rank) of every line of a TREC run file."""
    return [tuple(line.split()[i] for i in (0, 2, 3)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def study_runs(name: str, scratch: Path, backends: list[str], mirror: str | None) -> dict:
    runs = {}
    for backend in backends:
        cache, data = scratch / f"{name}-{backend}" / "cache", scratch / f"{name}-{backend}" / "data"
        say(f"== {name}: cold ({backend})")
        runs[f"cold_{backend}"] = run_once(name, cache, data, scratch / f"{name}-{backend}" / "out-cold",
                                           backend, mirror)
        if backend == backends[0]:
            say(f"== {name}: warm ({backend})")
            runs[f"warm_{backend}"] = run_once(name, cache, data, scratch / f"{name}-{backend}" / "out-warm",
                                               backend, mirror)
    return runs


def committed(name: str, spec: StudySpec) -> dict:
    """The committed results' phases (a warm run) and when it ran."""
    try:
        results = json.loads(spec.results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"missing": str(spec.results_path.relative_to(ROOT))}
    prov = results.get("provenance") or {}
    return {"wall_s": results.get("wall_s"), "phases_s": results.get("phases_s"),
            "commit": (prov.get("git") or {}).get("commit"), "date": prov.get("date")}


def site_builds(scratch: Path) -> dict:
    """Two builds into a scratch folder: the first may run notebooks, the second changes nothing."""
    from gabarito.publish.site import build

    times = []
    for i in range(2):
        t0 = time.perf_counter()
        build(ROOT, scratch / "site", allow_dirty=True)
        times.append(round(time.perf_counter() - t0, 2))
        say(f"== site build {i + 1}: {times[-1]} s")
    return {"first_s": times[0], "no_change_s": times[1], "load_average": load_average()}


def run(ctx) -> dict:
    args = ctx.args
    names = [n.strip() for n in args.studies.split(",") if n.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    known = all_studies()
    if any(n not in known for n in names) or not backends:
        raise GabaritoError(f"studies from {sorted(known)} and at least one backend")
    scratch_ctx = tempfile.TemporaryDirectory(prefix="gabarito-budget-") if args.scratch is None else None
    scratch = Path(scratch_ctx.name if scratch_ctx else args.scratch)
    load_start = load_average()
    try:
        measured = {}
        for name in names:
            with ctx.phase(name):
                measured[name] = study_runs(name, scratch, backends, ctx.mirror())
        site = None
        if args.site:
            with ctx.phase("site"):
                site = site_builds(scratch)
    finally:
        if scratch_ctx:
            scratch_ctx.cleanup()
    others = {n: committed(n, s) for n, s in known.items() if n not in names}
    prov = ctx.provenance(corpus={"studies": names}, model=None, engine={"python": {"name": "Python", "version": sys.version.split()[0]}},
                          parameters={"backends": backends, "cold": "fresh GABARITO_CACHE_DIR and GABARITO_DATA_DIR",
                                      "warm": "the same folders, run again at once"})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_average())
    return {"provenance": prov, "measured": measured, "site": site, "not_run_committed": others}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(PEERS, run, add_arguments, name="peers/budget", title="What a rerun costs: cold and warm wall time by phase",
                 results="budget.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
