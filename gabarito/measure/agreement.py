"""Agreement between relevance assessors: confusion matrix and Cohen's kappa, with an interval.

Two assessors grade the same items on an ordinal scale (here 0 not relevant, 1 partly, 2 answers
the question). Cohen's kappa compares their observed agreement with the agreement expected from
each assessor's own grade frequencies:

    kappa = 1 - sum(w * observed) / sum(w * expected)

with disagreement weights ``w[i][j]``: 0 on the diagonal and 1 elsewhere (unweighted) or
``|i - j| / (n_labels - 1)`` (linear). ``observed`` and ``expected`` are proportions. When the
expected disagreement is 0 (both assessors used one and the same grade for everything), kappa is
undefined and returned as ``None``. The interval is a percentile bootstrap over items (fixed seed);
resamples where kappa is undefined are left out and counted.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from gabarito.core.page_guard import refuse
from gabarito.errors import GabaritoError
from gabarito.measure.stats import ALPHA, DEFAULT_SEED

GRADES = (0, 1, 2)


def confusion(a: Sequence[int], b: Sequence[int], labels: Sequence[int] = GRADES) -> list[list[int]]:
    """Counts ``m[i][j]`` of items graded ``labels[i]`` by the first assessor and ``labels[j]`` by the second."""
    if len(a) != len(b):
        raise GabaritoError(f"{len(a)} grades against {len(b)}: assessors must grade the same items")
    index = {g: i for i, g in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for x, y in zip(a, b):
        if x not in index or y not in index:
            raise GabaritoError(f"grade {x if x not in index else y!r} is not one of {list(labels)}")
        m[index[x]][index[y]] += 1
    return m


def _weights(n: int, weights: str | None) -> np.ndarray:
    i, j = np.indices((n, n))
    if weights is None:
        return (i != j).astype(float)
    if weights == "linear":
        return np.abs(i - j) / (n - 1)
    raise GabaritoError(f"unknown kappa weights {weights!r}; use None or 'linear'")


def _kappa_from_matrix(m: np.ndarray, w: np.ndarray) -> float | None:
    total = m.sum()
    if total == 0:
        return None
    observed = m / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    denom = float((w * expected).sum())
    if denom == 0:
        return None
    return 1.0 - float((w * observed).sum()) / denom


def cohen_kappa(a: Sequence[int], b: Sequence[int], *, weights: str | None = None,
                labels: Sequence[int] = GRADES) -> float | None:
    """Cohen's kappa of two assessors' grades (``weights`` None or ``"linear"``)."""
    refuse("a kappa")
    m = np.asarray(confusion(a, b, labels), dtype=float)
    return _kappa_from_matrix(m, _weights(len(labels), weights))


def kappa_interval(a: Sequence[int], b: Sequence[int], *, weights: str | None = None,
                   labels: Sequence[int] = GRADES, resamples: int = 10000, alpha: float = ALPHA,
                   seed: int = DEFAULT_SEED) -> dict:
    """``{"kappa", "ci95": [low, high] | None, "undefined_resamples"}`` by a bootstrap over items."""
    refuse("a kappa interval")
    index = {g: i for i, g in enumerate(labels)}
    x = np.array([index[g] for g in a])
    y = np.array([index[g] for g in b])
    if len(x) != len(y) or len(x) == 0:
        raise GabaritoError("kappa needs the same, non-empty list of items from both assessors")
    n, k = len(x), len(labels)
    w = _weights(k, weights)
    rng = np.random.default_rng(seed)
    values, undefined = [], 0
    for _ in range(resamples):
        pick = rng.integers(0, n, n)
        m = np.zeros((k, k))
        np.add.at(m, (x[pick], y[pick]), 1)
        v = _kappa_from_matrix(m, w)
        if v is None:
            undefined += 1
        else:
            values.append(v)
    ci = None
    if values:
        ci = [float(np.quantile(values, alpha / 2)), float(np.quantile(values, 1 - alpha / 2))]
    return {"kappa": cohen_kappa(a, b, weights=weights, labels=labels), "ci95": ci,
            "undefined_resamples": undefined, "n": n}


def either_nonzero(a: Sequence[int], b: Sequence[int]) -> tuple[list[int], list[int]]:
    """The items where at least one assessor gave a non-zero grade (the shared zeros left out).

    With many clearly irrelevant items, agreement on 0 dominates kappa; on what is left, kappa
    measures whether the assessors agree on *which* items are relevant and how much."""
    if len(a) != len(b):
        raise GabaritoError(f"{len(a)} grades against {len(b)}: assessors must grade the same items")
    kept = [(x, y) for x, y in zip(a, b) if x != 0 or y != 0]
    return [x for x, _ in kept], [y for _, y in kept]


def agreement_summary(a: Sequence[int], b: Sequence[int], *, resamples: int = 10000,
                      seed: int = DEFAULT_SEED, labels: Sequence[int] = GRADES) -> dict:
    """Confusion matrix, observed agreement and kappa (unweighted and linear, with intervals) of
    two assessors, overall and on the items where either gave a non-zero grade (``either_nonzero``;
    its kappas are ``None`` with no interval when fewer than two such items exist)."""
    def block(x: Sequence[int], y: Sequence[int]) -> dict:
        out = {"n_pairs": len(x), "observed_agreement": sum(i == j for i, j in zip(x, y)) / len(x) if x else None}
        for name, weights in (("unweighted", None), ("linear", "linear")):
            out[name] = (kappa_interval(x, y, weights=weights, labels=labels, resamples=resamples, seed=seed)
                         if x else {"kappa": None, "ci95": None, "undefined_resamples": 0, "n": 0})
        return out

    out = {"grades": list(labels), "confusion": confusion(a, b, labels), **block(a, b)}
    out["either_nonzero"] = block(*either_nonzero(a, b))
    return out
