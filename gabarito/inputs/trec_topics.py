"""An evaluation given as TREC topics + TREC qrels (``gabarito evaluate --evaluation T --qrels Q``).

Topics are ``<top><num>N</num><title>text</title></top>`` blocks (the layout the classic
collections ship, parsed by :func:`gabarito.inputs.collections.trec.parse_trec_topics`); qrels are
``qid iteration doc grade`` lines (:meth:`gabarito.core.runs.Qrels.from_trec`). A topic with no
relevant document (grade >= 1) is skipped and counted, as in the BEIR loader; a qrels line naming
a query that is not a topic, or a relevant document that is not in the documents, is a one-line
error naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from gabarito.errors import GabaritoError
from gabarito.inputs.collections.trec import parse_trec_topics
from gabarito.inputs.documents import EvalQuery, Evaluation
from gabarito.core.runs import Qrels


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GabaritoError(f"{what} not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"{what} is not UTF-8 text (byte {exc.start})", path=path) from None


def load_trec_evaluation(topics: str | Path, qrels: str | Path, documents: Iterable | None = None) -> Evaluation:
    """The judged topics as an :class:`~gabarito.inputs.documents.Evaluation` (grades in
    ``extra["relevance"]``)."""
    topics, qrels_path = Path(topics), Path(qrels)
    parsed = parse_trec_topics(_read(topics, "topics file"), str(topics))
    if not parsed:
        raise GabaritoError("no <top> topic found", path=topics)
    _read(qrels_path, "qrels file")
    judged = Qrels.from_trec(qrels_path)
    ids = {num for _, num, _ in parsed}
    unknown = sorted(set(judged) - ids)
    if unknown:
        raise GabaritoError(f"query id {unknown[0]!r} is not a topic of {topics.name}", path=qrels_path)
    doc_ids = {d.id if hasattr(d, "id") else str(d) for d in documents} if documents is not None else None
    queries, skipped = [], []
    for line, num, title in parsed:
        grades = {d: g for d, g in judged.get(num, {}).items() if g >= 1}
        if not grades:
            skipped.append(num)
            continue
        if doc_ids is not None:
            missing = sorted(d for d in grades if d not in doc_ids)
            if missing:
                raise GabaritoError(f"relevant id {missing[0]!r} of query {num!r} is not in the documents",
                                    path=qrels_path)
        queries.append(EvalQuery(num, title, tuple(sorted(grades)), extra={"relevance": grades}))
    if not queries:
        raise GabaritoError("no topic has a relevant document in the qrels", path=qrels_path)
    return Evaluation(queries, path=topics, skipped=skipped)
