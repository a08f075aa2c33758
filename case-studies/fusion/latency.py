"""One round trip against two: the native hybrid statement against two searches + RRF in Python.

Per question, with its vector already computed (encoding costs both paths the same):

* ``native`` -- one HTTP call: ArcadeDB's ``vector.fuse`` of the full-text and vector sub-queries;
* ``python`` -- two HTTP calls (BM25, kNN) and RRF in this process;
* their parts: ``bm25`` and ``knn`` alone, and ``http_floor`` (a trivial ``SELECT 1``).

All five are timed in one run, after warm-up, round robin (one pass of every stage over the
questions, then the next pass), so a change of machine load touches every stage alike. The load
average is read before and after; with a one-minute load above :data:`MAX_LOAD` the numbers are
recorded but marked not valid (on a loaded machine they measure the queue as much as the engine).
"""

from __future__ import annotations

import os

from gabarito.measure import timing
from gabarito.retrieval.arcadedb.native_fusion import NativeFusion
from gabarito.retrieval.fusion import rrf

MAX_LOAD = timing.MAX_LOAD  # the quiet-machine rule, once for every study
STAGES = ("http_floor", "bm25", "knn", "python", "native")
#: The calls to the server each path makes per question: the Python path one per search it fuses
#: (then RRF in this process), the native path one statement. The fusion chapter's heading and
#: text count them from here.
PYTHON_CALLS = ("bm25", "knn")
NATIVE_CALLS = ("native",)


def stage_functions(index, encoder, depth: int, rrf_k: int) -> dict:
    native = NativeFusion(index, encoder, fusion="rrf", rrf_k=rrf_k, model_id=encoder.model_id)
    mid = encoder.model_id

    calls = {"bm25": lambda item: index.bm25(item[0], depth),
             "knn": lambda item: index.knn(item[1], depth, model_id=mid)}

    def python(item):
        rrf([[d for d, _ in calls[c](item)] for c in PYTHON_CALLS], rrf_k=rrf_k, depth=depth)

    return {
        "http_floor": lambda _item: index.floor(),
        **calls,
        "python": python,
        "native": lambda item: native.search_one(item[0], item[1], depth),
    }


def load() -> dict:
    one, five, fifteen = os.getloadavg()
    return {"1min": one, "5min": five, "15min": fifteen}


def measure(index, encoder, texts, vectors, *, depth: int, rrf_k: int, passes: int, warmup: int = 5) -> dict:
    """Median and p95 of every stage at ``depth``, the ratio python / native, the load, validity."""
    items = list(zip(texts, vectors))
    fns = stage_functions(index, encoder, depth, rrf_k)
    before = load()
    for fn in fns.values():
        timing.time_calls(fn, items, repeat=1, warmup=warmup)  # warm-up pass, discarded
    samples = {name: [] for name in STAGES}
    for _ in range(passes):
        for name in STAGES:
            samples[name] += timing.time_calls(fns[name], items, repeat=1, warmup=0)
    after = load()
    out = {name: timing.summarize(values) for name, values in samples.items()}
    peak = max(before["1min"], after["1min"])
    return {
        "depth": depth, "passes": passes, "questions": len(items), "stages_ms": out,
        "ratio_python_over_native": {s: out["python"][s] / out["native"][s] for s in ("median", "p95")},
        "native_over_floor": out["native"]["median"] / out["http_floor"]["median"],
        "python_over_floor": out["python"]["median"] / out["http_floor"]["median"],
        "load_before": before, "load_after": after, "cpu_count": os.cpu_count(), "max_load": MAX_LOAD,
        "peak_load_1min": peak, "valid": peak <= MAX_LOAD,
    }
