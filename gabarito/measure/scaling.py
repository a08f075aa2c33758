"""Helpers for measuring how index and query costs grow with the corpus.

* :func:`loglog_fit` -- least-squares line through ``(log n, log cost)``: the slope is the
  growth exponent (1 = linear, 0 = flat), with R^2 and the points used.
* :func:`process_memory` -- resident memory of a process from ``/proc/<pid>/status``.
* :func:`perturbed_copies` -- a larger synthetic set of unit vectors: base vectors repeated
  with small Gaussian noise, renormalised, made in bounded chunks.
* :func:`exact_topk` -- exact cosine (dot product) top-k with numpy, in query batches.
* :func:`recall_at_k` -- share of the exact top-k found by an approximate search.
* :func:`extrapolate_seconds` -- time expected at a larger size from a measured one and a slope.
* :func:`throughput` -- queries per second of a timed loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError


def loglog_fit(sizes: Sequence[float], costs: Sequence[float]) -> dict:
    """Fit ``log10(cost) = slope * log10(size) + intercept`` (numpy.polyfit, degree 1).

    Points with a non-positive size or cost are dropped (a log needs positive values) and
    counted in ``dropped``. Needs two distinct sizes among the kept points."""
    if len(sizes) != len(costs):
        raise GabaritoError(f"sizes and costs differ in length: {len(sizes)} vs {len(costs)}")
    pts = [(float(s), float(c)) for s, c in zip(sizes, costs)
           if s is not None and c is not None and math.isfinite(float(s)) and math.isfinite(float(c))
           and float(s) > 0 and float(c) > 0]
    if len({s for s, _ in pts}) < 2:
        raise GabaritoError("a log-log fit needs at least two distinct positive sizes")
    x = np.log10([s for s, _ in pts])
    y = np.log10([c for _, c in pts])
    slope, intercept = np.polyfit(x, y, 1)
    pred = slope * x + intercept
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return {"slope": float(slope), "intercept": float(intercept), "r2": float(r2),
            "n_points": len(pts), "dropped": len(sizes) - len(pts),
            "points": [[s, c] for s, c in pts]}


def predict(fit: dict, size: float) -> float:
    """Cost the fit predicts at ``size``."""
    return float(10 ** (fit["slope"] * math.log10(size) + fit["intercept"]))


def process_memory(pid: int | None, proc: str | Path = "/proc") -> dict | None:
    """``{"rss_mb", "peak_rss_mb"}`` of a process (VmRSS, VmHWM), or None when it cannot be read."""
    if pid is None:
        return None
    try:
        text = (Path(proc) / str(int(pid)) / "status").read_text()
    except (OSError, ValueError):
        return None
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            parts = rest.split()
            if parts and parts[0].isdigit():
                values[key] = int(parts[0]) / 1024.0  # kB -> MB
    if "VmRSS" not in values:
        return None
    return {"rss_mb": round(values["VmRSS"], 1), "peak_rss_mb": round(values.get("VmHWM", values["VmRSS"]), 1)}


def perturbed_copies(base: np.ndarray, n: int, *, sigma: float, seed: int = 0,
                     chunk: int = 50_000):
    """Yield ``(start, block)`` chunks of ``n`` unit vectors: row ``i`` is ``base[i % len(base)]``
    plus N(0, sigma^2) noise per dimension, renormalised to length 1 (float32).

    The first ``len(base)`` rows carry noise too, so no row equals a base vector exactly."""
    base = np.asarray(base, dtype=np.float32)
    if base.ndim != 2 or base.shape[0] == 0:
        raise GabaritoError(f"base must be a non-empty matrix, got shape {base.shape}")
    if n < 1 or sigma < 0 or chunk < 1:
        raise GabaritoError(f"need n >= 1, sigma >= 0, chunk >= 1; got {n}, {sigma}, {chunk}")
    rng = np.random.default_rng(seed)
    for start in range(0, n, chunk):
        rows = np.arange(start, min(start + chunk, n)) % base.shape[0]
        block = base[rows] + rng.normal(0.0, sigma, size=(rows.size, base.shape[1])).astype(np.float32)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise GabaritoError("a perturbed vector has zero length")
        yield start, (block / norms).astype(np.float32)


def exact_topk(matrix: np.ndarray, queries: np.ndarray, k: int, *, batch: int = 64) -> np.ndarray:
    """Row indices of the ``k`` largest dot products per query (best first; ties by lower index)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
    if matrix.ndim != 2 or queries.shape[1] != matrix.shape[1]:
        raise GabaritoError(f"queries of {queries.shape[1]} dims against vectors of shape {matrix.shape}")
    k = min(int(k), matrix.shape[0])
    if k < 1:
        raise GabaritoError("k must be >= 1")
    out = np.empty((queries.shape[0], k), dtype=np.int64)
    for start in range(0, queries.shape[0], batch):
        sims = queries[start:start + batch] @ matrix.T
        for j, row in enumerate(sims):
            part = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
            out[start + j] = part[np.lexsort((part, -row[part]))]
    return out


def recall_at_k(approx: Sequence[Sequence], exact: Sequence[Sequence], k: int = 10) -> dict:
    """Mean, min and count of perfect per-query recall of ``exact[i][:k]`` within ``approx[i][:k]``."""
    if len(approx) != len(exact):
        raise GabaritoError(f"{len(approx)} approximate result lists for {len(exact)} exact ones")
    if not exact:
        raise GabaritoError("recall needs at least one query")
    values = []
    for got, truth in zip(approx, exact):
        truth = list(truth)[:k]
        values.append(len(set(list(got)[:k]) & set(truth)) / len(truth) if truth else 0.0)
    return {"k": k, "n_queries": len(values), "mean": float(np.mean(values)), "min": float(min(values)),
            "perfect": int(sum(v == 1.0 for v in values))}


def extrapolate_seconds(measured_size: float, measured_seconds: float, target_size: float,
                        slope: float = 1.0) -> float:
    """``measured_seconds * (target_size / measured_size) ** slope``."""
    if measured_size <= 0 or target_size <= 0 or measured_seconds < 0:
        raise GabaritoError("sizes must be positive and the time non-negative")
    return float(measured_seconds * (target_size / measured_size) ** slope)


def throughput(n_queries: int, seconds: float) -> float | None:
    """Queries per second (None when nothing was timed)."""
    return n_queries / seconds if seconds > 0 and n_queries > 0 else None


def run_recall_at_k(approx: Mapping[str, Sequence], exact: Mapping[str, Sequence], k: int = 10) -> dict:
    """:func:`recall_at_k` of two runs (``{qid: [(doc, score), ...]}``, lists in their own order),
    over the queries of ``exact``: an approximate index against exact search on the same vectors."""
    qids = list(exact)
    return recall_at_k([[d for d, _ in approx.get(q, [])] for q in qids],
                       [[d for d, _ in exact[q]] for q in qids], k)
