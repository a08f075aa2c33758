"""Uncertainty and significance for per-query scores.

All functions take per-query values (one number per query, e.g. RR@10) and
treat the queries as the sampling unit. Paired functions take two sequences
aligned by query. Everything random uses ``numpy.random.default_rng(seed)``,
so results are reproducible for a given seed.

* :func:`bootstrap_ci` -- percentile bootstrap interval of the mean.
* :func:`paired_randomization_test` -- two-sided sign-flip test of the mean
  difference, p = (count + 1) / (n_resamples + 1).
* :func:`bootstrap_ci_many`, :func:`randomization_p_many` -- the same for several
  series of one length at once.
* :func:`~gabarito.core.signtest.sign_test` -- exact two-sided binomial test on wins and losses.
* :func:`holm` -- Holm-Bonferroni adjusted p-values.
* :func:`effect_size` -- mean difference and paired Cohen's d (d_z).
* :func:`compare_methods` -- all of the above for every pair of methods;
  :func:`compare_tables` -- the same for several tables (e.g. one per measure).

Several series, one draw: with one seed, every series of ``n`` values is resampled
by the same stream of indices (and of signs), so series of one length are resampled
together -- each chunk of the stream is drawn once, turned into per-resample counts
of each query, and all the series' resample means are one matrix product. The
numbers are those of resampling each series alone (same draws; sums in another
order, so equal to about 1e-15).
"""

from __future__ import annotations

import contextlib
import itertools
import math
from typing import Mapping, Sequence

import numpy as np

from gabarito.core.signtest import finite_array, paired_arrays, sign_test
from gabarito.errors import GabaritoError
from gabarito.core.page_guard import refuse

DEFAULT_SEED = 20240601

#: The project's one significance level: 95% intervals, and a difference is significant when
#: its Holm-corrected p is below it.
ALPHA = 0.05
#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054
#: Upper bound on the number of cells of one resampling matrix (bounds memory use). The streams
#: drawn do not depend on it; small chunks stay in cache and keep BLAS on one thread.
_CHUNK_CELLS = 1 << 17
_BLAS = None  # threadpoolctl's controller once looked up (False: not available)


def _chunks(n_resamples: int, n: int):
    """Row counts of successive resampling matrices of at most ``_CHUNK_CELLS`` cells."""
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        yield min(rows, n_resamples - start)


def _series(series: Sequence[Sequence[float]], what: str = "values") -> np.ndarray:
    """Series of one length as the rows of a ``(len(series), n)`` array (each checked)."""
    rows = [finite_array(values, what) for values in series]
    if not rows:
        raise GabaritoError(f"no series of {what} given")
    if len({row.size for row in rows}) > 1:
        raise GabaritoError(f"{what}: series of different lengths resampled together "
                            f"({sorted({row.size for row in rows})})")
    return np.stack(rows)


def _one_blas_thread():
    """A context keeping BLAS on one thread (through threadpoolctl, installed with
    sentence-transformers; without it, nothing changes). The products here are thin, many queries
    by a few series: BLAS threads gain nothing on them and, on a busy machine, cost up to 20x."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
            _BLAS = ThreadpoolController()
        except Exception:  # noqa: BLE001 -- any failure: leave BLAS as it is
            _BLAS = False
    return _BLAS.limit(limits=1, user_api="blas") if _BLAS else contextlib.nullcontext()


def _resample_means(x: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, S)`` bootstrap means of the ``S`` rows of ``x`` (``S x n``).

    Resample ``r`` draws the indices ``rng.integers(0, n, size=(n_resamples, n))[r]`` (drawn
    chunk by chunk: the stream does not depend on the chunking); the mean of series ``s`` is
    ``counts[r] @ x[s] / n``, where ``counts[r, i]`` is how often query ``i`` was drawn.
    """
    n = x.shape[1]
    means = np.empty((n_resamples, x.shape[0]))
    done = 0
    for rows in _chunks(n_resamples, n):
        idx = rng.integers(0, n, size=(rows, n))
        idx += np.arange(0, rows * n, n)[:, None]  # row offsets: one bincount for the chunk
        counts = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(float)
        means[done:done + rows] = counts @ x.T
        done += rows
    return means / n


def bootstrap_ci_many(series: Sequence[Sequence[float]], n_resamples: int = 10000, alpha: float = ALPHA,
                      seed: int = DEFAULT_SEED) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of each series (all of one length), from one shared draw."""
    refuse("a bootstrap interval")
    x = _series(series)
    if n_resamples < 1 or not 0 < alpha < 1:
        raise GabaritoError(f"need n_resamples >= 1 and 0 < alpha < 1, got {n_resamples}, {alpha}")
    with _one_blas_thread():
        means = _resample_means(x, n_resamples, np.random.default_rng(seed))
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    return [(float(lo), float(hi)) for lo, hi in zip(low, high)]


def bootstrap_ci(values: Sequence[float], n_resamples: int = 10000, alpha: float = ALPHA,
                 seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap ``(low, high)`` interval of the mean, at level ``1 - alpha``."""
    return bootstrap_ci_many([values], n_resamples=n_resamples, alpha=alpha, seed=seed)[0]


def randomization_p_many(diffs: Sequence[Sequence[float]], n_resamples: int = 10000,
                         seed: int = DEFAULT_SEED) -> list[float]:
    """:func:`paired_randomization_test` p of each series of paired differences (all of one
    length), from one shared stream of signs."""
    refuse("a randomization test")
    d = _series(diffs, "differences")
    if n_resamples < 1:
        raise GabaritoError(f"n_resamples must be >= 1, got {n_resamples}")
    observed = np.abs(d.mean(axis=1))
    tolerance = 1e-12 * np.maximum(1.0, np.abs(d).max(axis=1))
    rng = np.random.default_rng(seed)
    count = np.zeros(d.shape[0], dtype=np.int64)
    with _one_blas_thread():
        for rows in _chunks(n_resamples, d.shape[1]):
            signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, d.shape[1]))
            count += np.sum(np.abs(signs @ d.T / d.shape[1]) >= observed - tolerance, axis=0)
    return [float((c + 1) / (n_resamples + 1)) for c in count]


def paired_randomization_test(a: Sequence[float], b: Sequence[float], n_resamples: int = 10000,
                              seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value that ``mean(a - b)`` is 0, by random sign flips of the differences."""
    xa, xb = paired_arrays(a, b)
    return randomization_p_many([xa - xb], n_resamples=n_resamples, seed=seed)[0]


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values (monotone in the raw p, capped at 1), same keys."""
    refuse("a Holm correction")
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
    xa, xb = paired_arrays(a, b)
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
                    n_resamples: int = 10000, alpha: float = ALPHA,
                    seed: int = DEFAULT_SEED) -> list[dict[str, object]]:
    """One row per method pair (in input order): means, difference, CI, tests, Holm p.

    ``per_query`` maps each method to its per-query values, either lists aligned by
    query or ``{qid: value}`` mappings (aligned on qid). Row keys: ``a``, ``b``,
    ``mean_a``, ``mean_b``, ``mean_diff`` (a - b), ``ci_low``/``ci_high`` (bootstrap
    CI of the mean difference), ``dz``, ``p_randomization``, ``wins``, ``losses``,
    ``ties``, ``p_sign``, and ``p_holm`` (randomization p adjusted over all pairs).
    """
    return compare_tables({"": per_query}, n_resamples=n_resamples, alpha=alpha, seed=seed)[""]


def compare_tables(tables: Mapping[str, Mapping[str, Sequence[float] | Mapping[str, float]]],
                   n_resamples: int = 10000, alpha: float = ALPHA,
                   seed: int = DEFAULT_SEED) -> dict[str, list[dict[str, object]]]:
    """:func:`compare_methods` of each table (e.g. one per measure), same keys; Holm within a
    table. The pairs of every table with the same number of queries share one draw."""
    pairs = []  # (table, name_a, name_b, a, b)
    for key, per_query in tables.items():
        values = _aligned(per_query)
        for name_a, name_b in itertools.combinations(values, 2):
            pairs.append((key, name_a, name_b, *paired_arrays(values[name_a], values[name_b])))
    ci: dict[int, tuple[float, float]] = {}
    p: dict[int, float] = {}
    for size in {pair[3].size for pair in pairs}:
        group = [i for i, pair in enumerate(pairs) if pair[3].size == size]
        diffs = [pairs[i][3] - pairs[i][4] for i in group]
        ci.update(zip(group, bootstrap_ci_many(diffs, n_resamples=n_resamples, alpha=alpha, seed=seed)))
        p.update(zip(group, randomization_p_many(diffs, n_resamples=n_resamples, seed=seed)))
    out: dict[str, list[dict[str, object]]] = {key: [] for key in tables}
    for i, (key, name_a, name_b, a, b) in enumerate(pairs):
        sign = sign_test(a, b)
        out[key].append({
            "a": name_a, "b": name_b,
            "mean_a": float(a.mean()), "mean_b": float(b.mean()),
            "mean_diff": float((a - b).mean()), "ci_low": ci[i][0], "ci_high": ci[i][1],
            "dz": effect_size(a, b)["dz"], "p_randomization": p[i],
            "wins": sign["wins"], "losses": sign["losses"], "ties": sign["ties"], "p_sign": sign["p"],
        })
    for rows in out.values():
        adjusted = holm({str(i): row["p_randomization"] for i, row in enumerate(rows)})
        for i, row in enumerate(rows):
            row["p_holm"] = adjusted[str(i)]
    return out


def wilson(part: int, whole: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval (95% by default) of the share ``part / whole``; ``(0, 1)`` for an
    empty whole."""
    refuse("a Wilson interval")
    if whole == 0:
        return (0.0, 1.0)
    p, z2 = part / whole, z * z
    centre = (p + z2 / (2 * whole)) / (1 + z2 / whole)
    half = z * math.sqrt(p * (1 - p) / whole + z2 / (4 * whole * whole)) / (1 + z2 / whole)
    return (max(0.0, centre - half), min(1.0, centre + half))
