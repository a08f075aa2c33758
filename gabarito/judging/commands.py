"""The judging commands of ``gabarito`` (wired by :mod:`gabarito.cli`):

    gabarito pool RUN [RUN ...] --seed N --out POOL.json [--depth 10] [--known FILE]
                  [--documents PATH --evaluation PATH]
    gabarito judge POOL.json --assessor NAME --out PAGE.html [--guide GUIDE.md]
    gabarito judgments import GRADES.json [GRADES.json] --pool POOL.json --out DIR [--adjudication ADJ.json]

A RUN is a TREC run file or a ``gabarito evaluate`` output folder holding one; without
``--documents``/``--evaluation`` the paths recorded in a run folder's ``run.json`` are used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gabarito.errors import GabaritoError

COMMANDS = ("pool", "judge", "judgments")


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "pool", help="a blind pool of your runs' results for relevance judging",
        description="The union of the runs' top --depth documents per question and the known answers, "
                    "deduplicated and shuffled by --seed, with the question and document texts and no trace "
                    "of which run found what. Written to --out and frozen (sha256 in <out>.lock.json).")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="a TREC run file or a gabarito evaluate folder")
    p.add_argument("--depth", type=int, default=10, help="documents taken from each run per question (default 10)")
    p.add_argument("--known", type=Path, help="known answers to add: an evaluation file (JSON, BEIR) or TREC qrels")
    p.add_argument("--seed", type=int, required=True, help="the seed of the shuffle (recorded in the pool)")
    p.add_argument("--out", type=Path, required=True, help="the pool file to write (never overwritten)")
    p.add_argument("--documents", type=Path, help="the documents the runs searched (default: from run.json)")
    p.add_argument("--evaluation", type=Path, help="the questions: evaluation file or TREC topics (default: run.json)")
    p = sub.add_parser("judge", help="a judging page (HTML, offline) for one assessor of a pool")
    p.add_argument("pool", type=Path)
    p.add_argument("--assessor", required=True, help="the assessor's name (carried by the exported grades)")
    p.add_argument("--out", type=Path, required=True, help="the HTML page to write")
    p.add_argument("--guide", type=Path, help="a grading guide in Markdown (default: gabarito's, in Portuguese)")
    p = sub.add_parser("judgments", help="judgments: import the assessors' grades")
    jsub = p.add_subparsers(dest="judgments_cmd", required=True)
    p = jsub.add_parser(
        "import", help="agreement (Cohen's kappa), the adjudicator's pool, frozen graded qrels",
        description="Reads the grades exported by the judging page (one or two assessors), writes agreement.json, "
                    "the disagreements as adjudication_pool.json, and, once adjudicated (--adjudication) or when "
                    "nobody disagreed, the graded qrels (qrels.trec, evaluation.json), frozen in qrels.lock.json.")
    p.add_argument("grades", nargs="+", type=Path, metavar="GRADES",
                   help="the grades files the judging page exported, one per assessor (one or two)")
    p.add_argument("--pool", type=Path, required=True, help="the frozen pool the grades were given on")
    p.add_argument("--out", type=Path, required=True, help="the folder for agreement, adjudication pool and qrels")
    p.add_argument("--adjudication", type=Path, help="the adjudicator's grades of DIR/adjudication_pool.json")
    p.add_argument("--seed", type=int, default=None, help="seed of the bootstrap (default: gabarito's)")
    p.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10000)")


def _recorded_inputs(runs: list[Path]) -> tuple[Path | None, Path | None]:
    for run in runs:
        record = run / "run.json"
        if run.is_dir() and record.exists():
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise GabaritoError(f"not a JSON run record ({exc})", path=record) from None
            found = []
            for what, value in (("documents", data.get("documents_path")), ("evaluation", data.get("evaluation_path"))):
                if value and not Path(value).exists():
                    raise GabaritoError(f"the {what} path recorded here ({value}) is not found from the current folder: "
                                        f"pass --{what}", path=record)
                found.append(Path(value) if value else None)
            return found[0], found[1]
    return None, None


def cmd_pool(args: argparse.Namespace) -> int:
    from gabarito.hashing import sha256_file
    from gabarito.inputs.documents import corpus_sha256, load_documents
    from gabarito.inputs.textfiles import warn_stderr
    from gabarito.judging.pool import (check_new, keep_evaluated, known_answers, lock_path, make_pool, question_texts,
                                       read_run, write_pool)

    check_seed(args.seed)
    if args.depth < 1:
        raise GabaritoError(f"--depth must be at least 1, not {args.depth}")
    check_new(args.out)
    docs_path, eval_path = _recorded_inputs(args.runs)
    docs_path, eval_path = args.documents or docs_path, args.evaluation or eval_path
    if docs_path is None or eval_path is None:
        raise GabaritoError("name the documents and questions the runs were made on (--documents, --evaluation)")
    runs = {str(p): read_run(p) for p in args.runs}
    documents = load_documents(docs_path)
    questions = question_texts(eval_path, documents)
    known = known_answers(args.known, documents) if args.known is not None else None
    inputs = {"documents_sha256": corpus_sha256(documents)}
    if eval_path.is_file():
        inputs["evaluation_file_sha256"] = sha256_file(eval_path)
    runs, known, left_out = keep_evaluated(runs, questions, known)
    if left_out:
        warn_stderr(f"{len(left_out)} question(s) of the runs or known answers are not in the evaluation {eval_path} "
                    f"(e.g. {left_out[0]!r}): left out of the pool")
    pool = make_pool(runs, documents, questions, depth=args.depth, seed=args.seed, known=known, inputs=inputs)
    sha = write_pool(args.out, pool)
    m = pool["meta"]
    print(f"wrote {args.out} ({m['n_questions']} questions, {m['n_pairs']} pairs, sha256 {sha[:12]}), "
          f"frozen in {lock_path(args.out)}")
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    from gabarito.judging.page import check_page_out, write_page
    from gabarito.judging.pool import read_pool

    check_page_out(args.out)
    pool, sha = read_pool(args.pool)
    write_page(args.out, pool, sha, args.assessor, args.guide)
    n = sum(len(q["candidates"]) for q in pool["questions"])
    print(f"wrote {args.out}: {n} pairs for {args.assessor}; open it in a browser (works offline)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from gabarito.judging.importing import import_judgments, kappa_line
    from gabarito.measure.score import check_resamples
    from gabarito.measure.stats import DEFAULT_SEED

    if args.seed is not None:
        check_seed(args.seed)
    check_resamples(args.resamples)
    if (args.out.exists() or args.out.is_symlink()) and not args.out.is_dir():
        what = "is a file" if args.out.is_file() else "exists and is not a folder"
        raise GabaritoError(f"{what}: --out names the folder for agreement, adjudication pool and qrels",
                            path=args.out)
    result = import_judgments(args.grades, args.pool, args.out, adjudication=args.adjudication,
                              seed=DEFAULT_SEED if args.seed is None else args.seed, resamples=args.resamples)
    if "agreement" in result:
        print(kappa_line(result["agreement"]))
    print(f"{result['n_disagreements']} of {result['n_pairs']} pairs graded differently")
    if result["qrels"] is None:
        print(f"adjudicate them: gabarito judge {result['adjudication_pool']} --assessor NAME --out PAGE.html, "
              f"then import again with --adjudication GRADES.json")
    else:
        folder = Path(result["qrels"]).parent
        print(f"froze graded qrels: {result['qrels']} (sha256 {result['qrels_sha256'][:12]}); score with "
              f"gabarito evaluate --evaluation {folder / 'evaluation.json'} (grades; relevant at grade >= 1) "
              f"or {folder / 'evaluation_grade2.json'} (relevant at grade 2)")
        if (folder / "topics.txt").exists():
            print(f"or gabarito evaluate --evaluation {folder / 'topics.txt'} --qrels {result['qrels']}")
    for path in result["written"]:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def check_seed(seed: int) -> None:
    """A seed is a whole number from 0 to 2**32 - 1 (what the shuffles and the bootstrap take)."""
    if not 0 <= seed < 2 ** 32:
        raise GabaritoError(f"--seed must be a whole number from 0 to {2 ** 32 - 1}, not {seed}")


def run(args: argparse.Namespace) -> int:
    """Run a judging command; SIGTERM and SIGHUP end it like Ctrl-C (temporary files removed), and
    a file the system refuses to read or write is one line naming it."""
    from gabarito.judging.staging import terminations_exit

    terminations_exit()
    command = cmd_pool if args.cmd == "pool" else cmd_judge if args.cmd == "judge" else cmd_import
    try:
        return command(args)
    except OSError as exc:  # a write goes through staging, which names the file; this is a read, or a last resort
        where = "it" if exc.filename else "a file"
        raise GabaritoError(f"cannot read or write {where} ({exc.strerror or exc})", path=exc.filename) from None
