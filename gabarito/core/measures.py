"""Measure declarations: ``nDCG@10`` as an object that knows its kind and its cutoff.

A :class:`Measure` is a ``str`` (its canonical name), so it is a dict key, a JSON string and a
results-file key exactly as the name was before; it also carries ``kind`` (``R``, ``RR``, ``nDCG``,
``P``, ``AP`` or ``hit``) and ``cutoff`` (``None``: the whole ranking). Relevance is a grade >= 1
for every measure. The computations live in :mod:`gabarito.measure.metrics`; this module only says
what a name means, so every parser of a measure name (``--measures``, ``compare --measure``,
``score_runs``) refuses the same names with the same message.

``ir_measures`` spells ``hit@k`` as ``Success@k``; :attr:`Measure.ir_measures_name` gives the
name it parses, for the cross-checks in ``tests/``.
"""

from __future__ import annotations

import re
from typing import Iterable

from gabarito.errors import GabaritoError

KINDS = ("R", "RR", "nDCG", "P", "AP", "hit")
#: The kinds that mean nothing without a cutoff.
NEEDS_CUTOFF = frozenset({"R", "P", "hit"})
#: The measure names :class:`Measure` understands, for messages and ``--measures`` help.
MEASURE_FORMS = "R@k, RR@k, nDCG@k, P@k, AP@k or hit@k (RR, nDCG and AP also without @k)"
#: Other spellings accepted by ``Measure.parse(..., loose=True)`` (lower case): MRR@k is RR@k,
#: recall@k is R@k.
ALIASES = {"mrr": "RR", "recall": "R"}

_NAME = re.compile(r"^(R|RR|nDCG|P|AP|hit)(?:@([1-9][0-9]*))?$")
_LOOSE = re.compile(r"^([A-Za-z]+)(?:@([1-9][0-9]*))?$")
_IR_MEASURES = {"hit": "Success"}


class Measure(str):
    """A measure name, validated: ``Measure("nDCG@10")``; ``.kind == "nDCG"``, ``.cutoff == 10``.

    ``str(m)`` is the canonical name (``Measure.of("RR", 10) == "RR@10"``); an unknown name, or a
    kind that needs a cutoff given without one, is a :class:`~gabarito.errors.GabaritoError`
    naming it."""

    kind: str
    cutoff: int | None

    def __new__(cls, name: object) -> "Measure":
        if isinstance(name, Measure):
            return name
        text = name.strip() if isinstance(name, str) else None
        match = _NAME.match(text) if text is not None else None
        if not match:
            raise GabaritoError(f"unknown measure {name!r} (expected {MEASURE_FORMS})")
        return cls._make(match.group(1), int(match.group(2)) if match.group(2) else None, name)

    @classmethod
    def _make(cls, kind: str, cutoff: int | None, given: object) -> "Measure":
        if cutoff is None and kind in NEEDS_CUTOFF:
            raise GabaritoError(f"measure {given!r} needs a cutoff, e.g. {kind}@10")
        self = str.__new__(cls, kind if cutoff is None else f"{kind}@{cutoff}")
        self.kind, self.cutoff = kind, cutoff
        return self

    @classmethod
    def of(cls, kind: str, cutoff: int | None = None) -> "Measure":
        """The measure of a kind and cutoff: ``Measure.of("hit", 1) == "hit@1"``."""
        if kind not in KINDS or (cutoff is not None and (isinstance(cutoff, bool) or not isinstance(cutoff, int)
                                                         or cutoff < 1)):
            raise GabaritoError(f"unknown measure {kind!r} with cutoff {cutoff!r} (expected {MEASURE_FORMS})")
        return cls._make(kind, cutoff, f"{kind}@{cutoff}" if cutoff else kind)

    @classmethod
    def parse(cls, name: object, *, loose: bool = False) -> "Measure":
        """``Measure(name)``; with ``loose`` the kind's case does not matter and :data:`ALIASES`
        apply (``mrr@10`` -> ``RR@10``, ``HIT@1`` -> ``hit@1``)."""
        if not loose or isinstance(name, Measure):
            return cls(name)
        match = _LOOSE.match(name.strip()) if isinstance(name, str) else None
        kinds = {k.lower(): k for k in KINDS} | ALIASES
        kind = kinds.get(match.group(1).lower()) if match else None
        if kind is None:
            raise GabaritoError(f"unknown measure {name!r} (expected {MEASURE_FORMS})")
        return cls._make(kind, int(match.group(2)) if match.group(2) else None, name)

    @property
    def ir_measures_name(self) -> str:
        """The name ``ir_measures.parse_measure`` reads for the same measure (``hit@5`` -> ``Success@5``)."""
        kind = _IR_MEASURES.get(self.kind, self.kind)
        return kind if self.cutoff is None else f"{kind}@{self.cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __reduce__(self):
        return (Measure, (str(self),))


def parse_measures(names: str | Iterable[object]) -> list[Measure]:
    """Measures from a comma-separated string or a list (of names or :class:`Measure`); an unknown
    name is an error naming it, and so is an empty list."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [
        n if isinstance(n, Measure) else str(n).strip() for n in names]
    items = [n for n in items if n]
    if not items:
        raise GabaritoError("no measure named")
    return [Measure(n) for n in items]
