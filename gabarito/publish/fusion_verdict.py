"""The fusion against one of the single methods it fuses: one comparison, one verb.

Used by every chapter that says whether a fusion "supera", "empata com" or "perde para" a single
method (the flagship's gold sets and the judgments' regimes alike): the comparison is always
:meth:`gabarito.measure.report.Report.compare`, oriented and judged there (Holm, at ``ALPHA``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gabarito.measure.report import Comparison, Report

#: The flagship's two single methods, in the order a tie between them is broken (the first wins).
SINGLES = ("bm25", "vector")
#: The verb of the fusion against a single method, by :attr:`Comparison.verdict`.
VERB = {"better": "supera", "same": "empata com", "worse": "perde para"}


@dataclass(frozen=True)
class FusionVerdict:
    """The fusion against one single method (the best or the worst of the set) on one measure."""

    single: str
    comparison: Comparison  # fused - single, Holm-corrected

    @property
    def verdict(self) -> str:
        return self.comparison.verdict

    @property
    def verb(self) -> str:
        """``"supera"``, ``"empata com"`` or ``"perde para"``."""
        return VERB[self.verdict]


def fusion_verdict(report: Report, fused: str, singles: Sequence[str], measure: str,
                   against: str = "best") -> FusionVerdict:
    """``fused`` against the best (or, ``against="worst"``, the worst) of ``singles`` on
    ``measure``; a tie between singles goes to the first of them."""
    names = list(singles)
    if against == "best":
        single = report.best(measure, among=names)
    else:
        single = min(names, key=lambda s: (report.mean(s, measure), names.index(s)))
    return FusionVerdict(single, report.compare(fused, single, measure))
