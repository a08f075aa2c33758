"""Wall-clock latency of repeated calls, and a summary of the samples.

:func:`time_calls` measures each call with :func:`time.perf_counter` (or an
injected clock, which keeps tests deterministic) and returns milliseconds.
:func:`summarize` reduces the samples to n, mean, median, p95, min and max;
p95 uses numpy's default linear interpolation between order statistics. :func:`timed` and
:func:`interleaved` add queries per second (several settings alternated query by query);
:func:`in_process` keeps BLAS on one thread while an in-process reference is timed.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.measure.scaling import throughput


#: The quiet-machine rule, once for every study: a timing is valid only when the one-minute load
#: average was at most ``MAX_LOAD`` (2 cores: about one busy core besides the measurement); a
#: measurement waits up to ``QUIET_WAIT_S`` seconds for the load to fall to ``QUIET_LOAD`` first.
MAX_LOAD = 1.0
QUIET_LOAD = 0.5
QUIET_WAIT_S = 300.0


def summarize(samples_ms: Sequence[float]) -> dict[str, float]:
    """``{"n", "mean", "median", "p95", "min", "max"}`` of latency samples in milliseconds."""
    x = np.asarray(samples_ms, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise GabaritoError("no timing samples to summarize")
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "median": float(np.median(x)),
        "p95": float(np.percentile(x, 95, method="linear")),
        "min": float(x.min()),
        "max": float(x.max()),
    }


def time_calls(fn: Callable[[Any], Any], inputs: Sequence[Any], repeat: int = 1, warmup: int = 1,
               clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Call ``fn(x)`` for every input, ``repeat`` times over, and return each duration in ms.

    First ``warmup`` untimed calls are made, cycling through ``inputs`` (to load
    caches and models). Samples come in call order: pass 1 over all inputs, then
    pass 2, and so on, so the result has ``repeat * len(inputs)`` entries.
    """
    items = list(inputs)
    if not items:
        raise GabaritoError("time_calls needs at least one input")
    if repeat < 1 or warmup < 0:
        raise GabaritoError(f"need repeat >= 1 and warmup >= 0, got {repeat}, {warmup}")
    for i in range(warmup):
        fn(items[i % len(items)])
    samples: list[float] = []
    for _ in range(repeat):
        for x in items:
            start = clock()
            fn(x)
            samples.append((clock() - start) * 1000.0)
    return samples


def load_average() -> list[float] | None:
    """The 1, 5 and 15-minute load averages (None where the system does not report them)."""
    try:
        return [round(float(x), 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def wait_for_quiet(max_load: float, timeout_s: float, *, poll_s: float = 5.0,
                   read: Callable[[], list[float] | None] = load_average,
                   sleep: Callable[[float], Any] = time.sleep) -> list[float] | None:
    """Wait until the one-minute load average is at most ``max_load`` (or ``timeout_s`` passed)
    and return the last reading; the caller decides what a reading above the limit means."""
    waited, now = 0.0, read()
    while now is not None and now[0] > max_load and waited < timeout_s:
        sleep(poll_s)
        waited += poll_s
        now = read()
    return now


def timed(fn, inputs, min_queries: int) -> dict:
    """Median/p95 of ``fn`` over ``inputs``, enough passes for ``min_queries`` samples, 5 warm-ups."""
    reps = max(1, math.ceil(min_queries / len(inputs)))
    samples = time_calls(fn, inputs, repeat=reps, warmup=5)
    out = summarize(samples)
    out["qps"] = throughput(len(samples), sum(samples) / 1000.0)
    return out


def interleaved(fns: dict, inputs, min_queries: int) -> dict:
    """Like :func:`timed` for several settings at once, alternating them query by query so that
    every setting meets the same load on a shared machine (no setting is timed in a quieter spell)."""
    reps = max(1, math.ceil(min_queries / len(inputs)))
    samples = {name: [] for name in fns}
    for _ in range(reps):
        for x in inputs:
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn(x)
                samples[name].append((time.perf_counter() - t0) * 1000.0)
    out = {}
    for name, values in samples.items():
        out[name] = summarize(values)
        out[name]["qps"] = throughput(len(values), sum(values) / 1000.0)
        out[name]["order"] = "interleaved with " + ", ".join(n for n in fns if n != name)
    return out


def in_process(fn):
    """Run ``fn`` with BLAS limited to one thread: on a shared 2-core machine a second BLAS thread
    mostly spins against the server and the other processes, and it makes medians erratic."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn / numpy stacks
        return fn()
    with threadpool_limits(limits=1):
        return fn()
