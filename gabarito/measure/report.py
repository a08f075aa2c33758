"""The one typed result of scoring: what :func:`gabarito.measure.score.score_runs` makes and what
every page and study reads back.

A :class:`Report` holds, for each method and measure, the mean, its 95% bootstrap interval and
the per-query values; for each pair of methods on a measure, one paired-test row (difference,
its interval, the randomization p, the exact sign test, the Holm p over the report's comparison
family: every pair of that measure, or each method against one baseline,
:mod:`gabarito.measure.families`). The significance level, seed, number of resamples and the
family are recorded once.

:meth:`Report.compare` answers "is ``a`` better than ``b`` on ``m``, and by how much" for
everyone: it finds the test row of the pair whichever way it was stored and orients it, so a
difference, an interval, wins and losses are always ``a`` minus ``b``.

Written to ``results.json`` by :meth:`Report.to_dict` with :data:`SCHEMA`; read back by
:meth:`Report.from_dict`, which also reads the blocks written before the schema existed (the
same keys: ``metrics``, ``ci95`` or ``ci``, ``tests`` as one list or a list per measure,
``per_query``; a block without ``family`` was scored over all pairs, and an all-pairs block is
written without one, so the files written before families are unchanged). ``Report.from_dict(r.to_dict()) == r``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.measure.families import AllPairs, Family, family_from_dict
from gabarito.measure.stats import ALPHA

#: The schema of a written report; a block without it is a report written before it existed.
SCHEMA = "gabarito.report/1"

__all__ = ["ALPHA", "SCHEMA", "Comparison", "Report", "as_report", "verdict"]

@dataclass(frozen=True)
class Comparison:
    """One paired test, oriented as ``a`` against ``b`` on ``measure`` (``diff`` = a - b)."""

    measure: str
    a: str
    b: str
    mean_a: float | None
    mean_b: float | None
    diff: float
    ci: tuple[float, float] | None
    p: float | None
    p_holm: float
    p_sign: float | None
    wins: int | None
    losses: int | None
    ties: int | None
    dz: float | None
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        """Holm-corrected p below the report's alpha."""
        return self.p_holm < self.alpha

    @property
    def direction(self) -> int:
        """+1 when ``a`` has the higher mean, -1 when lower, 0 when equal."""
        return (self.diff > 0) - (self.diff < 0)

    @property
    def verdict(self) -> str:
        """``"better"`` or ``"worse"`` (a against b, significant after Holm), else ``"same"``:
        no difference the test can tell from chance."""
        return verdict(self.diff, self.p_holm, self.alpha)


def as_report(block: "Report | Mapping") -> "Report":
    """``block`` as a :class:`Report`: itself, or read from a written block (``Report.from_dict``)."""
    return block if isinstance(block, Report) else Report.from_dict(block)


def verdict(diff: float, p_holm: float, alpha: float = ALPHA) -> str:
    """The verdict of a paired difference ``diff`` (a minus b) with its Holm-corrected p:
    ``"better"`` / ``"worse"`` when ``p_holm < alpha`` and ``diff`` is not zero, else ``"same"``."""
    if not p_holm < alpha or diff == 0:
        return "same"
    return "better" if diff > 0 else "worse"


def _oriented(row: Mapping, measure: str, a: str, b: str, alpha: float) -> Comparison:
    flip = row["a"] != a
    sign = -1.0 if flip else 1.0
    ci = None
    if row.get("ci_low") is not None:
        low, high = float(row["ci_low"]), float(row["ci_high"])
        ci = (-high, -low) if flip else (low, high)
    wins, losses = row.get("wins"), row.get("losses")
    dz = row.get("dz")
    means = (row.get("mean_a"), row.get("mean_b"))
    return Comparison(
        measure=measure, a=a, b=b,
        mean_a=means[1] if flip else means[0], mean_b=means[0] if flip else means[1],
        diff=sign * float(row["mean_diff"]), ci=ci, p=row.get("p_randomization"),
        p_holm=float(row["p_holm"]), p_sign=row.get("p_sign"),
        wins=losses if flip else wins, losses=wins if flip else losses, ties=row.get("ties"),
        dz=None if dz is None else sign * float(dz), alpha=alpha)


def _flat_tests(tests) -> tuple[dict, ...]:
    """Test rows as one tuple of dicts each naming its measure (from either stored shape)."""
    if tests is None:
        return ()
    if isinstance(tests, Mapping):
        return tuple({"measure": m, **row} for m, rows in tests.items() for row in rows)
    for row in tests:
        if "measure" not in row:
            raise GabaritoError("a paired-test row does not name its measure")
    return tuple(dict(row) for row in tests)


@dataclass(frozen=True)
class Report:
    """Means, intervals, per-query values and paired tests of several methods on one set of
    queries (see the module's docstring)."""

    metrics: Mapping[str, Mapping[str, float]]
    ci: Mapping[str, Mapping[str, Sequence[float]]] = field(default_factory=dict)
    tests: tuple = ()
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None
    n: int | None = None
    queries: tuple[str, ...] | None = None
    measures: tuple[str, ...] = ()
    seed: int | None = None
    resamples: int | None = None
    alpha: float = ALPHA
    family: Family = AllPairs()

    # --- reading
    @property
    def methods(self) -> list[str]:
        return list(self.metrics)

    def mean(self, method: str, measure: str) -> float:
        try:
            return self.metrics[method][measure]
        except KeyError:
            raise GabaritoError(f"no mean of {method!r} on {measure!r} in this report") from None

    def interval(self, method: str, measure: str) -> tuple[float, float] | None:
        """The 95% bootstrap interval of the mean (None when the report holds none)."""
        low_high = self.ci.get(method, {}).get(measure)
        return None if low_high is None else (float(low_high[0]), float(low_high[1]))

    def values(self, method: str, measure: str) -> dict[str, float]:
        """The per-query values ``{qid: value}``."""
        if self.per_query is None or measure not in self.per_query.get(method, {}):
            raise GabaritoError(f"no per-query values of {method!r} on {measure!r} in this report")
        return dict(self.per_query[method][measure])

    def has_test(self, a: str, b: str, measure: str) -> bool:
        return any(r["measure"] == measure and {r["a"], r["b"]} == {a, b} for r in self.tests)

    def compare(self, a: str, b: str, measure: str) -> Comparison:
        """The paired test of ``a`` against ``b`` on ``measure``, oriented a - b."""
        for row in self.tests:
            if row["measure"] == measure and {row["a"], row["b"]} == {a, b} and a != b:
                return _oriented(row, measure, a, b, self.alpha)
        raise GabaritoError(f"this report has no paired test of {a!r} against {b!r} on {measure!r}")

    def comparisons(self, measure: str, against: str | None = None) -> list[Comparison]:
        """Every test of ``measure`` in stored order; with ``against``, each other method
        oriented against it (the other method first)."""
        out = []
        for row in self.tests:
            if row["measure"] != measure:
                continue
            if against is None:
                out.append(_oriented(row, measure, row["a"], row["b"], self.alpha))
            elif against in (row["a"], row["b"]):
                other = row["b"] if row["a"] == against else row["a"]
                out.append(_oriented(row, measure, other, against, self.alpha))
        return out

    def best(self, measure: str, among: Iterable[str] | None = None) -> str:
        """The method with the highest mean on ``measure``; a tie goes to the method named
        first (in ``among``, else in the report's order)."""
        names = list(self.metrics if among is None else among)
        if not names:
            raise GabaritoError("no method to choose from")
        return max(names, key=lambda m: (self.mean(m, measure), -names.index(m)))

    # --- writing and reading back
    def only(self, methods: Iterable[str] | None = None, *, tests_with: str | None = None) -> "Report":
        """The same report restricted to some methods (their means, intervals, values and the tests
        between them) and/or to the tests that involve ``tests_with``."""
        keep = list(self.metrics if methods is None else methods)
        tests = tuple(r for r in self.tests if r["a"] in keep and r["b"] in keep
                      and (tests_with is None or tests_with in (r["a"], r["b"])))
        per_query = None if self.per_query is None else {m: self.per_query[m] for m in keep}
        return replace(self, metrics={m: self.metrics[m] for m in keep},
                       ci={m: self.ci[m] for m in keep if m in self.ci}, tests=tests, per_query=per_query)

    def to_dict(self, *, per_query: bool = True) -> dict:
        """The block written to ``results.json`` (keys as the studies have always stored them);
        ``per_query=False`` leaves the per-query values out (a study that stores its own)."""
        out = {"schema": SCHEMA, "n": self.n, "queries": None if self.queries is None else list(self.queries),
               "measures": list(self.measures), "seed": self.seed, "resamples": self.resamples,
               "alpha": self.alpha, **_family_field(self.family),
               "metrics": {m: dict(v) for m, v in self.metrics.items()},
               "ci95": {m: {k: list(ci) for k, ci in v.items()} for m, v in self.ci.items()},
               "tests": [dict(row) for row in self.tests]}
        if per_query and self.per_query is not None:
            out["per_query"] = {m: {k: dict(v) for k, v in ms.items()} for m, ms in self.per_query.items()}
        return out

    @classmethod
    def from_dict(cls, block: Mapping) -> "Report":
        """A report from a written block (this schema, or a block written before it)."""
        schema = block.get("schema")
        if schema is not None and schema != SCHEMA:
            raise GabaritoError(f"a report of schema {schema!r}; this gabarito reads {SCHEMA!r}")
        if "metrics" not in block:
            raise GabaritoError("not a report: no 'metrics'")
        metrics = block["metrics"]
        measures = block.get("measures") or list(dict.fromkeys(k for v in metrics.values() for k in v))
        queries = block.get("queries")
        return cls(metrics=metrics, ci=block.get("ci95", block.get("ci")) or {},
                   tests=_flat_tests(block.get("tests")), per_query=block.get("per_query"),
                   n=block.get("n"), queries=None if queries is None else tuple(queries),
                   measures=tuple(measures), seed=block.get("seed"), resamples=block.get("resamples"),
                   alpha=float(block.get("alpha", ALPHA)), family=family_from_dict(block.get("family")))

    def __eq__(self, other) -> bool:
        return isinstance(other, Report) and _same(self.to_dict(), other.to_dict())

    __hash__ = None  # type: ignore[assignment]


def _same(x, y) -> bool:
    """Equality of written blocks where NaN equals NaN (a dz of one query is NaN)."""
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    return x == y


def _family_field(family: Family) -> dict:
    """The ``family`` key of a written block: absent for :class:`AllPairs` (the scorer's default,
    what a block without it has always meant, so every all-pairs block written before families is
    the same file), the family's own form for any other."""
    return {} if isinstance(family, AllPairs) else {"family": family.to_dict()}
