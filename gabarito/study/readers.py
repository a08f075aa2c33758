"""What every study that trains a reader shares: its command-line options, its training run, and
the cache of trained readers.

    training_arguments(ap)                                   # --steps, --lr, --max-length, ...
    config = training_config(ctx, len(pairs))                # the run the options ask for
    folder, record = trained_model(ctx, "cranfield", pairs, config)   # cached by content

A trained reader is cached under ``<cache>/cross-encoders/heldout-<tag>-<key>`` with its training
record beside it (``.json``); ``key`` hashes the configuration and every pair's identity, so a
reader trained on other pairs or with another recipe is never reused, and a cached one is reused
only when its weights still have the recorded sha256 (``--retrain`` ignores the cache).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gabarito.hashing import atomic_write_json, sha256_text
from gabarito.retrieval.models import cache_dir
from gabarito.retrieval.rerank.training import TrainingConfig, cached_weights_match, train_cross_encoder
from gabarito.study.runner import say


def training_arguments(ap) -> None:
    """The options of a reader trained here (weak supervision and the flagship's concept reader)."""
    ap.add_argument("--steps", type=int, default=250, help="training steps per reader (batch 16); at most "
                                                          "three passes over the pairs")
    ap.add_argument("--time-limit", type=float, default=1500.0, help="wall-clock guard per reader, seconds")
    ap.add_argument("--lr", type=float, default=5e-5, help="encoder's peak learning rate")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="the new head's peak learning rate")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per (query, text) pair")
    ap.add_argument("--base-model", default="sentence-transformers/all-MiniLM-L6-v2", help="the encoder's weights")
    ap.add_argument("--loss", default="bce", choices=("bce", "grouped"), help="pointwise BCE or grouped loss")
    ap.add_argument("--device", default=None, help="auto, cpu or cuda (default: the CPU)")
    ap.add_argument("--retrain", action="store_true", help="train again even when a cached model matches")


def training_config(ctx, n_pairs: int, *, base_model: str | None = None, loss: str | None = None) -> TrainingConfig:
    """The reader's training run from the options: at most three passes over ``n_pairs`` pairs
    (batch 16); ``base_model`` and ``loss`` override the options."""
    a = ctx.args
    steps = min(a.steps, 3 * math.ceil(n_pairs / 16))
    return TrainingConfig(base_model=base_model or a.base_model, max_steps=steps, seed=ctx.seed,
                          max_length=a.max_length, learning_rate=a.lr, head_learning_rate=a.head_lr,
                          time_limit_s=a.time_limit, loss=loss or a.loss)


def trained_model(ctx, tag: str, pairs: list, config: TrainingConfig) -> tuple[Path, dict]:
    """The reader's folder and its training record, from the cache when its weights match."""
    key = sha256_text(json.dumps({"config": config.__dict__, "pairs": [(p.query_id, p.doc_id, p.label) for p in pairs]},
                                 sort_keys=True, default=str))[:16]
    folder = cache_dir() / "cross-encoders" / f"heldout-{tag}-{key}"
    record_path = folder.with_suffix(".json")
    if not getattr(ctx.args, "retrain", False) and record_path.exists():
        record = json.loads(record_path.read_text(encoding="utf-8"))
        if cached_weights_match(folder, record["weights_sha256"]):
            say(f"trained_rerankers: {tag}: cached model {folder.name} (weights sha256 matches)")
            return folder, {**record, "reused": True}
    with ctx.phase(f"train (held out: {tag})"):
        record = train_cross_encoder(pairs, config, folder)
    atomic_write_json(record_path, record)
    return folder, {**record, "reused": False}
