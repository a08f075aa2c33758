"""The options of ``gabarito evaluate`` and ``gabarito compare``: their parsers, declared beside the
code that reads them (:func:`gabarito.cli.main` adds them to the one front door)."""

from __future__ import annotations

from pathlib import Path


def add_evaluate_parser(sub) -> None:
    """``gabarito evaluate``'s parser, added to the subcommands ``sub``."""
    from gabarito.evaluation import ANALYZERS, DEFAULT_MODEL, ENGINES, METHODS

    p = sub.add_parser(
        "evaluate", help="measure search quality on your documents and questions",
        description="Search every question of an evaluation file in your documents and measure how often "
                    "the right document comes first (top-1/3/5 accuracy, MRR, with 95% intervals). Writes "
                    "OUT/results.csv (one row per question), OUT/run.json (with the scorer's report), the "
                    "ranked lists OUT/run.trec and the judgments OUT/qrels.trec (each file's sha256 in "
                    "OUT/results.sha256.json) and a line in the log.")
    p.add_argument("--documents", required=True, type=Path,
                   help="a JSON list of {id, text, title}, a folder of Markdown files, or a BEIR folder")
    p.add_argument("--evaluation", required=True, type=Path,
                   help="a JSON list of {query, relevantIds, id?, type?, severity?} or a BEIR folder")
    p.add_argument("--segmentation", default="section",
                   help="document, paragraph, section or recursive:N[:O] (default: section)")
    p.add_argument("--no-title-prefix", dest="prefix_title", action="store_false",
                   help="do not put 'Title > Section: ' before each chunk")
    p.add_argument("--method", default="dense", choices=METHODS)
    from gabarito.retrieval.models.sources import install_command

    recommended = "intfloat/multilingual-e5-small"
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"embedding model (default: {DEFAULT_MODEL}, the smallest and fastest packaged one, "
                        f"English only, kept as the default so that earlier runs stay comparable). For "
                        f"Portuguese or mixed text the site recommends {recommended}, offline after "
                        f"`{install_command(recommended)}`")
    p.add_argument("--engine", default="memory", choices=ENGINES,
                   help="memory (default, no server) or arcadedb (an embedded ArcadeDB server). For BM25 "
                        "ArcadeDB's FULL_TEXT index is the reference; the memory engine scores as it does (the "
                        "same words, idf, k1=1.2, b=0.75, exact lengths, each distinct question word once): "
                        "measured on CISI, both give the same top 10 for every question "
                        "(case-studies/peers/bm25_alignment.json)")
    p.add_argument("--analyzer", default="standard", choices=list(ANALYZERS),
                   help="BM25 text analysis: standard (Lucene's StandardAnalyzer: UAX #29 words, lower case, "
                        "no stop words, no stemming; the same on both engines); portuguese and english "
                        "(stemming and stop words) need --engine arcadedb")
    p.add_argument("--k", type=int, default=10, help="documents kept per question (default: 10)")
    p.add_argument("--depth", type=int, help="documents each ranked list holds, searched to and cut to before "
                                             "scoring, for every method alike (default: the largest cutoff of "
                                             "the measures, at least 100); a measure deeper than it is refused")
    p.add_argument("--chunk-depth", type=int, help="chunks searched first (default: --depth); grown until every "
                                                   "list holds --depth documents or no chunk is left")
    p.add_argument("--rrf-k", type=int, default=60, help="RRF constant for --method hybrid")
    p.add_argument("--out", type=Path, help="output folder (default: <log folder>/<run id>)")
    p.add_argument("--log", type=Path, default=Path("runs") / "log.jsonl", help="JSONL log (default: runs/log.jsonl)")
    p.add_argument("--arcadedb-url", help="an external ArcadeDB server (password in $GABARITO_ARCADEDB_PASSWORD)")
    p.add_argument("--db-dir", type=Path, help="root folder of the embedded ArcadeDB server")
    p.add_argument("--label", default="", help="a free-text name for this run")
    p.add_argument("--reranker", help="a second reading of the first --rerank-n chunks: a cross-encoder id or "
                                      "folder, bi:<model>, maxsim:<model> or splade")
    p.add_argument("--rerank-n", type=int, default=20, help="chunks read again by --reranker (default: 20)")
    p.add_argument("--rerank-fuse", default="replace",
                   help="how the reader's order meets the first stage's: replace (default), rrf, or convex:W "
                        "(W = the reader's weight, 0 to 1)")
    p.add_argument("--fusion", help="hybrid: rrf, rrf:K, wrrf:K:W1,W2, linear:W (W = weight of the dense list), "
                                    "dbsf, combsum or combmnz (default: rrf with --rrf-k)")
    p.add_argument("--fusion-in", default="python", choices=["python", "arcadedb"],
                   help="hybrid: fuse in Python (default) or inside ArcadeDB with vector.fuse "
                        "(rrf, rrf:K, linear:W, dbsf; needs --engine arcadedb)")
    p.add_argument("--measures", help="comma-separated measures beside top-k accuracy and MRR, e.g. "
                                      "nDCG@10,AP@100,R@100,P@5,hit@3 (default: nDCG@10,AP@100,R@100 when "
                                      "questions have several relevant documents or graded judgments)")
    p.add_argument("--qrels", type=Path, help="TREC qrels (qid iter doc grade); --evaluation is then a TREC "
                                              "topics file (<top><num>...<title>...)")
    from gabarito.retrieval.device import add_device_argument

    add_device_argument(p)


def add_compare_parser(sub) -> None:
    """``gabarito compare``'s parser, added to the subcommands ``sub``."""
    p = sub.add_parser(
        "compare", help="compare evaluation runs query by query",
        description="The first run is the baseline; each other run is compared with it on the same "
                    "questions: means, wins/losses, sign and randomization tests, questions that flipped.")
    p.add_argument("runs", nargs="+", metavar="RUN_ID_OR_FILE", help="a run id from the log or a run.json path")
    p.add_argument("--log", type=Path, default=Path("runs") / "log.jsonl")
    p.add_argument("--measure", action="append", metavar="MEASURE[,MEASURE...]",
                   help="repeatable, or a comma list: RR@n or hit@n (n up to the runs' k, from run.json), or any "
                        "measure such as nDCG@10, R@100, AP@100, P@5 (from the run.trec and qrels.trec each run "
                        "wrote, no deeper than the runs' lists); every one is tested, Holm over measures x pairs "
                        "(default: RR@10 and hit@1, with nDCG@10, AP@100 and R@100 when questions have several "
                        "relevant documents or graded judgments)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--out", type=Path, metavar="FILE.html",
                   help="where to write the comparison page (default: comparacao-<first>-<last>.html beside the "
                        "first run's folder)")
