"""Comparison families: which paired tests one Holm correction runs over, as a value.

A p-value corrected for multiple comparisons means nothing without its family. A family here is a
value that the scorer takes as a parameter (PyTerrier's ``Experiment(baseline=, correction=)``
made a type), knows its members and its correction, and is written into the results beside the
Holm p it produced, so a results file says what each ``p_holm`` was corrected over:

* :class:`AllPairs` -- every pair of methods, one family per measure (the scorer's default;
  :func:`gabarito.measure.stats.compare_tables`);
* :class:`Against` -- each method against one baseline, one family per measure (the other pairs
  are not tested); ``among`` limits the methods tested;
* :class:`Across` -- one comparison repeated across sets, folds or collections (or any rows
  computed apart): the family is exactly its named ``members``. :func:`across` corrects rows
  already computed; :func:`paired_across` computes one paired test per member and corrects them.

:func:`paired_tests` is the one place a scorer's tests are computed for a family;
:func:`family_from_dict` reads a written family back (none written: :class:`AllPairs`, what every
report before families was).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.measure.stats import ALPHA

#: The one correction a family applies (Holm-Bonferroni, :func:`gabarito.measure.stats.holm`).
HOLM = "holm"

__all__ = ["HOLM", "AllPairs", "Against", "Across", "Family", "across", "family_from_dict", "paired_across",
           "paired_tests"]


@dataclass(frozen=True)
class AllPairs:
    """Every pair of methods, Holm over the pairs of one measure."""

    correction: ClassVar[str] = HOLM

    def members(self, methods: Sequence[str]) -> list[tuple[str, str]]:
        """The pairs ``(a, b)`` tested, in the order the rows are stored."""
        return list(itertools.combinations(methods, 2))

    def to_dict(self) -> dict:
        return {"kind": "all_pairs", "per": "measure", "correction": self.correction}


@dataclass(frozen=True)
class Against:
    """Each method (of ``among``, default all) against ``baseline``, Holm over those comparisons
    of one measure; rows are ``a`` = the method, ``b`` = the baseline."""

    baseline: str
    among: tuple[str, ...] | None = None
    correction: ClassVar[str] = HOLM

    def members(self, methods: Sequence[str]) -> list[tuple[str, str]]:
        if self.baseline not in methods:
            raise GabaritoError(f"baseline {self.baseline!r} has no per-query values")
        missing = [m for m in self.among or () if m not in methods]
        if missing:
            raise GabaritoError(f"method {missing[0]!r} to test against {self.baseline!r} has no per-query values")
        return [(m, self.baseline) for m in methods
                if m != self.baseline and (self.among is None or m in self.among)]

    def to_dict(self) -> dict:
        out = {"kind": "against", "baseline": self.baseline, "per": "measure", "correction": self.correction}
        if self.among is not None:
            out["among"] = list(self.among)
        return out


@dataclass(frozen=True)
class Across:
    """One comparison across sets, folds or collections: Holm over exactly ``members``, reading
    each row's raw p at ``p`` (a key, or a path of keys into the row)."""

    name: str
    members: tuple[str, ...]
    p: str | tuple[str, ...] = "p_randomization"
    correction: ClassVar[str] = HOLM

    def __post_init__(self):
        if not self.members or len(set(self.members)) != len(self.members):
            raise GabaritoError(f"family {self.name!r}: members must be distinct and not empty")

    def raw_p(self, row: Mapping) -> float:
        node = row
        for key in (self.p,) if isinstance(self.p, str) else self.p:
            if not isinstance(node, Mapping) or key not in node:
                raise GabaritoError(f"family {self.name!r}: a row holds no {self.p!r}")
            node = node[key]
        return float(node)

    def adjust(self, raw: Mapping[str, float]) -> dict[str, float]:
        """The corrected p of each member from its raw p (exactly the members, any order)."""
        if sorted(raw) != sorted(self.members):
            raise GabaritoError(f"family {self.name!r}: rows {sorted(raw)} are not its members {sorted(self.members)}")
        return stats.holm({k: raw[k] for k in self.members})

    def to_dict(self) -> dict:
        return {"kind": "across", "name": self.name, "members": list(self.members),
                "p": self.p if isinstance(self.p, str) else list(self.p), "correction": self.correction}


Family = AllPairs | Against | Across


def family_from_dict(block: Mapping | None) -> Family:
    """A family from its written form; ``None`` (a report written before families) is
    :class:`AllPairs`."""
    if block is None:
        return AllPairs()
    if not isinstance(block, Mapping) or block.get("correction", HOLM) != HOLM:
        raise GabaritoError(f"not a comparison family corrected by Holm: {block!r}")
    kind = block.get("kind")
    if kind == "all_pairs":
        return AllPairs()
    if kind == "against" and isinstance(block.get("baseline"), str):
        among = block.get("among")
        return Against(block["baseline"], None if among is None else tuple(among))
    if kind == "across" and isinstance(block.get("name"), str) and isinstance(block.get("members"), list):
        p = block.get("p", "p_randomization")
        return Across(block["name"], tuple(block["members"]), p if isinstance(p, str) else tuple(p))
    raise GabaritoError(f"not a comparison family: {block!r}")


def across(family: Across, rows: Mapping[str, Mapping]) -> dict[str, float]:
    """``{member: corrected p}`` of rows already computed (``{member: row}``), the family being
    exactly ``rows``' keys."""
    return family.adjust({k: family.raw_p(r) for k, r in rows.items()})


def paired_across(family: Across, pairs: Mapping[str, Mapping[str, Mapping[str, float] | Sequence[float]]], *,
                  resamples: int, seed: int, alpha: float = ALPHA) -> dict[str, dict]:
    """For each member, the paired test of its two series (``{member: {name_a: values, name_b:
    values}}``, a row of :func:`gabarito.measure.stats.compare_methods`, each test drawn alone with
    ``seed``), its ``p_holm`` corrected over the members."""
    rows = {k: stats.compare_methods(two, n_resamples=resamples, alpha=alpha, seed=seed)[0] for k, two in pairs.items()}
    adjusted = across(family, rows)
    for k, row in rows.items():
        row["p_holm"] = adjusted[k]
    return rows


def _against(per_query: Mapping[str, Mapping | Sequence[float]], family: Against, *, resamples: int, seed: int,
             alpha: float) -> list[dict]:
    pairs = family.members(list(per_query))
    if not pairs:
        return []
    fam = Across(f"against {family.baseline}", tuple(a for a, _ in pairs))
    rows = paired_across(fam, {a: {a: per_query[a], b: per_query[b]} for a, b in pairs},
                         resamples=resamples, seed=seed, alpha=alpha)
    return [{**rows[a], "holm_family": len(pairs)} for a, _ in pairs]


def paired_tests(tables: Mapping[str, Mapping[str, Mapping | Sequence[float]]], family: Family = AllPairs(), *,
                 resamples: int, seed: int, alpha: float = ALPHA) -> dict[str, list[dict]]:
    """``{measure: [test rows]}`` of ``tables`` (``{measure: {method: per-query values}}``) for a
    family of :class:`AllPairs` or :class:`Against` (Holm within each measure). An :class:`Across`
    family spans several scorings: apply it with :func:`across` or :func:`paired_across`."""
    if isinstance(family, AllPairs):
        return stats.compare_tables(tables, n_resamples=resamples, alpha=alpha, seed=seed)
    if isinstance(family, Against):
        return {m: _against(t, family, resamples=resamples, seed=seed, alpha=alpha) for m, t in tables.items()}
    raise GabaritoError(f"the scorer tests pairs within one scoring; family {family!r} is applied to rows "
                        "already computed (gabarito.measure.families.across)")
