"""Train a cross-encoder for a budget of pairs, with checkpoints that resume and a learning curve.

    record = train_resumable(epoch_groups, CurveConfig(budget_pairs=67_000), folder, validate=check)
    reader = CrossEncoderReranker(folder / "best")     # the checkpoint validation chose

``epoch_groups(epoch)`` gives the epoch's training groups: each a list of
:class:`~gabarito.retrieval.rerank.training.Pair`, the positive first, then its own negatives (the
caller draws them again each epoch). The budget is stated in **pairs seen**. With ``loss="bce"``
each pair is read on its own (binary cross-entropy on its logit); with ``loss="grouped"`` a group
is one softmax over its positive and its negatives (cross-entropy, the positive as the answer).

Every ``checkpoint_pairs`` pairs (and before the first step, and at the end) ``validate(reader)``
is called with a reader of the model as it stands (``reader.score(query, texts)``); it returns a
dict whose ``"select"`` value is what the checkpoint is chosen by (higher is better; the earliest
wins a tie). The point joins the curve with the mean training loss since the previous point; the
best checkpoint's weights are kept in ``folder/best`` (a plain Hugging Face folder, which loads as
a cross-encoder), and the whole training state in ``folder/state``: weights, optimizer, schedule,
random state and position (the CPU's; on a GPU, ``device="cuda"``, a resumed run is the same
recipe but not the same bits). A later call resumes from it (the order of batches is a function of
the seed and the epoch, so a resumed run sees the same pairs as one that never stopped), and a
finished run (``folder/done.json`` whose best weights still have the recorded sha256) is never
trained again. ``should_stop()`` is asked after every step: when it says yes the state is saved
and the record says ``"status": "interrupted"``. ``base_folder`` trains from another copy of the
same base model (a float16 copy that travels to a GPU machine,
:mod:`gabarito.retrieval.rerank.transport`). ``on_checkpoint(record)`` is told the record so
far (``"status": "training"``) after each checkpoint's state is saved, so a caller can keep the
curve somewhere that outlives the cache.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.retrieval.rerank.training import (LOSSES, Pair, ReaderRecipe, _optimizer, _versions,
                                               transformer_folder)

STATE, BEST, CURVE, DONE = "state", "best", "curve.json", "done.json"
HEARTBEAT_STEPS = 50  # a line of progress every this many steps (a long run is never silent)


@dataclass(frozen=True)
class CurveConfig(ReaderRecipe):
    """The training run (:class:`~gabarito.retrieval.rerank.training.ReaderRecipe`'s fields, with
    its own defaults for the rate and the tokens per pair): the budget in pairs seen, a checkpoint
    every ``checkpoint_pairs``, the gradient clipped to ``max_grad_norm``."""

    max_length: int = 128
    learning_rate: float = 5e-5
    budget_pairs: int = 67_000
    checkpoint_pairs: int = 4_000
    max_grad_norm: float = 1.0

    @property
    def max_steps(self) -> int:
        """The schedule's length: the budget over the pairs of a nominal batch."""
        return max(1, math.ceil(self.budget_pairs / self.batch_size))


def batches(groups: Sequence[Sequence[Pair]], config: CurveConfig, epoch: int) -> list[list[list[Pair]]]:
    """The epoch's batches, each a list of groups, in an order fixed by the seed and the epoch.

    BCE: pairs shuffled one by one, ``batch_size`` per batch (each pair its own group). Grouped:
    groups shuffled, as many per batch as fill ``batch_size`` pairs (at least one)."""
    rng = random.Random(f"{config.seed}:order:{epoch}")
    if config.loss == "bce":
        pairs = [[p] for g in groups for p in g]
        rng.shuffle(pairs)
        return [pairs[i:i + config.batch_size] for i in range(0, len(pairs), config.batch_size)]
    order = [list(g) for g in groups if len(g) >= 2]
    rng.shuffle(order)
    per = max(1, config.batch_size // max(1, round(sum(map(len, order)) / max(1, len(order)))))
    return [order[i:i + per] for i in range(0, len(order), per)]


class LiveReader:
    """The model being trained, as a reader: ``score(query, texts)`` in eval mode, no gradient."""

    def __init__(self, model, tokenizer, max_length: int, batch_size: int = 32):
        self.model, self.tokenizer, self.max_length, self.batch_size = model, tokenizer, max_length, batch_size
        self.name = "cross-encoder:training"

    def score(self, query: str, texts: Sequence[str]):
        import numpy as np
        import torch

        out = []
        was_training = self.model.training
        self.model.eval()
        with torch.no_grad():
            for i in range(0, len(texts), self.batch_size):
                chunk = list(texts[i:i + self.batch_size])
                out.append(_logits(self.model, self.tokenizer, [query] * len(chunk), chunk, self.max_length).float().cpu().numpy())
        if was_training:
            self.model.train()
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def _logits(model, tokenizer, queries: list[str], texts: list[str], max_length: int):
    feats = tokenizer(queries, texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    return model(**feats.to(model.device)).logits.view(-1)


def _batch_loss(model, tokenizer, batch: list[list[Pair]], config: CurveConfig):
    import torch
    import torch.nn.functional as F

    flat = [p for g in batch for p in g]
    logits = _logits(model, tokenizer, [p.query for p in flat], [p.text for p in flat], config.max_length)
    if config.loss == "bce":
        labels = torch.tensor([float(p.label) for p in flat], dtype=logits.dtype, device=logits.device)
        return F.binary_cross_entropy_with_logits(logits, labels), len(flat)
    losses, start = [], 0
    for g in batch:
        part = logits[start:start + len(g)].unsqueeze(0)
        losses.append(F.cross_entropy(part, torch.zeros(1, dtype=torch.long, device=logits.device)))
        start += len(g)
    return torch.stack(losses).mean(), len(flat)


def _save_state(folder: Path, model, tokenizer, opt, sched, progress: dict) -> None:
    """The whole training state, written beside the old one and swapped in."""
    import torch

    tmp, old, state = folder / (STATE + ".tmp"), folder / (STATE + ".old"), folder / STATE
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp / "model"))
    tokenizer.save_pretrained(str(tmp / "model"))
    torch.save({"optimizer": opt.state_dict(), "schedule": sched.state_dict(),
                "torch_rng": torch.get_rng_state()}, tmp / "trainer.pt")
    atomic_write_json(tmp / "progress.json", progress)
    shutil.rmtree(old, ignore_errors=True)
    if state.exists():
        state.rename(old)
    tmp.rename(state)
    shutil.rmtree(old, ignore_errors=True)


def _state_folder(folder: Path) -> Path | None:
    for name in (STATE, STATE + ".old"):  # .old only if a swap was cut between its two renames
        if (folder / name / "progress.json").exists():
            return folder / name
    return None


def _save_best(folder: Path, model, tokenizer) -> str:
    tmp, best = folder / (BEST + ".tmp"), folder / BEST
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    shutil.rmtree(best, ignore_errors=True)
    tmp.rename(best)
    return sha256_file(best / "model.safetensors")


def finished(folder: str | Path) -> dict | None:
    """The record of a finished run whose best weights still have the recorded sha256, else None."""
    folder = Path(folder)
    if not (folder / DONE).exists():
        return None
    record = json.loads((folder / DONE).read_text(encoding="utf-8"))
    weights = folder / BEST / "model.safetensors"
    if weights.exists() and sha256_file(weights) == record["best"]["weights_sha256"]:
        return record
    return None


def _start(folder: Path, config: CurveConfig, device: str, base_folder: Path | None = None):
    """Model, tokenizer, optimizer, schedule and progress: from the saved state, or new (from
    ``base_folder`` when given: the same base model as ``config.base_model``, brought another way,
    e.g. :func:`gabarito.retrieval.rerank.transport.half_copy`). Weights are trained in float32
    whatever they were stored in."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    state = _state_folder(folder)
    if state is None:
        torch.manual_seed(config.seed)
        base = transformer_folder(str(base_folder) if base_folder else config.base_model, folder / "base")
        model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1).float()
        tokenizer = AutoTokenizer.from_pretrained(str(base))
        shutil.rmtree(base, ignore_errors=True)  # the state folder carries the weights from here on
        opt, sched = _optimizer(model.to(device), config)
        progress = {"config": asdict(config), "pairs": 0, "step": 0, "epoch": 0, "batch": 0, "curve": [],
                    "best": None, "sessions": [], "loss_sum": 0.0, "loss_pairs": 0}
        return model, tokenizer, opt, sched, progress
    progress = json.loads((state / "progress.json").read_text(encoding="utf-8"))
    if progress["config"] != json.loads(json.dumps(asdict(config))):
        raise GabaritoError("the saved training state was made with another configuration; remove the folder "
                            "to start again", path=state)
    model = AutoModelForSequenceClassification.from_pretrained(str(state / "model")).float()
    tokenizer = AutoTokenizer.from_pretrained(str(state / "model"))
    opt, sched = _optimizer(model.to(device), config)
    saved = torch.load(state / "trainer.pt", weights_only=True, map_location=device)
    opt.load_state_dict(saved["optimizer"])
    sched.load_state_dict(saved["schedule"])
    torch.set_rng_state(saved["torch_rng"].cpu())
    return model, tokenizer, opt, sched, progress


def _checkpoint(folder: Path, model, tokenizer, progress: dict, validate: Callable, config: CurveConfig,
                log: Callable[[str], None]) -> None:
    """Validate, add the curve's point, keep the weights when they are the best so far."""
    t0 = time.perf_counter()
    point = validate(LiveReader(model, tokenizer, config.max_length))
    loss = progress["loss_sum"] / progress["loss_pairs"] if progress["loss_pairs"] else None
    point = {"pairs": progress["pairs"], "step": progress["step"], "epoch": progress["epoch"],
             "train_loss": loss, **point, "validation_seconds": round(time.perf_counter() - t0, 1)}
    progress["curve"].append(point)
    progress["loss_sum"], progress["loss_pairs"] = 0.0, 0
    best = progress["best"]
    if best is None or point["select"] > best["select"]:
        progress["best"] = {"pairs": point["pairs"], "step": point["step"], "select": point["select"],
                            "weights_sha256": _save_best(folder, model, tokenizer)}
    atomic_write_json(folder / CURVE, progress["curve"])
    log(f"{progress['pairs']:>7} pairs: loss {loss if loss is None else round(loss, 4)}, "
        f"select {point['select']:.4f} (best at {progress['best']['pairs']})")


def train_resumable(epoch_groups: Callable[[int], Sequence[Sequence[Pair]]], config: CurveConfig,
                    folder: str | Path, *, validate: Callable, should_stop: Callable[[], bool] = lambda: False,
                    device: str | None = None, log: Callable[[str], None] = lambda s: None,
                    on_checkpoint: Callable[[dict], None] = lambda record: None,
                    base_folder: str | Path | None = None) -> dict:
    """Train (or resume, or reuse) into ``folder``; return the record (see the module's docstring)."""
    import torch

    if config.loss not in LOSSES:
        raise GabaritoError(f"unknown loss {config.loss!r} (one of {', '.join(LOSSES)})")
    from gabarito.retrieval.device import choose_device

    device = choose_device(device)
    folder = Path(folder)
    done = finished(folder)
    if done is not None:
        return {**done, "status": "finished earlier"}
    if (folder / DONE).exists():
        raise GabaritoError("a finished training run whose chosen weights no longer have the recorded sha256; "
                            "remove the folder to train again", path=folder / DONE)
    folder.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(config.torch_threads)
    model, tokenizer, opt, sched, progress = _start(folder, config, device, Path(base_folder) if base_folder else None)
    session = {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "from_pairs": progress["pairs"],
               "device": device, "torch_threads": config.torch_threads}
    t0 = time.perf_counter()
    if not progress["curve"]:
        _checkpoint(folder, model, tokenizer, progress, validate, config, log)
    model.train()
    status = "finished"
    while progress["pairs"] < config.budget_pairs:
        plan = batches(epoch_groups(progress["epoch"]), config, progress["epoch"])
        if not plan:
            raise GabaritoError("an epoch with no training pairs")
        while progress["batch"] < len(plan) and progress["pairs"] < config.budget_pairs:
            loss, n = _batch_loss(model, tokenizer, plan[progress["batch"]], config)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            opt.step()
            sched.step()
            opt.zero_grad()
            mark = progress["pairs"] // config.checkpoint_pairs
            progress["pairs"] += n
            progress["step"] += 1
            progress["batch"] += 1
            progress["loss_sum"] += float(loss.detach()) * n
            progress["loss_pairs"] += n
            if progress["pairs"] // config.checkpoint_pairs > mark or progress["pairs"] >= config.budget_pairs:
                _checkpoint(folder, model, tokenizer, progress, validate, config, log)
                _save_state(folder, model, tokenizer, opt, sched, _with_session(progress, session, t0))
                on_checkpoint({**_record(progress, session, t0), "status": "training"})
            if progress["step"] % HEARTBEAT_STEPS == 0:
                rate = (progress["pairs"] - session["from_pairs"]) / max(time.perf_counter() - t0, 1e-9)
                log(f"{progress['pairs']:>7} pairs ({rate:.1f} pairs/s this session)")
            if should_stop():
                status = "interrupted"
                break
        if status == "interrupted":
            break
        if progress["batch"] >= len(plan):
            progress["epoch"], progress["batch"] = progress["epoch"] + 1, 0
    if status == "interrupted" or progress["pairs"] < config.budget_pairs:
        _save_state(folder, model, tokenizer, opt, sched, _with_session(progress, session, t0))
        return {**_record(progress, session, t0), "status": "interrupted"}
    record = _record(progress, session, t0)
    _save_state(folder, model, tokenizer, opt, sched, _with_session(progress, session, t0))
    atomic_write_json(folder / DONE, record)
    return {**record, "status": status}


def _with_session(progress: dict, session: dict, t0: float) -> dict:
    """The progress with this session's line brought up to date (sessions add up across calls)."""
    now = {**session, "to_pairs": progress["pairs"], "seconds": round(time.perf_counter() - t0, 1)}
    sessions = [s for s in progress["sessions"] if s.get("started") != session["started"]] + [now]
    progress["sessions"] = sessions
    return progress


def _record(progress: dict, session: dict, t0: float) -> dict:
    sessions = _with_session(progress, session, t0)["sessions"]
    return {"config": progress["config"], "pairs_seen": progress["pairs"], "steps": progress["step"],
            "epochs_started": progress["epoch"] + 1, "curve": progress["curve"], "best": progress["best"],
            "sessions": sessions, "train_seconds": round(sum(s["seconds"] for s in sessions), 1),
            "versions": _versions()}
