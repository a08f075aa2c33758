"""Verdict words chosen from the data, each threshold stated once.

A sentence on a page never hard-codes "pouco", "significativo" or "melhora": it asks here, with
the numbers of the table it sits above, and gets the word and the numbers together. The
thresholds below are the only places where "large", "most" or "significant" are defined for the
site; a study's own thresholds live in its ``findings`` module, stated once there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from gabarito.measure.report import ALPHA, Comparison
from gabarito.publish.formatting import pvalue

__all__ = ["ALPHA", "MOST", "Share", "share", "change_word", "p_text", "span", "corpus_size"]

#: A share at or above this is "a maioria" (most); below it, "a minoria" or "metade" at exactly it.
MOST = 0.5


@dataclass(frozen=True)
class Share:
    """``part`` of ``whole``, with the word a sentence uses for it."""

    part: int
    whole: int

    @property
    def value(self) -> float:
        return self.part / self.whole if self.whole else 0.0

    @property
    def large(self) -> bool:
        """More than half (:data:`MOST`): a large overlap, most of the questions."""
        return self.whole > 0 and self.value > MOST

    @property
    def minority(self) -> bool:
        """Less than half (:data:`MOST`): few of the whole."""
        return self.whole > 0 and self.value < MOST

    @property
    def word(self) -> str:
        """``"a maioria"``, ``"metade"``, ``"a minoria"`` or ``"nenhuma"`` of the whole."""
        if self.part == 0:
            return "nenhuma"
        if self.whole and self.value == MOST:
            return "metade"
        return "a maioria" if self.large else "a minoria"


def share(part: int, whole: int) -> Share:
    if part < 0 or whole < 0 or part > whole:
        raise ValueError(f"not a share: {part} of {whole}")
    return Share(part, whole)


#: The verb of a comparison, by its verdict (a against b, Holm-corrected, at :data:`ALPHA`).
_CHANGE = {"better": "melhora", "worse": "piora", "same": "não muda de forma detectável"}


def change_word(comparison: Comparison) -> str:
    """``"melhora"``, ``"piora"`` or ``"não muda de forma detectável"`` for ``a`` against ``b``."""
    return _CHANGE[comparison.verdict]


def p_text(p: float | None) -> str:
    """``"p < 0,001"`` or ``"p = 0,034"``: a p-value in a sentence, never ``"p = < 0,001"``."""
    shown = pvalue(p)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def span(values: Iterable[float]) -> tuple[float, float]:
    """The lowest and highest of the values a sentence summarises (all of them, as the table
    below it shows them)."""
    values = list(values)
    if not values:
        raise ValueError("no value to summarise")
    return min(values), max(values)


#: A corpus below the first of these many documents is "pequeno" (a help center of a dozen
#: articles), below the second "médio" (a thesaurus of a thousand concepts, five classic
#: collections together), from there on "grande".
CORPUS_SIZES = ((1_000, "pequeno"), (100_000, "médio"))


def corpus_size(n_docs: int) -> str:
    """``"pequeno"``, ``"médio"`` or ``"grande"`` for a corpus of ``n_docs`` documents (:data:`CORPUS_SIZES`)."""
    if n_docs < 0:
        raise ValueError(f"not a number of documents: {n_docs}")
    return next((word for top, word in CORPUS_SIZES if n_docs < top), "grande")
