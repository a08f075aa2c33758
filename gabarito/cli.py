"""The ``gabarito`` command: measure search on your own documents; fetch data, run studies, build the site.

    gabarito evaluate --documents PATH --evaluation PATH [options]   # one run, saved under runs/
    gabarito compare RUN [RUN ...]                                   # runs side by side, paired tests
    gabarito report            # fetch + verify data, rerun stale studies, build _site/
    gabarito fetch [NAME ...]  # datasets only
    gabarito study NAME        # one study, always rerun
    gabarito site              # the site only, from committed results
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
from pathlib import Path

from gabarito.inputs.datasets import MIRROR_ENV, fetch, load_manifest
from gabarito.errors import GabaritoError
from gabarito.inputs.gold import verify_frozen
from gabarito.hashing import sha256_file
from gabarito.study.records import stale_reason

from gabarito.paths import ROOT  # noqa: E402
STUDIES = ROOT / "case-studies"


def studies() -> dict[str, dict]:
    """Every ``case-studies/<name>/study.json``, keyed by name, with its folder."""
    out = {}
    for spec in sorted(STUDIES.glob("*/study.json")):
        meta = json.loads(spec.read_text(encoding="utf-8"))
        meta["dir"] = spec.parent
        out[meta["name"]] = meta
    return out


def study_staleness(meta: dict, mirror: str | None) -> str | None:
    manifest = meta["dir"] / meta["gold_manifest"]
    # keyed as results record them: paths relative to the study folder
    gold = {os.path.relpath(manifest.parent / rel, meta["dir"]): sha
            for rel, sha in verify_frozen(manifest).items()}
    corpus = meta.get("corpus")
    corpus_sha = None
    if corpus:
        corpus_sha = sha256_file(fetch(corpus["dataset"], mirror=mirror) / corpus["file"])
    return stale_reason(meta["dir"] / meta["results"], gold_sha256=gold, corpus_sha256=corpus_sha)


def run_study(meta: dict, extra: list[str]) -> None:
    script = meta["dir"] / meta["script"]
    saved = sys.argv
    sys.argv = [str(script), *extra]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise GabaritoError(f"study exited with status {exc.code}", path=script) from None
    finally:
        sys.argv = saved


def _add_evaluate(sub) -> None:
    from gabarito.evaluation.run import ANALYZERS, DEFAULT_MODEL, ENGINES, METHODS

    p = sub.add_parser(
        "evaluate", help="measure search quality on your documents and questions",
        description="Search every question of an evaluation file in your documents and measure how often "
                    "the right document comes first (top-1/3/5 accuracy, MRR, with 95%% intervals). Writes "
                    "OUT/results.csv (one row per question), OUT/run.json and a line in the log.")
    p.add_argument("--documents", required=True, type=Path,
                   help="a JSON list of {id, text, title}, a folder of Markdown files, or a BEIR folder")
    p.add_argument("--evaluation", required=True, type=Path,
                   help="a JSON list of {query, relevantIds, id?, type?, severity?} or a BEIR folder")
    p.add_argument("--segmentation", default="section",
                   help="document, paragraph, section or recursive:N[:O] (default: section)")
    p.add_argument("--no-title-prefix", dest="prefix_title", action="store_false",
                   help="do not put 'Title > Section: ' before each chunk")
    p.add_argument("--method", default="dense", choices=METHODS)
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"embedding model (default: {DEFAULT_MODEL})")
    p.add_argument("--engine", default="memory", choices=ENGINES)
    p.add_argument("--analyzer", default="standard", choices=list(ANALYZERS),
                   help="BM25 text analysis; portuguese and english need --engine arcadedb")
    p.add_argument("--k", type=int, default=10, help="documents kept per question (default: 10)")
    p.add_argument("--chunk-depth", type=int, default=50, help="chunks retrieved before collapsing to documents")
    p.add_argument("--rrf-k", type=int, default=60, help="RRF constant for --method hybrid")
    p.add_argument("--out", type=Path, help="output folder (default: <log folder>/<run id>)")
    p.add_argument("--log", type=Path, default=Path("runs") / "log.jsonl", help="JSONL log (default: runs/log.jsonl)")
    p.add_argument("--arcadedb-url", help="an external ArcadeDB server (password in $GABARITO_ARCADEDB_PASSWORD)")
    p.add_argument("--db-dir", type=Path, help="root folder of the embedded ArcadeDB server")
    p.add_argument("--label", default="", help="a free-text name for this run")
    p.add_argument("--reranker", help="a second reading of the first --rerank-n chunks: a cross-encoder id or "
                                      "folder, bi:<model>, maxsim:<model> or splade")
    p.add_argument("--rerank-n", type=int, default=20, help="chunks read again by --reranker (default: 20)")


def _add_compare(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare evaluation runs query by query",
        description="The first run is the baseline; each other run is compared with it on the same "
                    "questions: means, wins/losses, sign and randomization tests, questions that flipped.")
    p.add_argument("runs", nargs="+", metavar="RUN_ID_OR_FILE", help="a run id from the log or a run.json path")
    p.add_argument("--log", type=Path, default=Path("runs") / "log.jsonl")
    p.add_argument("--measure", default="RR@10", help="RR@n or hit@n (default: RR@10)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")


def cmd_evaluate(args: argparse.Namespace) -> int:
    from gabarito.inputs.documents import load_documents, load_evaluation
    from gabarito.evaluation.run import EvalConfig, format_summary, run_evaluation, unique_run_id, write_run

    config = EvalConfig(segmentation=args.segmentation, prefix_title=args.prefix_title, method=args.method,
                        model=args.model, engine=args.engine, analyzer=args.analyzer, k=args.k,
                        chunk_depth=args.chunk_depth, rrf_k=args.rrf_k, label=args.label,
                        reranker=args.reranker, rerank_n=args.rerank_n).effective()
    if args.out is not None and args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise GabaritoError("already holds a run or other files; choose another --out", path=args.out)
    documents = load_documents(args.documents)
    queries = load_evaluation(args.evaluation, documents)
    record = run_evaluation(documents, queries, config, arcadedb_url=args.arcadedb_url, db_dir=args.db_dir,
                            documents_path=args.documents, evaluation_path=args.evaluation)
    run_id = unique_run_id(record, args.log, args.log.parent)  # same config in the same second: -2, -3, ...
    paths = write_run(record, args.out if args.out is not None else args.log.parent / run_id, args.log)
    print()
    print(format_summary(record))
    print(f"\nwrote {paths['csv']}, {paths['json']}; logged in {paths['log']}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from gabarito.evaluation.compare import compare_runs, format_comparison, load_runs

    result = compare_runs(load_runs(args.runs, args.log), args.measure)
    for warning in result["warnings"]:
        print(f"gabarito: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(format_comparison(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gabarito", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=os.environ.get(MIRROR_ENV), help="local dataset mirror directory")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("report", help="data, stale studies, site")
    p.add_argument("--force", action="store_true", help="rerun every study")
    p.add_argument("--arcadedb-url", help="an external ArcadeDB server for the studies")
    p = sub.add_parser("fetch", help="fetch and verify datasets")
    p.add_argument("names", nargs="*")
    p = sub.add_parser("study", help="run one study")
    p.add_argument("name")
    p.add_argument("--arcadedb-url")
    p = sub.add_parser("site", help="build the site from the committed results")
    p.add_argument("--renderer", default="auto", choices=["auto", "smalldocs", "quarto"])
    _add_evaluate(sub)
    _add_compare(sub)
    args = ap.parse_args(argv)
    if args.mirror:
        os.environ[MIRROR_ENV] = str(args.mirror)
    try:
        if args.cmd == "evaluate":
            return cmd_evaluate(args)
        if args.cmd == "compare":
            return cmd_compare(args)
        if args.cmd == "fetch":
            for name in args.names or list(load_manifest()):
                print(f"{name}: {fetch(name, mirror=args.mirror)}")
        elif args.cmd == "study":
            meta = studies()[args.name]
            run_study(meta, ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else [])
        elif args.cmd == "report":
            for name, meta in studies().items():
                reason = "forced" if args.force else study_staleness(meta, args.mirror)
                if reason:
                    print(f"{name}: running the study ({reason})")
                    run_study(meta, ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else [])
                else:
                    print(f"{name}: results are current")
            from gabarito.publish.site import build

            build(ROOT)
        elif args.cmd == "site":
            from gabarito.publish.site import build

            build(ROOT, renderer=args.renderer)
    except GabaritoError as exc:
        print(f"gabarito: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
