"""The whole report from nothing, the way a user reruns it, timed and checked; written to
``case-studies/peers/cold_report.json``.

Every study runs in the report's order (:func:`gabarito.study.spec.in_order`, the order of
``gabarito report``: each after the studies it waits for, otherwise by name), each in its own
child process (``gabarito study <name> --out <scratch>``), and all of them share **one** empty
cache folder (``GABARITO_CACHE_DIR``: no unpacked model, no ONNX export, no vector, no database)
and one fresh data folder (datasets copied again from the mirror and checked). A vector, an ONNX
export or an unpacked model that one study computes is read by the next, as on a user's machine;
``scripts/bench_cold_warm.py`` instead gives each study a cache of its own, so the sum of its
cold runs counts the classic collections' encoding twice.

A study left out (``--studies``) is recorded with its committed run (``not_run``: wall time, commit,
date), which the budget adds with that basis stated. Leave one out when it cannot run here as it
was recorded: a study that reads a reader trained on another machine whose weights this machine
does not reproduce bit for bit (training repeats them only to float rounding), for instance.

Not in the figure: the site build (``budget.json`` times it: seconds, and its pages read this
file, so it cannot run inside this script) and the studies' variants (the trainings of the second
readers, each its own long run). The readers they trained are read from the user's cache, each checked by its weights'
sha256, as ``gabarito report --check`` does. Every file a study writes is compared with the
committed file of the same name (:func:`gabarito.study.check.compare_folders`), so the time is
that of a run which reproduces the committed results, and the record says so file by file.

    python scripts/bench_cold_report.py                       # every study (six took 38 min on 2 cores)
    python scripts/bench_cold_report.py --studies judgments   # a subset, in the report's order
    python scripts/bench_cold_report.py --engines-path DIR    # DIR on the children's PYTHONPATH
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench_cold_warm import committed, run_once

from gabarito.errors import GabaritoError
from gabarito.measure.timing import load_average
from gabarito.study.check import compare_folders
from gabarito.study.runner import say, variant_main
from gabarito.study.spec import all_studies, in_order

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "case-studies" / "peers"
#: How many not-reproduced files a study's record names.
SHOWN = 20


def add_arguments(ap) -> None:
    ap.add_argument("--studies", default="", help="a comma-separated subset (default: every study)")
    ap.add_argument("--backend", default="auto", help="encoder backend (auto: ONNX Runtime when verified)")
    ap.add_argument("--scratch", type=Path, default=None, help="folder for the cache, data and outputs (default: temp)")
    ap.add_argument("--engines-path", default=os.environ.get("GABARITO_PEERS_PATH"),
                    help="a folder put first on the children's PYTHONPATH: where the peers' engines "
                         "(pyserini, tantivy) are installed when this environment lacks them "
                         "(or $GABARITO_PEERS_PATH)")


def report_order(names: str, studies: list | None = None) -> list:
    """The studies in the report's order (``studies``: already in it, else every study); ``names``
    (comma separated) keeps a subset."""
    studies = in_order(all_studies()) if studies is None else studies
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = sorted(set(wanted) - {s.name for s in studies})
    if unknown:
        raise GabaritoError(f"unknown studies {', '.join(unknown)}; known: {', '.join(s.name for s in studies)}")
    return [s for s in studies if not wanted or s.name in wanted]


def verdicts(checks) -> dict:
    """A study's file checks in numbers: how many files, how many reproduced, each verdict's
    count, and the first :data:`SHOWN` files not reproduced."""
    return {"files": len(checks), "reproduced": sum(c.reproduced for c in checks),
            "verdicts": dict(sorted(Counter(c.verdict for c in checks).items())),
            "not_reproduced": [c.line() for c in checks if not c.reproduced][:SHOWN]}


def child_env(engines_path: str | None) -> dict:
    """What the children get besides the fresh folders: the user's trained readers (inputs, read
    where they are) and, when given, the engines' folder on PYTHONPATH."""
    from gabarito.retrieval.models.sources import cache_dir
    from gabarito.retrieval.rerank.training import TRAINED_READERS_ENV

    env = {TRAINED_READERS_ENV: str(cache_dir() / "cross-encoders")}
    if engines_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(engines_path), os.environ.get("PYTHONPATH")) if p)
    return env


def run(ctx) -> dict:
    args = ctx.args
    everything = in_order(all_studies())
    order = report_order(args.studies, everything)
    scratch_ctx = tempfile.TemporaryDirectory(prefix="gabarito-cold-report-") if args.scratch is None else None
    scratch = Path(scratch_ctx.name if scratch_ctx else args.scratch)
    env, studies = child_env(args.engines_path), {}
    load_start = load_average()
    try:
        for spec in order:
            out = scratch / "out" / spec.name
            say(f"== {spec.name} (cold report, shared cache)")
            with ctx.phase(spec.name):
                record = run_once(spec.name, scratch / "cache", scratch / "data", out, args.backend,
                                  ctx.mirror(), env, compare_runs=False)  # compare_folders checks every file
            if "failed" not in record:
                record["check"] = verdicts(compare_folders(spec.dir, out))
                say(f"   {record['process_wall_s']} s; {record['check']['reproduced']} of "
                    f"{record['check']['files']} files reproduced")
            studies[spec.name] = record
    finally:
        if scratch_ctx:
            scratch_ctx.cleanup()
    prov = ctx.provenance(corpus={"studies": [s.name for s in order]}, model=None,
                          engine={"python": {"name": "Python", "version": sys.version.split()[0]}},
                          parameters={"backend": args.backend, "order": "gabarito report (in_order)",
                                      "cold": "one fresh GABARITO_CACHE_DIR and GABARITO_DATA_DIR shared by the studies",
                                      "variants": "not run: trained readers read from the user's cache, "
                                                  "checked by sha256",
                                      "engines_path": bool(args.engines_path)})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_average())
    left = {s.name: committed(s.name, s) for s in everything if s.name not in studies}
    return {"provenance": prov, "order": [s.name for s in order], "studies": studies, "not_run": left}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(PEERS, run, add_arguments, name="peers/cold_report",
                 title="The whole report from nothing, one shared cache, checked against the committed files",
                 results="cold_report.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
