"""What the loaders return: :class:`Document`, :class:`EvalQuery` and :class:`Evaluation`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

__all__ = ["Document", "EvalQuery", "Evaluation"]


@dataclass(frozen=True)
class Document:
    """One searchable document: ``text`` is what gets segmented and searched."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class EvalQuery:
    """One question and the ids of the documents that answer it (empty: unanswerable)."""

    id: str
    query: str
    relevant_ids: tuple[str, ...]
    type: str = ""
    severity: str = ""
    answer: str = ""
    extra: dict = field(default_factory=dict, hash=False)


class Evaluation(list):
    """The queries of an evaluation (a ``list`` of :class:`EvalQuery`).

    ``path`` is where they were read from; ``skipped`` holds the ids of the BEIR
    queries that were left out because the qrels give them no relevant document
    (always empty for a JSON evaluation file).
    """

    def __init__(self, queries: Iterable[EvalQuery] = (), *, path: str | Path | None = None,
                 skipped: Iterable[str] = ()):
        super().__init__(queries)
        self.path = path
        self.skipped: tuple[str, ...] = tuple(skipped)
