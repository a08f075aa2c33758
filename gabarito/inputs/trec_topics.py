"""An evaluation given as TREC topics + TREC qrels (``gabarito evaluate --evaluation T --qrels Q``).

Topics are ``<top><num>N</num><title>text</title></top>`` blocks (the layout the classic
collections ship, parsed by :func:`gabarito.inputs.collections.trec.parse_trec_topics`); qrels are
``qid iteration doc grade`` lines (:meth:`gabarito.core.runs.Qrels.from_trec`). A topic with no
relevant document (grade >= 1) is skipped and counted, as in the BEIR loader; a qrels line naming
a query that is not a topic, or a relevant document that is not in the documents, is a one-line
error naming the file and the line (all the unknown relevant documents counted, the first few
named). Both files may start with a byte-order mark; every id is read in NFC (one warning when
some id was changed) and one holding a control character is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.inputs.collections.trec import parse_trec_topics
from gabarito.inputs.evaluation_files import Unknown
from gabarito.inputs.items import EvalQuery, Evaluation
from gabarito.inputs.textfiles import Ids, Warn, _read_text, warn_stderr


def load_trec_evaluation(topics: str | Path, qrels: str | Path, documents: Iterable | None = None,
                         *, warn: Warn = warn_stderr) -> Evaluation:
    """The judged topics as an :class:`~gabarito.inputs.documents.Evaluation` (grades in
    ``extra["relevance"]``)."""
    topics, qrels_path = Path(topics), Path(qrels)
    topic_ids, qrel_ids = Ids(topics), Ids(qrels_path)
    parsed = [(line, topic_ids(num, f"line {line}", "topic number"), title)
              for line, num, title in parse_trec_topics(_read_text(topics, "topics file"), str(topics))]
    if not parsed:
        raise GabaritoError("no <top> topic found", path=topics)
    _read_text(qrels_path, "qrels file")  # a regular file of UTF-8 text, or one line
    judged = {qrel_ids(qid, None, "query id"): {qrel_ids(d, f"query {qid}", "document id"): g for d, g in row.items()}
              for qid, row in Qrels.from_trec(qrels_path).items()}
    ids = {num for _, num, _ in parsed}
    strays = sorted(set(judged) - ids)
    if strays:
        raise GabaritoError(f"query id {strays[0]!r} is not a topic of {topics.name}", path=qrels_path)
    doc_ids = {d.id if hasattr(d, "id") else str(d) for d in documents} if documents is not None else None
    queries, skipped, unknown = [], [], Unknown(doc_ids)
    for line, num, title in parsed:
        grades = {d: g for d, g in judged.get(num, {}).items() if g >= 1}
        if not grades:
            skipped.append(num)
            continue
        for did in sorted(grades):
            unknown.check(did, qrels_path, f"query {num}")
        queries.append(EvalQuery(num, title, tuple(sorted(grades)), extra={"relevance": grades}))
    unknown.refuse()
    if not queries:
        raise GabaritoError("no topic has a relevant document in the qrels", path=qrels_path)
    topic_ids.notice(warn)
    qrel_ids.notice(warn)
    return Evaluation(queries, path=topics, skipped=skipped)
