"""The retriever protocol: ``search(queries, depth) -> Run``, one shape for every engine.

A :class:`Queries` holds the questions a study or ``gabarito evaluate`` searches (ids and texts)
and encodes them once per encoder, so two dense retrievers over the same model, a fusion of
them and a latency check all use the same query vectors.

A retriever is anything with ``name``, ``search(queries, depth) -> Run`` and ``provenance()``.
Two small adapters make one out of any engine's per-question search function:

* :class:`TextRetriever` wraps ``fn(text, depth) -> [(doc_id, score), ...]`` (ArcadeDB full
  text, the memory BM25, the BM25 reference, bm25s, the SPLADE sparse index, ...);
* :class:`VectorRetriever` wraps ``fn(vector, depth) -> [(doc_id, score), ...]`` and the encoder
  whose query vectors it needs (ArcadeDB ``LSM_VECTOR``, exact cosine, ...).

Their :class:`~gabarito.core.runs.Run` orders each list by (-score, doc id). While ``fn``
runs, :func:`current_question` is the id of the question it searches (an engine names it in a
notice), and an error it raises is raised again as one line naming that question.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run
from gabarito.progress import bar as progress_bar

Pairs = list[tuple[str, float]]
_QUESTION: ContextVar[str | None] = ContextVar("gabarito_question", default=None)


def current_question() -> str | None:
    """The id of the question a retriever is searching now (``None`` outside a search)."""
    return _QUESTION.get()


@contextlib.contextmanager
def asking(question_id: str) -> Iterator[None]:
    """Search for ``question_id``: :func:`current_question` names it, and a
    :class:`GabaritoError` raised inside says which question it stopped at."""
    token = _QUESTION.set(question_id)
    try:
        yield
    except GabaritoError as exc:
        if str(exc).startswith("question "):
            raise
        raise GabaritoError(f"question {question_id!r}: {exc}") from exc
    finally:
        _QUESTION.reset(token)


def _each(ids: Sequence[str], search: Callable[[int], Sequence[tuple[str, float]]], name: str = "") -> dict:
    """Each question's list, with a progress bar (:func:`gabarito.progress.bar`)."""
    out = {}
    for i, q in enumerate(progress_bar(ids, desc=f"searching {name}".rstrip(), unit="q")):
        with asking(q):
            out[q] = search(i)
    return out


def _encoder_key(encoder) -> str:
    """What identifies an encoder's query vectors: model id, weights and query prefix."""
    weights = getattr(encoder, "weights_sha256", "")
    return f"{encoder.model_id}|{weights}|{getattr(encoder, 'query_prefix', '')}"


@dataclass
class Queries:
    """Question ids and texts, with their query vectors computed once per encoder.

    ``vectors`` may be given up front (``{encoder key or model id: array}``) when a study has
    them already, e.g. from a query-vector cache."""

    ids: list[str]
    texts: list[str]
    vectors_by_model: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        self.ids, self.texts = [str(i) for i in self.ids], list(self.texts)
        if len(self.ids) != len(self.texts):
            raise GabaritoError(f"{len(self.ids)} query ids for {len(self.texts)} texts")
        if len(set(self.ids)) != len(self.ids):
            dup = next(i for i in self.ids if self.ids.count(i) > 1)
            raise GabaritoError(f"duplicate query id {dup!r}")

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, str]]) -> "Queries":
        return cls([q for q, _ in pairs], [t for _, t in pairs])

    def __len__(self) -> int:
        return len(self.ids)

    def vectors(self, encoder) -> np.ndarray:
        """Query vectors of ``encoder`` (``encode_query`` of each text), computed once."""
        for key in (_encoder_key(encoder), encoder.model_id):
            if key in self.vectors_by_model:
                return self.vectors_by_model[key]
        vecs = np.asarray([encoder.encode_query(t) for t in progress_bar(self.texts, desc="encoding questions",
                                                                         unit="q")], dtype=np.float32)
        self.vectors_by_model[_encoder_key(encoder)] = vecs
        return vecs

    def subset(self, ids: Sequence[str]) -> "Queries":
        """The queries with these ids (in this order), sharing the computed vectors' rows."""
        pos = {q: i for i, q in enumerate(self.ids)}
        rows = [pos[q] for q in ids]
        return Queries([self.ids[i] for i in rows], [self.texts[i] for i in rows],
                       {k: v[rows] for k, v in self.vectors_by_model.items()})


@runtime_checkable
class Retriever(Protocol):
    name: str

    def search(self, queries: Queries, depth: int) -> Run: ...

    def provenance(self) -> dict: ...


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise GabaritoError(f"depth must be a whole number >= 1, not {depth!r}")


@dataclass
class TextRetriever:
    """A retriever from ``fn(text, depth) -> [(doc_id, score), ...]``."""

    name: str
    fn: Callable[[str, int], Sequence[tuple[str, float]]]
    info: dict = field(default_factory=dict)

    def search(self, queries: Queries, depth: int) -> Run:
        _check_depth(depth)
        return Run(_each(queries.ids, lambda i: self.fn(queries.texts[i], depth), self.name), name=self.name)

    def provenance(self) -> dict:
        return {"name": self.name, "kind": "text", **self.info}


@dataclass
class VectorRetriever:
    """A retriever from ``fn(query_vector, depth) -> [(doc_id, score), ...]`` and its encoder."""

    name: str
    fn: Callable[[np.ndarray, int], Sequence[tuple[str, float]]]
    encoder: object
    info: dict = field(default_factory=dict)

    def search(self, queries: Queries, depth: int) -> Run:
        _check_depth(depth)
        vectors = queries.vectors(self.encoder)
        return Run(_each(queries.ids, lambda i: self.fn(vectors[i], depth), self.name), name=self.name)

    def provenance(self) -> dict:
        return {"name": self.name, "kind": "vector", "model": self.encoder.model_id, **self.info}
