"""A cross-encoder trained here, leave one collection out, and measured as a second reading.

For each held-out collection (Cranfield, NPL, CISI) a cross-encoder is trained from
all-MiniLM-L6-v2's BERT weights (plus a new one-output head) on the judgments of the four other
classic collections: positives are judged relevant documents; per positive, one hard negative
from the ArcadeDB BM25 (English analyzer) run's top 30 -- judged non-relevant when the
collection judged it, assumed non-relevant otherwise -- and one document drawn at random from
the collection (assumed non-relevant); the counts of each kind are recorded. The new
classification head learns at its own, higher rate (``--head-lr``). A first recipe (two hard
negatives per positive, one rate for everything) stayed at the class-prior loss (about 0.64)
for 250 steps; a short diagnostic then showed that a loss near the prior can already order
pairs well (the logits are small, not random), and the recipe above moves faster. Cranfield's "source
document" rows (grade 0 in the frozen qrels) are neither positives nor negatives.

On the held-out collection the trained reader re-reads the top N (N in 5, 10, 20, 50, 100) of three
first stages committed by ``run_study.py`` (``runs/<collection>.<method>.trec``): BM25, dense
all-mpnet-base-v2 and their RRF. Each variant is scored with the shared scorer (means, 95%
bootstrap intervals, Holm-corrected paired tests), and the first stage's recall@N is the ceiling.
``reranker_extras.py`` adds, per fold: how well the reader separates relevant from non-relevant
pairs (AUC, on the held-out collection and on its training pairs), a worked example, the text
as indexed against the abstract alone, and latency on a quiet machine. The cost per pair is also
measured while scoring; it is marked not valid when the one-minute load
average was above 1.0 before scoring (the scoring's own threads raise it afterwards).

Weights are not committed: a model is cached under ``.cache/cross-encoders/`` with its training
record, and reused only when its weights' sha256 matches the record (``--retrain`` ignores it).

    python case-studies/standard_collections/train_rerankers.py          # all three folds
    python case-studies/standard_collections/train_rerankers.py --folds npl --steps 50   # quick
"""

from __future__ import annotations

from pathlib import Path

from gabarito.core.methods import trained_reading
from gabarito.hashing import sha256_file
from gabarito.core.runs import Qrels, Run
from gabarito.measure.timing import MAX_LOAD, QUIET_LOAD, QUIET_WAIT_S, load_average, wait_for_quiet
from gabarito.measure.score import score_runs
from gabarito.retrieval.pipeline import SecondReading
from gabarito.retrieval.protocol import Queries
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.retrieval.rerank.training import TrainingConfig, build_pairs
from gabarito.inputs.collections.registry import ORDER
from gabarito.retrieval.rerank.recipe import judged_plan
from gabarito.study.readers import trained_model
from gabarito.study.runner import say, variant_main
from studies.standard_collections import reranker_extras as extras
from studies.standard_collections.run_study import load_checked

HERE = Path(__file__).resolve().parent

COLLECTIONS = ORDER  # the registry's classic collections, in the book's order
FOLDS = ("cranfield", "npl", "cisi")
NEGATIVES_FROM = "bm25_arcadedb_english"
FIRST_STAGES = {"bm25": "bm25_arcadedb_english", "dense": "dense_mpnet", "rrf": "rrf_mpnet"}
NS = (5, 10, 20, 50, 100)
MEASURES = ("nDCG@10", "RR@10", "AP@100")
TESTED = ("nDCG@10", "RR@10")
NOT_RELEVANCE = {"cranfield": 0}  # Cranfield's grade 0 rows are the query's source document


def add_arguments(ap):
    ap.add_argument("--folds", default=",".join(FOLDS), help="held-out collections, comma separated")
    ap.add_argument("--steps", type=int, default=400, help="training steps per fold (batch 16)")
    ap.add_argument("--time-limit", type=float, default=1200.0, help="wall-clock guard per fold, seconds")
    ap.add_argument("--lr", type=float, default=5e-5, help="encoder's peak learning rate (linear warm-up, then decay)")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="the new classification head's peak learning rate")
    ap.add_argument("--max-length", type=int, default=192, help="tokens per (query, text) pair")
    ap.add_argument("--retrain", action="store_true", help="train again even when a cached model matches")


plan = judged_plan  # per positive: one hard negative from BM25's top 30 and one random document


def _excluded(name: str, qrels) -> dict:
    grade = NOT_RELEVANCE.get(name)
    if grade is None:
        return {}
    return {q: {d for d, g in judged.items() if g == grade} for q, judged in qrels.items()}


def _graded(name: str, qrels) -> Qrels:
    """The judgments a metric reads: without the rows that are not relevance grades."""
    skip = _excluded(name, qrels)
    return Qrels({q: {d: g for d, g in judged.items() if d not in skip.get(q, ())} for q, judged in qrels.items()})


def _run_file(name: str, method: str) -> Path:
    return HERE / "runs" / f"{name}.{method}.trec"


def _training_pairs(collections: dict, train_on: list[str], seed: int) -> list:
    """The labelled pairs of ``train_on`` (for the held-out collection: the same recipe, to test on)."""
    pairs = []
    for name in train_on:
        c = collections[name]
        queries = {q.id: q.query for q in c.judged_queries()}
        docs = {d.id: d.text for d in c.documents}
        candidates = Run.from_trec(_run_file(name, NEGATIVES_FROM))
        pairs += build_pairs(queries, docs, c.qrels, {q: candidates.ids(q) for q in candidates},
                             plan(seed), exclude=_excluded(name, c.qrels), prefix=f"{name}:")
    return pairs


def _evaluate(ctx, c, reader: MemoReader) -> tuple[dict, dict]:
    """Every first stage and its readings of the top N; also returns the runs, for the extras."""
    judged = c.judged_queries()
    queries = Queries([q.id for q in judged], [q.query for q in judged])
    texts = {d.id: d.text for d in c.documents}
    qrels = _graded(c.name, c.qrels)
    out, kept = {}, {"queries": queries, "texts": texts, "qrels": qrels, "firsts": {}, "reread": {}}
    for stage, method in FIRST_STAGES.items():
        first = Run.from_trec(_run_file(c.name, method)).cut(max(NS))
        runs = {stage: first}
        with ctx.phase(f"second reading ({c.name})"):
            for n in NS:
                runs[trained_reading(stage, n)] = SecondReading(reader, texts, n=n)(queries, first)
        kept["firsts"][stage], kept["reread"][stage] = first, runs[trained_reading(stage, extras.INPUT_N)]
        ceiling = score_runs({stage: first}, qrels, [f"R@{n}" for n in NS], resamples=ctx.resamples, seed=ctx.seed)
        scored = score_runs(runs, qrels, MEASURES, tested=TESTED, resamples=ctx.resamples, seed=ctx.seed,
                            order=None)
        out[stage] = {
            "method": method, "run_sha256": sha256_file(_run_file(c.name, method)), "n_queries": scored.n,
            "ceiling": {f"R@{n}": ceiling.mean(stage, f"R@{n}") for n in NS},
            **scored.only(tests_with=stage).to_dict(per_query=False),
            "per_query_nDCG@10": {k: scored.per_query[k]["nDCG@10"] for k in (stage, trained_reading(stage, 20))},
        }
    return out, kept


def what_it_learned(ctx, held: str, reader, held_pairs: list, train_pairs: list) -> dict:
    """AUC and score spread of the reader, on the held-out collection's pairs and on its own training pairs."""
    with ctx.phase(f"what the reader learned ({held})"):
        return extras.separability_phase(reader, held_pairs, train_pairs, ctx.seed)


def load_collections(ctx) -> dict:
    """The five classic collections, each checked against its frozen gold."""
    with ctx.phase("load collections"):
        return {name: load_checked(ctx, name) for name in COLLECTIONS}


def _extras(ctx, c, reader, kept: dict, stages: dict, held_pairs: list, train_pairs: list) -> dict:
    """Separability, the worked example and the reader-input variant of one fold."""
    queries = dict(zip(kept["queries"].ids, kept["queries"].texts))
    learned = what_it_learned(ctx, c.name, reader, held_pairs, train_pairs)
    example = extras.worked_example(reader, kept["texts"], {d.id: d.title for d in c.documents}, queries,
                                    kept["qrels"], kept["firsts"], stages["bm25"]["per_query_nDCG@10"])
    with ctx.phase(f"reader input ({c.name})"):
        reader_input = extras.reader_input_phase(ctx, reader, kept["queries"], c.documents, kept["qrels"],
                                                 kept["firsts"], kept["reread"], MEASURES[:2], TESTED)
    return {"separability": learned, "worked_example": example, "reader_input": reader_input}


def fold_names(args) -> list[str]:
    return [f.strip() for f in args.folds.split(",") if f.strip()]


def training_config(ctx) -> TrainingConfig:
    """The training recipe the command line asks for."""
    a = ctx.args
    return TrainingConfig(max_steps=a.steps, seed=ctx.seed, max_length=a.max_length, learning_rate=a.lr,
                          head_learning_rate=a.head_lr, time_limit_s=a.time_limit)


def train_and_read(ctx, collections: dict, held: str, config: TrainingConfig) -> dict:
    """Train (or reuse) the reader without ``held`` and let it re-read ``held``'s first stages.

    Returns the fold's record (training, reader, first stages, cost per pair), the model folder,
    the reader, its training pairs and the runs kept for the extras."""
    train_on = [n for n in COLLECTIONS if n != held]
    pairs = _training_pairs(collections, train_on, ctx.seed)
    folder, record = trained_model(ctx, held, pairs, config)
    reader = MemoReader(CrossEncoderReranker(folder, max_length=config.max_length, batch_size=32))
    load_before = wait_for_quiet(QUIET_LOAD, QUIET_WAIT_S)  # the previous fold's threads
    stages, kept = _evaluate(ctx, collections[held], reader)
    load_after = load_average()
    seconds, scored = reader.seconds, reader.pairs_scored
    per_pair_ms = 1000 * seconds / max(scored, 1)
    valid = load_before[0] <= MAX_LOAD  # the scoring's own two threads raise the load after
    cost = {"pairs_scored": scored, "seconds": round(seconds, 2), "ms_per_pair": round(per_pair_ms, 3),
            "load_before": load_before, "load_after": load_after, "valid": valid, "why_not_valid": None if valid else
            f"load average {load_before[0]} above {MAX_LOAD} before scoring: other work shared the cores"}
    say(f"trained_rerankers: {held}: {scored} pairs, {per_pair_ms:.1f} ms/pair")
    entry = {"train_on": train_on, "training": record, "reader": reader.provenance(), "first_stages": stages,
             "cost": cost}
    return {"entry": entry, "folder": folder, "reader": reader, "pairs": pairs, "kept": kept}


def parameters(ctx, folds: list[str]) -> dict:
    """What a results file records of the recipe and of the measurement."""
    args = ctx.args
    return {"folds": folds, "first_stages": FIRST_STAGES, "ns": list(NS), "negatives_from": NEGATIVES_FROM,
            "pair_plan": plan(ctx.seed).__dict__, "steps": args.steps, "learning_rate": args.lr,
            "head_learning_rate": args.head_lr, "time_limit_s": args.time_limit,
            "max_length": args.max_length, "measures": list(MEASURES), "tested": list(TESTED),
            "separability_pairs": extras.SEPARABILITY_PAIRS, "reader_input_n": extras.INPUT_N,
            "latency": {"ns": list(extras.LATENCY_NS), "lengths": list(extras.LATENCY_LENGTHS),
                        "questions": extras.LATENCY_QUESTIONS, "repeat": extras.LATENCY_REPEAT,
                        "quiet_load": QUIET_LOAD, "max_load": MAX_LOAD}}


def provenance(ctx, collections: dict, folds: list[str]) -> dict:
    corpus = {name: {"n_docs": len(c.documents), "n_judged_queries": len(c.judged_queries())}
              for name, c in collections.items()}
    engine = {"name": "sentence-transformers CrossEncoder (trained here)", "device": "cpu"}
    return ctx.provenance(corpus=corpus, model=None, engine=engine, parameters=parameters(ctx, folds))


def run(ctx) -> dict:
    args = ctx.args
    folds = fold_names(args)
    collections = load_collections(ctx)
    results, kept_for_latency = {}, {}
    for held in folds:
        fold = train_and_read(ctx, collections, held, training_config(ctx))
        more = _extras(ctx, collections[held], fold["reader"], fold["kept"], fold["entry"]["first_stages"],
                       _training_pairs(collections, [held], ctx.seed), fold["pairs"])
        kept_for_latency[held] = (fold["folder"], fold["kept"])
        results[held] = {**fold["entry"], **more}
    for held, (folder, kept) in kept_for_latency.items():  # last, each after the machine has quietened
        with ctx.phase(f"latency ({held})"):
            results[held]["latency"] = extras.latency_phase(folder, kept["queries"], kept["texts"],
                                                            kept["firsts"]["bm25"], args.max_length)
        say(f"trained_rerankers: {held}: latency valid={results[held]['latency']['valid']}")
    return {"folds": results, "provenance": provenance(ctx, collections, folds)}

if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="trained_rerankers", results="rerankers.json",
                 title="A cross-encoder trained here (leave one collection out) as a second reading",
                 doc=__doc__)
