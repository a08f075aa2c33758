"""Which encoder and which loss, for a reader taught by the collection's own text? Measured, at one budget.

The weakly supervised reader of ``train_weak_rerankers.py`` (pseudo-queries from each document's
title or first sentence, hard negatives from BM25 filtered for false negatives, no judgment read)
is trained again under each configuration, at the same number of steps and on the same pairs:

- ``minilm/bce``: all-MiniLM-L6-v2's encoder (6 layers, 384 wide) and pointwise binary cross-entropy;
- ``minilm/grouped``: the same encoder, one positive against its negatives and the other rows of
  the batch (sentence-transformers' ``MultipleNegativesRankingLoss``);
- ``mpnet/bce``: the packaged all-mpnet-base-v2 encoder (12 layers, 768 wide), pointwise;
- ``mpnet/grouped``: both changes (about 40 times the compute of ``minilm/bce`` per step, so it
  only runs when asked).

Each reader re-reads BM25's top 20 of the collection's judged questions (replace, RRF, and a
convex fusion whose weight is chosen on the other half of the questions), tested against BM25
(paired randomization, Holm over the three readings); its AUC on judged pairs sits beside BM25's.
The default collection is MEDLINE alone, so that the wider encoder and the grouped loss train
on a laptop's CPU within the hour; ``--folds`` takes any of the five.

    python case-studies/standard_collections/train_weak_ablation.py
    python case-studies/standard_collections/train_weak_ablation.py --folds adi --configs minilm/bce --steps 10
"""

from __future__ import annotations

from pathlib import Path

from gabarito.core.methods import reading
from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.measure.readings import holm_over, row_against
from gabarito.retrieval.rerank.recipe import FILTER_MODEL, weak_plan
from gabarito.study.readers import trained_model, training_arguments, training_config
from gabarito.study.runner import say, variant_main
from studies.standard_collections import train_rerankers as judged
from studies.standard_collections import train_weak_rerankers as weak

HERE = Path(__file__).resolve().parent

BACKBONES = {"minilm": "sentence-transformers/all-MiniLM-L6-v2", "mpnet": "sentence-transformers/all-mpnet-base-v2"}
#: Each configuration's name and what it is made of (the name is never taken apart).
PARTS = {f"{b}/{loss}": (b, loss) for b in BACKBONES for loss in ("bce", "grouped")}
CONFIGS = tuple(PARTS)
DEFAULT_CONFIGS = ("minilm/bce", "minilm/grouped", "mpnet/bce")
N = 20
STAGE = {"bm25": weak.FIRST_STAGES["bm25"]}


def add_arguments(ap):
    ap.add_argument("--folds", default="medline", help="collections, comma separated")
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help=f"encoder/loss pairs, comma separated ({', '.join(CONFIGS)})")
    training_arguments(ap)
    ap.set_defaults(steps=100, time_limit=2400.0)


def configs_of(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    if unknown or not names:
        raise GabaritoError(f"--configs: unknown configuration {', '.join(unknown) or '(none)'}; "
                            f"known: {', '.join(CONFIGS)}")
    return names


def run_cell(ctx, c, name: str, pairs: list) -> dict:
    """One configuration on one collection: train (or reuse), re-read BM25's top N, AUC."""
    backbone, loss = PARTS[name]
    config = training_config(ctx, len(pairs), base_model=BACKBONES[backbone], loss=loss)
    folder, record = trained_model(ctx, f"{c.name}-weak-{backbone}-{loss}", pairs, config)
    reader = MemoReader(CrossEncoderReranker(folder, max_length=config.max_length, batch_size=32,
                                             device=ctx.args.device))
    stages, _ = weak.evaluate_fold(ctx, c, reader, stages=STAGE, ns=(N,))
    with ctx.phase(f"AUC ({c.name}, {name})"):
        auc = weak.auc_beside_bm25(ctx, c, reader)
    say(f"weak_ablation: {c.name} ({name}): {reader.pairs_scored} pairs read in {reader.seconds:.0f} s")
    return {"collection": c.name, "config": name, "base_model": BACKBONES[backbone], "loss": loss,
            "training": record, "reader": reader.provenance(), "bm25": stages["bm25"], "auc": auc,
            "cost": {"pairs_read": reader.pairs_scored, "seconds": round(reader.seconds, 1)}}


def primary(cells: dict) -> dict:
    """RRF@N against BM25 per configuration, Holm over the collections of that configuration."""
    return {name: holm_over({c["collection"]: row_against(c["bm25"]["report"], reading("rrf", N), "bm25")
                             for c in cells.values() if c["config"] == name})
            for name in sorted({c["config"] for c in cells.values()})}


def run(ctx) -> dict:
    from gabarito.retrieval.models.encoders import load_encoder

    a = ctx.args
    folds = [f.strip() for f in a.folds.split(",") if f.strip()]
    names = configs_of(a.configs)
    collections = judged.load_collections(ctx)
    encoder = load_encoder(FILTER_MODEL, device=a.device)
    cells, counts = {}, {}
    for held in folds:
        with ctx.phase(f"pseudo-queries ({held})"):
            pairs, counts[held] = weak.weak_training_pairs(collections[held], ctx.seed, encoder)
        for name in names:
            cells[f"{held}/{name}"] = run_cell(ctx, collections[held], name, pairs)
    parameters = {"folds": folds, "configs": names, "backbones": BACKBONES, "n": N, "first_stage": STAGE,
                  "measures": list(weak.MEASURES), "pseudo_limit": weak.PSEUDO_LIMIT,
                  "pair_plan": weak_plan(ctx.seed).__dict__, "filter_model": FILTER_MODEL, "steps": a.steps,
                  "time_limit_s": a.time_limit, "max_length": a.max_length, "learning_rate": a.lr,
                  "head_learning_rate": a.head_lr}
    corpus = {n: {"n_docs": len(collections[n].documents), "n_judged_queries": len(collections[n].judged_queries())}
              for n in folds}
    engine = {"name": "sentence-transformers CrossEncoder (trained here)", "device": a.device or "cpu"}
    return {"cells": cells, "weak_pairs": counts, "primary": primary(cells),
            "provenance": ctx.provenance(corpus=corpus, model=encoder.provenance(), engine=engine,
                                         parameters=parameters)}


if __name__ == "__main__":
    variant_main(HERE, run, add_arguments, name="weak_ablation", results="rerankers_weak_ablation.json",
                 title="Encoder and loss of the weakly supervised reader, at one budget", doc=__doc__)
