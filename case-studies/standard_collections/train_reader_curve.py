"""A reader trained until it stops improving: learning curves on validation questions, leave one collection out.

For each classic collection held out, a cross-encoder is trained from all-MiniLM-L6-v2's BERT
weights (plus a new one-output head) on: every judged positive of the four other collections'
training questions, each with one non-relevant document from the committed ArcadeDB BM25 run's
top 30 and one random document (drawn again each epoch); plus the held-out collection's own
titles (or first sentences) as pseudo-queries for their own documents -- never its judgments.
A seeded fifth of each training collection's answerable questions is kept for validation and
never trained on. The budget is three epochs and at least 60,000 pairs seen; every 8,000 pairs the trainer
validates (nDCG@10 of RRF of the reader and BM25 over the top 20, the reader's order alone, and
the AUC against hard and random negatives), keeps the best checkpoint by validation alone and
saves its state, so an interrupted run resumes (:mod:`gabarito.retrieval.rerank.resumable`).

Declared before training (the primary comparison): on each held-out collection, nDCG@10 of the
fused reading (RRF@20 of the chosen checkpoint and BM25) against BM25, one Holm family over the
five collections, per loss. The reader's order alone at N = 20 and RRF at N = 100 are secondary;
so is the lesson (the fused reading lifts BM25 more than the dense first stage, per question; Holm
over the five). The held-out collection's readings at N = 10, 20, 50 and 100 of BM25 and of the
dense first stage (replace, RRF, convex; Holm within each first stage) are exploratory.

The results file is written only when every requested fold has finished training; until then the
script trains as far as ``--hours`` allow (or until ``--stop-file`` exists), says where it
stopped, and exits with status 75 (rerun to resume). At every checkpoint the folds' training
records so far (curves on validation questions, pairs seen, sessions and their devices) are
written to ``rerankers_curve_progress.json`` beside the study: the cache that resumes a run stays
on the machine that trained it, the curve is committed. That file never reads a held-out
collection's judgments and is not a result: no page draws a conclusion from it.

    python case-studies/standard_collections/train_reader_curve.py --hours 2.5          # resumes
    python case-studies/standard_collections/train_reader_curve.py --folds adi --losses bce --budget 800   # quick
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from gabarito.core.methods import reading
from gabarito.core.runs import Run
from gabarito.hashing import sha256_text
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.memory import BM25
from gabarito.retrieval.models import cache_dir, resolve, weights_sha256
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.measure.reader_validation import validation
from gabarito.measure.readings import holm_over, raw_rows, row_against
from gabarito.retrieval.rerank.recipe import EpochGroups, PseudoSource, Source, split_validation
from gabarito.retrieval.rerank.resumable import CurveConfig, finished, train_resumable
from gabarito.retrieval.rerank.weak import pseudo_queries
from gabarito.study.integrity import verify
from gabarito.study.records import machine, now_iso, write_measurement
from gabarito.study.runner import say, variant_main
from studies.standard_collections import train_rerankers as judged
from studies.standard_collections import train_weak_rerankers as weak

HERE = Path(__file__).resolve().parent

FOLDS = judged.COLLECTIONS
LOSSES = ("bce", "grouped")
FIRST_STAGE = judged.NEGATIVES_FROM
PRIMARY = ("rrf", 20)
SECONDARY = (("replace", 20), ("rrf", 100))
MEASURES = weak.MEASURES
VALIDATION_SHARE = 0.2
PSEUDO_LIMIT = 1500
EPOCHS = 3
MIN_PAIRS = 60_000  # the budget is three epochs, and never fewer pairs than this
INCOMPLETE = 75  # exit status: training not finished, rerun to resume
PROGRESS = HERE / "rerankers_curve_progress.json"


def add_arguments(ap):
    ap.add_argument("--folds", default=",".join(FOLDS), help="held-out collections, comma separated")
    ap.add_argument("--losses", default=",".join(LOSSES), help="bce, grouped or both")
    ap.add_argument("--budget", type=int, default=None, help="pairs seen per fold (default: three epochs)")
    ap.add_argument("--checkpoint", type=int, default=8000, help="pairs between checkpoints")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per (question, text) pair")
    ap.add_argument("--batch-size", type=int, default=16, help="pairs per step")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--hours", type=float, default=None, help="stop (and save the state) after this long")
    ap.add_argument("--stop-file", default=None, help="stop (and save the state) when this file exists")
    ap.add_argument("--train-only", action="store_true", help="train as far as allowed; never measure")
    ap.add_argument("--progress", default=str(PROGRESS), help="the training ledger to keep (default: beside the study)")
    ap.add_argument("--base-folder", default=None,
                    help="train from this copy of the base model (e.g. its float16 copy on a GPU machine)")


def sources(collections: dict, held: str, seed: int) -> tuple[list[Source], list[Source]]:
    """``(training, validation)`` sources of the four collections other than ``held``."""
    train, val = [], []
    for name in FOLDS:
        if name == held:
            continue
        c = collections[name]
        run = Run.from_trec(judged._run_file(name, FIRST_STAGE))
        s = Source(name, {q.id: q.query for q in c.judged_queries()}, {d.id: d.text for d in c.documents},
                   c.qrels, {q: run.ids(q) for q in run}, judged._excluded(name, c.qrels))
        t, v = split_validation(s, VALIDATION_SHARE, seed)
        train.append(t)
        val.append(v)
    return train, val


def pseudo_source(c, seed: int) -> tuple[PseudoSource, dict]:
    """The held-out collection's titles (or first sentences) as pseudo-queries; BM25 (in memory)
    over its own texts gives each one's candidates. No judgment is read."""
    found = pseudo_queries(c.documents, limit=PSEUDO_LIMIT, seed=seed)
    texts = {d.id: d.text for d in c.documents}
    bm25 = BM25(texts)
    cands = {p.doc_id: [d for d, _ in bm25.search(p.query, 31)] for p in found["pseudo"]}
    return PseudoSource(c.name, found["pseudo"], texts, cands), found["counts"]


def _config(ctx, loss: str, pairs_per_epoch: int) -> CurveConfig:
    a = ctx.args
    return CurveConfig(loss=loss, budget_pairs=a.budget or max(EPOCHS * pairs_per_epoch, MIN_PAIRS), checkpoint_pairs=a.checkpoint,
                       batch_size=a.batch_size, max_length=a.max_length, seed=ctx.seed, torch_threads=a.threads)


def _folder(held: str, config: CurveConfig, groups: EpochGroups) -> Path:
    key = sha256_text(json.dumps({"config": config.__dict__, "pairs": [[p.query_id, p.doc_id] for g in groups(0) for p in g]},
                                 sort_keys=True))[:16]
    return cache_dir() / "cross-encoders" / f"curve-{held}-{config.loss}-{key}"


def base_weights(model_id: str, folder: str | None) -> dict:
    """The weights training starts from: the model's offline copy, or ``--base-folder``'s."""
    source = resolve(folder or model_id, engine="sentence-transformers")
    return {"model_id": model_id, "from": "--base-folder" if folder else source.origin,
            "weights_sha256": weights_sha256(source)}


def _stopper(args):
    deadline = time.monotonic() + 3600 * args.hours if args.hours else None

    def should_stop() -> bool:
        return bool((deadline and time.monotonic() > deadline) or (args.stop_file and Path(args.stop_file).exists()))

    return should_stop


class ProgressLedger:
    """The training records of every fold so far, rewritten at each checkpoint (atomically, recorded
    in the study's manifest): the committed trace of a training that may span machines."""

    def __init__(self, ctx, path: Path = PROGRESS):
        self.ctx, self.path = ctx, path
        self.folds = {}
        if path.exists():
            verify(path)  # a file edited after its run is refused, never extended
            self.folds = json.loads(path.read_text(encoding="utf-8"))["folds"]

    def update(self, held: str, loss: str, device: str, about: dict, record: dict) -> None:
        """The fold's record so far, written with the rest. A fold trained on another device than
        the CPU is its own entry (``held/loss/device``), so both curves of one fold stand side by side."""
        key = f"{held}/{loss}" if device == "cpu" else f"{held}/{loss}/{device}"
        earlier = self.folds.get(key)
        replaced = list((earlier or {}).get("replaced", []))
        if earlier and _first_session(earlier["training"]) != _first_session(record):
            # another run of the fold (a machine whose cache did not keep the first): the ledger
            # describes the run whose weights will be measured, and keeps what the earlier one reached
            t = earlier["training"]
            replaced.append({"sessions": t.get("sessions"), "pairs_seen": t.get("pairs_seen"), "best": t.get("best")})
        self.folds[key] = {"held_out_collection": held, "loss": loss, "device": device, "machine": machine(),
                           **about, "training": record, **({"replaced": replaced} if replaced else {})}
        write_measurement(self.path, {
            "schema": "gabarito.training_progress/1",
            "what": "training records of the reader-curve study: validation questions only; no held-out "
                    "collection's judgments were read; not a result",
            "folds": self.folds,
            "provenance": {"gold_sha256": dict(self.ctx.gold_sha256), "git": self.ctx.git, "date": now_iso()}})


def _first_session(record: dict) -> str | None:
    """When a training record's run began (its first session), which tells one run from another."""
    sessions = record.get("sessions") or []
    return sessions[0].get("started") if sessions else None


def train_fold(ctx, collections: dict, held: str, loss: str, should_stop, ledger: ProgressLedger) -> dict:
    train, val = sources(collections, held, ctx.seed)
    pseudo, pseudo_counts = pseudo_source(collections[held], ctx.seed)
    groups = EpochGroups(train, [pseudo], ctx.seed)
    counts = groups.counts(0)
    config = _config(ctx, loss, counts["pairs_per_epoch"])
    folder = _folder(held, config, groups)
    if finished(folder) is None:
        say(f"reader_curve: {held}/{loss}: training towards {config.budget_pairs} pairs in {folder.name}")
    about = {"pairs": counts, "pseudo_queries": pseudo_counts, "validation_share": VALIDATION_SHARE,
             "base_weights": base_weights(config.base_model, ctx.args.base_folder),
             "validation_reading": {"how": PRIMARY[0], "n": PRIMARY[1], "measure": "nDCG@10", "first_stage": FIRST_STAGE},
             "validation_questions": {v.name: len(v.queries) for v in val},
             "training_questions": {t.name: len(t.queries) for t in train}}
    device = choose_device(ctx.args.device)
    with ctx.phase(f"train ({held}, {loss})"):
        record = train_resumable(groups, config, folder, validate=validation(val, n=PRIMARY[1], seed=ctx.seed),
                                 should_stop=should_stop, device=ctx.args.device, log=lambda s: say(f"reader_curve: {held}/{loss}: {s}"),
                                 on_checkpoint=lambda r: ledger.update(held, loss, device, about, r), base_folder=ctx.args.base_folder)
    ledger.update(held, loss, device, about, record)
    return {"record": record, "folder": folder, "held": held, "loss": loss, **about}


def measure_fold(ctx, c, folder: Path, max_length: int) -> dict:
    """The chosen checkpoint on the held-out collection: the top 100 of BM25 and of the dense first
    stage read again (:func:`studies.standard_collections.train_weak_rerankers.evaluate_fold`:
    replace, RRF and convex at N = 10, 20, 50, 100, each stage a Report of its readings against
    it), the lesson (the primary reading lifts BM25 more than the dense stage, per question) and
    the reader's AUC beside BM25's."""
    reader = MemoReader(CrossEncoderReranker(folder / "best", max_length=max_length, batch_size=32,
                                             device=ctx.args.device))
    stages, per_query = weak.evaluate_fold(ctx, c, reader)
    with ctx.phase(f"AUC ({c.name})"):
        auc = weak.auc_beside_bm25(ctx, c, reader)
    return {"first_stages": stages, "per_query_nDCG@10": per_query,
            "lesson": weak.lesson(per_query, ctx.seed, ctx.resamples), "auc": auc, "reader": reader.provenance(),
            "cost": {"pairs_read": reader.pairs_scored, "seconds": round(reader.seconds, 1)}}


def primary(folds: dict) -> dict:
    """The declared comparisons, per loss: RRF@20 against BM25 (the primary) and the lesson (its
    lift over BM25 minus its lift over the dense first stage), each Holm over the five held-out
    collections. A loss run on fewer collections is not that family: its rows keep their raw p
    under ``incomplete`` (which collections ran, which the declaration names) and no Holm p."""
    key = reading(*PRIMARY)
    out = {}
    for loss in sorted({f["loss"] for f in folds.values()}):
        held = {k: f for k, f in folds.items() if f["loss"] == loss}
        rows = {k: row_against(f["held_out"]["first_stages"]["bm25"]["report"], key, "bm25") for k, f in held.items()}
        lessons = {k: f["held_out"]["lesson"] for k, f in held.items()}
        ran = sorted(f["held_out_collection"] for f in held.values())
        about = {"comparison": f"{key} vs bm25, nDCG@10", "lesson": f"lift of {key} over bm25 minus over dense, nDCG@10"}
        if ran != sorted(FOLDS):
            out[loss] = {"incomplete": {"held_out": ran, "declared": list(FOLDS)}, "rows": raw_rows(rows),
                         "lesson_rows": raw_rows(lessons), **about}
            continue
        out[loss] = {"tests": holm_over(rows), "lesson_tests": holm_over(lessons), "family": sorted(rows), **about}
    return out


def run(ctx) -> dict:
    a = ctx.args
    folds = [f.strip() for f in a.folds.split(",") if f.strip()]
    losses = [x.strip() for x in a.losses.split(",") if x.strip()]
    collections = judged.load_collections(ctx)
    should_stop = _stopper(a)
    ledger = ProgressLedger(ctx, Path(a.progress))
    trained, waiting = {}, []
    for loss in losses:
        for held in folds:
            if should_stop():
                waiting.append(f"{held}/{loss}")
                continue
            fold = train_fold(ctx, collections, held, loss, should_stop, ledger)
            if fold["record"]["status"] == "interrupted":
                waiting.append(f"{held}/{loss}")
            trained[f"{held}/{loss}"] = fold
    if waiting or a.train_only:
        say(f"reader_curve: not measured; still training: {', '.join(waiting) or 'none'} (rerun to resume)")
        sys.exit(INCOMPLETE if waiting else 0)
    results = {}
    for key, fold in trained.items():
        held, loss = fold["held"], fold["loss"]
        record = {k: v for k, v in fold["record"].items() if k != "status"}
        results[key] = {"held_out_collection": held, "loss": loss, "training": record,
                        **{k: fold[k] for k in ("pairs", "pseudo_queries", "validation_questions", "training_questions")},
                        "held_out": measure_fold(ctx, collections[held], fold["folder"], a.max_length)}
    parameters = {"folds": folds, "losses": losses, "first_stage": FIRST_STAGE, "first_stages": weak.FIRST_STAGES,
                  "ns": list(weak.NS), "primary": list(PRIMARY),
                  "secondary": [list(s) for s in SECONDARY], "measures": list(MEASURES), "epochs": EPOCHS,
                  "validation_share": VALIDATION_SHARE,
             "validation_reading": {"how": PRIMARY[0], "n": PRIMARY[1], "measure": "nDCG@10", "first_stage": FIRST_STAGE}, "min_pairs": MIN_PAIRS, "pseudo_limit": PSEUDO_LIMIT, "budget": a.budget,
                  "checkpoint_pairs": a.checkpoint, "max_length": a.max_length, "batch_size": a.batch_size}
    corpus = {n: {"n_docs": len(c.documents), "n_judged_queries": len(c.judged_queries())} for n, c in collections.items()}
    engine = {"name": "transformers sequence classification, trained here (resumable)", "device": a.device or "cpu",
              "torch_threads": a.threads}
    return {"folds": results, "primary": primary(results),
            "provenance": ctx.provenance(corpus=corpus, model=None, engine=engine, parameters=parameters)}


if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="reader_curve", results="rerankers_curve.json",
                 title="A reader trained until it stops improving, leave one collection out", doc=__doc__)
