"""What every phase of the reranking study shares: the questions, chunks, gold, runs and readers.

:class:`Bench` is filled phase by phase by ``run_rerank.py``; the functions here are the study's
small vocabulary on top of the library: chunk-level gold, a second reading of one first stage
with one reader (:func:`gabarito.retrieval.pipeline.second_reading`), and the measures of ranked
lists (:func:`gabarito.measure.metrics.evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.inputs.segment import chunk_containing
from gabarito.measure import metrics
from gabarito.core.runs import Qrels
from gabarito.retrieval.pipeline import second_reading
from gabarito.retrieval.protocol import Queries

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "intfloat/multilingual-e5-small"
MPNET = "sentence-transformers/all-mpnet-base-v2"
MAIN_SPEC = "recursive:150:0"
SIZE_SPECS = ("recursive:60:0", "recursive:150:0", "recursive:400:0")
MMR_SPEC = "recursive:60:30"
DEPTH = 100
HEADLINE_N = 20
STAGES = ("bm25", "dense MiniLM", "dense e5", "rrf", "splade")

Pairs = list[tuple[str, float]]


@dataclass
class Bench:
    """The study's inputs and everything the phases compute once and share."""

    docs: list
    questions: list  # the evaluation's questions (``id``, ``query``, ``relevant_ids``, ``answer``)
    chunks: list  # MAIN_SPEC chunks with the "Document > Section: " prefix
    bare_chunks: list  # the same spans without the prefix
    gold: dict[str, list[str]]  # answerable question -> chunk ids holding its answer phrase
    queries: Queries
    cache: object  # the EmbeddingCache of document vectors
    runs: dict = field(default_factory=dict)  # first stage -> Run
    encoders: dict = field(default_factory=dict)  # dense first stage -> encoder
    better: str = ""  # the better dense first stage
    readers: dict = field(default_factory=dict)  # reader name -> live reader
    tables: dict = field(default_factory=dict)  # reader name -> ScoreTable

    @property
    def docs_by_id(self) -> dict:
        return {d.id: d for d in self.docs}

    @property
    def answerable(self) -> list:
        return [q for q in self.questions if q.id in self.gold]

    @property
    def unanswerable(self) -> list:
        return [q for q in self.questions if not q.relevant_ids]

    @property
    def text_of(self) -> dict[str, str]:
        return {c.id: c.text for c in self.chunks}

    @property
    def bare_of(self) -> dict[str, str]:
        return {c.id: c.text for c in self.bare_chunks}

    @property
    def qrels(self) -> Qrels:
        return Qrels.from_lists(self.gold)

    @property
    def better_encoder(self):
        return self.encoders[self.better]


def pick_questions(questions: Sequence, quick: bool) -> list:
    """All questions; with ``quick``, 12 answerable (every 6th) and the first 3 unanswerable, in file order."""
    if not quick:
        return list(questions)
    answerable = [q for q in questions if q.relevant_ids]
    keep = {q.id for q in answerable[::6][:12]} | {q.id for q in [q for q in questions if not q.relevant_ids][:3]}
    return [q for q in questions if q.id in keep]


def chunk_gold(questions: Iterable, chunks: Sequence, docs_by_id: Mapping) -> dict[str, list[str]]:
    """The chunks of each answerable question's first relevant document holding its answer phrase."""
    out = {}
    for q in questions:
        if q.relevant_ids:
            first = q.relevant_ids[0]
            found = chunk_containing(chunks, first, q.answer, docs_by_id[first].text)
            if not found:
                raise GabaritoError(f"the answer phrase {q.answer[:50]!r} is not in {first}", record=q.id)
            out[q.id] = found
    return out


def ids_of(lists: Mapping[str, Sequence]) -> dict[str, list[str]]:
    """``{qid: [doc id, ...]}`` in list order (a Run's lists, or a second reading's)."""
    return {q: [d if isinstance(d, str) else d[0] for d in v] for q, v in lists.items()}


def read_again(bench: Bench, stage: str, reader: str, n: int, questions: Sequence | None = None, *,
               bare: bool = False) -> dict[str, Pairs]:
    """The second reading of ``stage``'s lists by ``reader`` (its score table) over the first ``n``,
    for ``questions`` (default: the answerable ones); ``bare`` reads the chunks without prefix.

    The lists keep :func:`~gabarito.retrieval.pipeline.second_reading`'s order, where equal reader
    scores keep the first stage's order (a :class:`~gabarito.core.runs.Run` would re-break
    them by doc id)."""
    texts = bench.bare_of if bare else bench.text_of
    run, table = bench.runs[stage], bench.tables[reader]
    return {q.id: second_reading(q.query, run[q.id], texts, table, n)
            for q in (bench.answerable if questions is None else questions)}


def measures(lists: Mapping[str, Sequence], qrels: Qrels, hits: Sequence[int] = (1, 3, 5)) -> dict:
    """``n``, ``hit@k`` for each k and ``mrr`` (uncut RR) of ranked lists over the judged queries."""
    names = list(dict.fromkeys(f"hit@{k}" for k in hits)) + ["RR"]
    scores = metrics.evaluate(ids_of(lists), qrels, names)
    out = {"n": len(scores["RR"])}
    out.update({f"hit@{k}": metrics.mean(scores[f"hit@{k}"]) for k in hits})
    out["mrr"] = metrics.mean(scores["RR"])
    return out


def ranks(lists: Mapping[str, Sequence], gold: Mapping[str, Iterable[str]]) -> dict[str, int | None]:
    """The rank of each gold question's first gold id in its list (None when absent), in gold order."""
    ids = ids_of({q: lists[q] for q in gold})
    return {q: metrics.first_relevant_rank(ids[q], set(rel)) for q, rel in gold.items()}
