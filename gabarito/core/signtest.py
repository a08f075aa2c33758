"""The exact two-sided sign test, and the checks of paired per-query values it shares with
:mod:`gabarito.measure.stats` (the statistics) and :mod:`gabarito.retrieval.rerank` (a second
reading's gains and losses), which is why it sits on the bottom floor."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from gabarito.core.page_guard import refuse
from gabarito.errors import GabaritoError


def finite_array(values: Sequence[float], what: str = "values") -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise GabaritoError(f"{what} must be a non-empty list of numbers")
    if not np.all(np.isfinite(array)):
        raise GabaritoError(f"{what} contain a NaN or infinite value")
    return array


def paired_arrays(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    xa, xb = finite_array(a, "a"), finite_array(b, "b")
    if xa.size != xb.size:
        raise GabaritoError(f"paired values differ in length: {xa.size} vs {xb.size}")
    return xa, xb


def binomial_tail(n: int, k: int) -> int:
    """``sum(math.comb(n, i) for i in range(k + 1))``, exactly, by the recurrence
    ``C(n, i + 1) = C(n, i) * (n - i) / (i + 1)``: milliseconds where the sum of ``math.comb``
    took minutes (50,000 queries)."""
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return total


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict[str, float | int]:
    """Wins (a > b), losses, ties, and the exact two-sided binomial p on the non-tied pairs."""
    refuse("a sign test")
    xa, xb = paired_arrays(a, b)
    wins, losses = int(np.sum(xa > xb)), int(np.sum(xa < xb))
    ties = xa.size - wins - losses
    n = wins + losses
    p = min(1.0, 2 * binomial_tail(n, min(wins, losses)) / 2**n)
    return {"wins": wins, "losses": losses, "ties": ties, "p": p}
