"""Uncertainty and significance for per-query scores.

All functions take per-query values (one number per query, e.g. RR@10) and
treat the queries as the sampling unit. Paired functions take two sequences
aligned by query. Everything random uses ``numpy.random.default_rng(seed)``,
so results are reproducible for a given seed.

* :func:`bootstrap_ci` -- percentile bootstrap interval of the mean.
* :func:`paired_randomization_test` -- two-sided sign-flip test of the mean
  difference, p = (count + 1) / (n_resamples + 1).
* :func:`sign_test` -- exact two-sided binomial test on wins and losses.
* :func:`holm` -- Holm-Bonferroni adjusted p-values.
* :func:`effect_size` -- mean difference and paired Cohen's d (d_z).
* :func:`compare_methods` -- all of the above for every pair of methods.
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError

DEFAULT_SEED = 20240601
#: Upper bound on the number of cells of one resampling matrix (bounds memory use).
_CHUNK_CELLS = 2_000_000


def _as_array(values: Sequence[float], what: str = "values") -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise GabaritoError(f"{what} must be a non-empty list of numbers")
    if not np.all(np.isfinite(array)):
        raise GabaritoError(f"{what} contain a NaN or infinite value")
    return array


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    xa, xb = _as_array(a, "a"), _as_array(b, "b")
    if xa.size != xb.size:
        raise GabaritoError(f"paired values differ in length: {xa.size} vs {xb.size}")
    return xa, xb


def _chunks(n_resamples: int, n: int):
    """Row counts of successive resampling matrices of at most ``_CHUNK_CELLS`` cells."""
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        yield min(rows, n_resamples - start)


def bootstrap_ci(values: Sequence[float], n_resamples: int = 10000, alpha: float = 0.05,
                 seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap ``(low, high)`` interval of the mean, at level ``1 - alpha``."""
    x = _as_array(values)
    if n_resamples < 1 or not 0 < alpha < 1:
        raise GabaritoError(f"need n_resamples >= 1 and 0 < alpha < 1, got {n_resamples}, {alpha}")
    rng = np.random.default_rng(seed)
    means = np.concatenate([
        x[rng.integers(0, x.size, size=(rows, x.size))].mean(axis=1)
        for rows in _chunks(n_resamples, x.size)
    ])
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def paired_randomization_test(a: Sequence[float], b: Sequence[float], n_resamples: int = 10000,
                              seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value that ``mean(a - b)`` is 0, by random sign flips of the differences."""
    xa, xb = _paired(a, b)
    if n_resamples < 1:
        raise GabaritoError(f"n_resamples must be >= 1, got {n_resamples}")
    diff = xa - xb
    observed = abs(diff.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(diff).max()))
    rng = np.random.default_rng(seed)
    count = 0
    for rows in _chunks(n_resamples, diff.size):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, diff.size))
        count += int(np.sum(np.abs((signs * diff).mean(axis=1)) >= observed - tolerance))
    return (count + 1) / (n_resamples + 1)


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict[str, float | int]:
    """Wins (a > b), losses, ties, and the exact two-sided binomial p on the non-tied pairs."""
    xa, xb = _paired(a, b)
    wins, losses = int(np.sum(xa > xb)), int(np.sum(xa < xb))
    ties = xa.size - wins - losses
    n = wins + losses
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))
    p = min(1.0, 2 * tail / 2**n)
    return {"wins": wins, "losses": losses, "ties": ties, "p": p}


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values (monotone in the raw p, capped at 1), same keys."""
    order = sorted(pvalues, key=pvalues.__getitem__)
    m = len(order)
    adjusted: dict[str, float] = {}
    running = 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[key]))
        adjusted[key] = running
    return {key: adjusted[key] for key in pvalues}


def effect_size(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """``mean_diff`` = mean(a - b) and ``dz`` = mean_diff / sd(a - b) (sample sd, ddof=1).

    ``dz`` is NaN with fewer than two queries; with zero spread it is 0 when the
    mean difference is 0 and +/-inf otherwise.
    """
    xa, xb = _paired(a, b)
    diff = xa - xb
    mean_diff = float(diff.mean())
    if diff.size < 2:
        return {"mean_diff": mean_diff, "dz": math.nan}
    sd = float(diff.std(ddof=1))
    if sd == 0.0:
        dz = 0.0 if mean_diff == 0.0 else math.copysign(math.inf, mean_diff)
    else:
        dz = mean_diff / sd
    return {"mean_diff": mean_diff, "dz": dz}


def _aligned(per_query: Mapping[str, Sequence[float] | Mapping[str, float]]) -> dict[str, list[float]]:
    """Per-method value lists in one query order (mappings are aligned on sorted qids)."""
    methods = list(per_query)
    if len(methods) < 2:
        raise GabaritoError("compare_methods needs at least two methods")
    if all(isinstance(v, Mapping) for v in per_query.values()):
        qids = sorted(per_query[methods[0]])
        for method in methods[1:]:
            if sorted(per_query[method]) != qids:
                raise GabaritoError(f"method {method!r} was scored on different queries")
        return {m: [per_query[m][q] for q in qids] for m in methods}
    return {m: list(per_query[m]) for m in methods}


def compare_methods(per_query: Mapping[str, Sequence[float] | Mapping[str, float]],
                    n_resamples: int = 10000, alpha: float = 0.05,
                    seed: int = DEFAULT_SEED) -> list[dict[str, object]]:
    """One row per method pair (in input order): means, difference, CI, tests, Holm p.

    ``per_query`` maps each method to its per-query values, either lists aligned by
    query or ``{qid: value}`` mappings (aligned on qid). Row keys: ``a``, ``b``,
    ``mean_a``, ``mean_b``, ``mean_diff`` (a - b), ``ci_low``/``ci_high`` (bootstrap
    CI of the mean difference), ``dz``, ``p_randomization``, ``wins``, ``losses``,
    ``ties``, ``p_sign``, and ``p_holm`` (randomization p adjusted over all pairs).
    """
    values = _aligned(per_query)
    rows: list[dict[str, object]] = []
    for name_a, name_b in itertools.combinations(values, 2):
        a, b = _paired(values[name_a], values[name_b])
        low, high = bootstrap_ci(a - b, n_resamples=n_resamples, alpha=alpha, seed=seed)
        sign = sign_test(a, b)
        rows.append({
            "a": name_a, "b": name_b,
            "mean_a": float(a.mean()), "mean_b": float(b.mean()),
            "mean_diff": float((a - b).mean()), "ci_low": low, "ci_high": high,
            "dz": effect_size(a, b)["dz"],
            "p_randomization": paired_randomization_test(a, b, n_resamples=n_resamples, seed=seed),
            "wins": sign["wins"], "losses": sign["losses"], "ties": sign["ties"], "p_sign": sign["p"],
        })
    adjusted = holm({str(i): row["p_randomization"] for i, row in enumerate(rows)})
    for i, row in enumerate(rows):
        row["p_holm"] = adjusted[str(i)]
    return rows
