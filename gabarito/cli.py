"""The ``gabarito`` command, the project's one front door.

    gabarito evaluate --documents PATH --evaluation PATH [options]   # one run, saved under runs/
    gabarito compare RUN [RUN ...]                                   # runs side by side, paired tests
    gabarito report            # fetch + verify data, rerun stale studies, build _site/
    gabarito fetch [NAME ...]  # datasets only
    gabarito study NAME        # one study, always rerun (extra arguments go to the study)
    gabarito studies           # the studies and whether their results are current
    gabarito site              # the site only, from committed results
    gabarito pool RUN [RUN ...] --seed N --out POOL.json     # a blind pool of your runs' results
    gabarito judge POOL --assessor NAME --out PAGE.html     # a judging page (offline HTML)
    gabarito judgments import GRADES... --pool POOL --out DIR  # kappa, adjudication, graded qrels

Errors are one line on stderr and exit status 2 (bad input, and faults such as a full or read-only
disk, named by path); Ctrl-C is one line and status 130, SIGTERM 143; a closed output (``| head``)
ends quietly with status 141.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(_signum, _frame) -> None:  # pragma: no cover - timing dependent
    """Ctrl-C before :func:`main` runs (while the modules below load): one line, exit 130."""
    sys.stderr.write("gabarito: interrupted\n")
    os._exit(130)


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)

import argparse  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
from pathlib import Path  # noqa: E402

from gabarito.errors import (INTERRUPTED, GabaritoError, fault_line, interrupted, output_gone,  # noqa: E402
                             stop_on_termination, stopped_exit)
from gabarito.inputs.datasets import MIRROR_ENV, fetch, load_manifest  # noqa: E402
from gabarito.evaluation.options import add_compare_parser, add_evaluate_parser  # noqa: E402
from gabarito.paths import ROOT  # noqa: E402
from gabarito.study.spec import StudySpec, all_studies, find_study, in_order  # noqa: E402


def run_study(spec: StudySpec, extra: list[str]) -> None:
    """Run a study's script as ``__main__`` with ``extra`` arguments; a failure is one line: the
    study's own (status 2: :class:`~gabarito.study.runner.StudyExited` is ``reported``), or, for any
    other status, the line that names it."""
    from gabarito.study.runner import run_script

    run_script(spec, extra)


def _warn(text: str) -> None:
    print(f"gabarito: warning: {text}", file=sys.stderr, flush=True)


def _check_before_work(config, log: Path) -> None:
    """What would otherwise fail only after the whole run: a --log that cannot be appended to,
    and a model (--model, --reranker) with no offline copy that the hub does not know."""
    from gabarito.evaluation.runlog import check_log_path
    from gabarito.retrieval.models import check_model_id

    check_log_path(log)
    for model_id in config.model_ids():
        check_model_id(model_id)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from gabarito.inputs.documents import load_documents, load_evaluation
    from gabarito.evaluation import EvalConfig, format_summary, run_evaluation, unique_run_id, write_run

    config = EvalConfig(segmentation=args.segmentation, prefix_title=args.prefix_title, method=args.method,
                        model=args.model, engine=args.engine, analyzer=args.analyzer, k=args.k,
                        chunk_depth=args.chunk_depth, depth=args.depth, rrf_k=args.rrf_k, label=args.label,
                        reranker=args.reranker, rerank_n=args.rerank_n, rerank_fuse=args.rerank_fuse,
                        measures=tuple(args.measures.split(",")) if args.measures else None,
                        fusion=args.fusion, fusion_in=args.fusion_in).effective()
    if args.out is not None and args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise GabaritoError("already holds a run or other files; choose another --out", path=args.out)
    _check_before_work(config, args.log)
    documents = load_documents(args.documents)
    if args.qrels is not None:
        from gabarito.inputs.trec_topics import load_trec_evaluation

        queries = load_trec_evaluation(args.evaluation, args.qrels, documents)
    else:
        queries = load_evaluation(args.evaluation, documents)
    record = run_evaluation(documents, queries, config, arcadedb_url=args.arcadedb_url, db_dir=args.db_dir,
                            documents_path=args.documents, evaluation_path=args.evaluation, device=args.device)
    run_id = unique_run_id(record, args.log, args.log.parent, warn=_warn)  # same config, same second: -2, ...
    paths = write_run(record, args.out if args.out is not None else args.log.parent / run_id, args.log)
    from gabarito.publish import run_page

    page = run_page.write(paths["json"].parent)
    print()
    print(format_summary(record))
    ranked = f", {paths['run']}, {paths['qrels']}" if "run" in paths else ""
    print(f"\nwrote {paths['csv']}, {paths['json']}{ranked}, {page}; logged in {paths['log']}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from gabarito.evaluation.compare import compare_runs, format_comparison, load_runs

    records = load_runs(args.runs, args.log)
    result = compare_runs(records, [m for given in args.measure for m in given.split(",")] if args.measure else None)
    for warning in result["warnings"]:
        _warn(warning)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(format_comparison(result))
    from gabarito.publish import compare_page

    folder = getattr(records[0], "folder", None)
    out = args.out or compare_page.default_path(records, folder.parent if folder is not None else args.log.parent)
    written = compare_page.write(records, out, result["measures"], result)
    if args.json:  # stdout is the JSON alone
        print(f"gabarito: wrote {written}", file=sys.stderr)
    else:
        print(f"\nwrote {written}")
    return 0


def _add_commands(sub) -> None:
    p = sub.add_parser("report", help="fetch data, rerun stale studies, build the site")
    p.add_argument("--force", action="store_true", help="rerun every study")
    p.add_argument("--arcadedb-url", help="an external ArcadeDB server for the studies")
    p.add_argument("--allow-dirty", action="store_true", default=None,
                   help="publish results computed on a work tree with uncommitted changes (the pages say so)")
    p.add_argument("--check", action="append", metavar="STUDY",
                   help="instead: rerun this study cold into a temporary folder (empty caches; readers trained by "
                        "another study read from your cache, checked by sha256) and say, per "
                        "file, whether the committed file is reproduced (identical, same numbers, same ranks) "
                        "or differs; a study name or folder; repeatable; exit status 1 when any file differs")
    p.add_argument("--keep", type=Path, metavar="DIR", help="with --check: keep the rerun's files in DIR/<study>")
    p = sub.add_parser("fetch", help="fetch and verify datasets")
    p.add_argument("names", nargs="*", help="datasets (default: every one in data/datasets.json)")
    p = sub.add_parser("study", help="run one study (arguments after the name go to the study; try -h)")
    p.add_argument("name", help="a study's name, or a folder holding a study.json (a copy of a study)")
    p.add_argument("study_args", nargs=argparse.REMAINDER)
    sub.add_parser("studies", help="list the studies and whether their results are current")
    p = sub.add_parser("site", help="build the site from the committed results")
    p.add_argument("--root", type=Path, default=ROOT, help="the project folder (default: this checkout)")
    p.add_argument("--renderer", default="auto", choices=["auto", "smalldocs", "quarto"])
    p.add_argument("--out", default="_site", help="output folder, relative to the project (default _site)")
    p.add_argument("--no-execute", action="store_true", help="run no notebook: reuse the cached outputs")
    p.add_argument("--allow-dirty", action="store_true", default=None,
                   help="publish results computed on a work tree with uncommitted changes (the pages say so)")


def _build_site(args: argparse.Namespace) -> None:
    import inspect

    from gabarito.publish.site import build

    kwargs = {"renderer": getattr(args, "renderer", "auto"), "execute": not getattr(args, "no_execute", False)}
    if "allow_dirty" in inspect.signature(build).parameters:
        kwargs["allow_dirty"] = args.allow_dirty
    build(getattr(args, "root", ROOT), getattr(args, "out", "_site"), **kwargs)


def _study_named(name: str) -> StudySpec:
    path = Path(name)
    if (path / "study.json").is_file():
        return StudySpec.load(path / "study.json")
    return find_study(name)


def cmd_check(args: argparse.Namespace) -> int:
    """``gabarito report --check STUDY…``: does a cold rerun reproduce the committed files?"""
    from gabarito.study.check import check_study

    extra = ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else []
    failed = 0
    for name in args.check:
        spec = _study_named(name)
        print(f"{spec.name}: rerunning cold into a temporary folder", file=sys.stderr)
        checks = check_study(spec, extra, keep=args.keep / spec.name if args.keep else None)
        for c in checks:
            print(f"{spec.name}/{c.line()}")
        bad = [c for c in checks if not c.reproduced]
        failed += len(bad)
        print(f"{spec.name}: {len(checks) - len(bad)} of {len(checks)} files reproduced", file=sys.stderr)
    return 1 if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    from gabarito.study.integrity import verify

    if args.check:
        return cmd_check(args)

    extra = ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else []
    studies = in_order(all_studies())
    for study in studies:  # a results file edited after its run stops the report before any work
        for spec in (study, *map(study.variant, study.variants)):
            if spec.results_path.exists() and not args.force:
                verify(spec.results_path)
        study.verify_files()  # samples, pools, run logs, run folders: refused, not printed and published
    for study in studies:
        for spec in (study, *map(study.variant, study.variants)):
            reason = "forced" if args.force else spec.staleness(args.mirror)
            if reason:
                print(f"{spec.name}: running the study ({reason})", file=sys.stderr)
                run_study(spec, extra)
            else:
                print(f"{spec.name}: results are current", file=sys.stderr)
        for entry, rel in study.written():  # run by hand: they need a quiet machine, other engines or gold work
            reason = study.file_state(entry, rel, args.mirror)
            if reason:
                print(f"{study.name}/{rel}: {reason} (not rerun here: python "
                      f"{os.path.relpath(study.dir / entry['script'], ROOT)})", file=sys.stderr)
    _build_site(args)
    return 0


def cmd_studies(args: argparse.Namespace) -> int:
    for study in in_order(all_studies()):
        for spec in (study, *map(study.variant, study.variants)):
            try:
                state = spec.staleness(args.mirror) or "current"
            except GabaritoError as exc:
                state = f"cannot tell: {exc}"
            print(f"{spec.name:40} {state}")
        for entry, rel in study.written():
            try:
                state = study.file_state(entry, rel, args.mirror) or "current"
            except GabaritoError as exc:
                state = f"cannot tell: {exc}"
            print(f"{study.name + '/' + rel:40} {state} (written by {entry['script']})")
    return 0


def dispatch(args: argparse.Namespace) -> int:
    if args.cmd in ("site", "report"):  # the report's own build: not in the core install
        from gabarito.extras import require

        for extra in ("site", "train") if args.cmd == "report" else ("site",):
            require(extra, f"gabarito {args.cmd}")
    if args.cmd in ("pool", "judge", "judgments"):
        from gabarito.judging.commands import run

        return run(args)
    if args.cmd == "evaluate":
        return cmd_evaluate(args)
    if args.cmd == "compare":
        return cmd_compare(args)
    if args.cmd == "report":
        return cmd_report(args)
    if args.cmd == "studies":
        return cmd_studies(args)
    if args.cmd == "fetch":
        for name in args.names or list(load_manifest()):
            print(f"{name}: {fetch(name, mirror=args.mirror)}")
    elif args.cmd == "study":
        run_study(_study_named(args.name), list(args.study_args))
    elif args.cmd == "site":
        _build_site(args)
    return 0


#: The commands with a ``--quiet`` (progress bars are drawn only on a terminal: :mod:`gabarito.progress`).
QUIET_COMMANDS = ("evaluate", "report", "study", "site", "pool")


def main(argv: list[str] | None = None) -> int:
    """The command line: one line and exit 2 for a fault, 130 for Ctrl-C, 128 + n for SIGTERM or
    SIGHUP. Once such a signal was received, whatever exception it leaves on the way out (a module
    half-imported when it came) is that signal's one line and status, never a traceback."""
    try:
        return _main(argv)
    except BaseException:
        code = stopped_exit()
        if code is None:
            raise
        return code


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="gabarito", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=os.environ.get(MIRROR_ENV), help="local dataset mirror directory")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _add_commands(sub)
    add_evaluate_parser(sub)
    add_compare_parser(sub)
    from gabarito.judging.commands import add_parsers as _add_judging

    _add_judging(sub)
    for name in QUIET_COMMANDS:  # the commands that do long work
        sub.choices[name].add_argument("--quiet", action="store_true",
                                       help="no progress bars (also: GABARITO_QUIET=1, which child processes inherit)")
    args = ap.parse_args(argv)
    if getattr(args, "quiet", False):
        from gabarito.progress import set_quiet

        set_quiet()
    if args.mirror:
        os.environ[MIRROR_ENV] = str(args.mirror)
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, interrupted)  # from here on, KeyboardInterrupt (and recorded)
    stop_on_termination()
    try:
        if getattr(args, "device", None) is not None:  # a device torch does not see: one line, before any work
            from gabarito.retrieval.device import choose_device

            choose_device(args.device)
        return dispatch(args)
    except GabaritoError as exc:
        if not getattr(exc, "reported", False):  # a study's own one line was printed already
            print(f"gabarito: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return output_gone()
    except (OSError, RecursionError) as exc:  # a full or read-only disk, a folder where a file goes, ...
        print(f"gabarito: error: {fault_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:  # an input too large for the memory this process may use, wherever it was read
        print("gabarito: error: out of memory: the inputs (or the model) need more memory than this process "
              "may use", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # a module of an extra (gabarito[site], ...) a core install lacks
        from gabarito.extras import missing_extra

        error = missing_extra(exc)
        if error is None:
            raise
        print(f"gabarito: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gabarito: interrupted", file=sys.stderr)
        return INTERRUPTED


def entry() -> int:
    """The ``gabarito`` program: :func:`main`, then Ctrl-C ignored while the interpreter shuts down
    (the command's work is done and its exit status decided; a late Ctrl-C would otherwise kill the
    process silently, with no status of its own)."""
    code = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.flush()  # here, not at the interpreter's exit, where a broken pipe is a traceback
    except BrokenPipeError:
        code = output_gone()
    return code


if __name__ == "__main__":
    raise SystemExit(entry())
