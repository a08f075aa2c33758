"""What a loaded test collection is: :class:`Collection`, its grade scale (:class:`GradeMap`,
:data:`CRANFIELD_GRADES`), and the steps every loader ends with (checking the judgments against
the documents and queries, assembling the :class:`Collection`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gabarito.errors import GabaritoError
from gabarito.inputs.documents import Document, EvalQuery
from gabarito.notes import note


class GradeMap(dict):
    """A collection's own relevance codes mapped to graded relevance (0 = not relevant).

    ``labels`` gives each code's meaning in the collection's documentation;
    :meth:`describe` renders one line per code for a page.
    """

    def __init__(self, mapping: dict[int, int], *, labels: dict[int, str], doc: str):
        super().__init__(mapping)
        self.labels = dict(labels)
        self.__doc__ = doc

    def describe(self) -> list[str]:
        return [f"code {code:>2} -> grade {grade}: {self.labels.get(code, '')}".rstrip(": ")
                for code, grade in self.items()]


CRANFIELD_GRADES = GradeMap(
    {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0},
    labels={
        1: "references which are a complete answer to the question",
        2: "references of a high degree of relevance, the lack of which either would have made the "
           "research impracticable or would have resulted in a considerable amount of extra work",
        3: "references which were useful, either as general background to the work or as suggesting "
           "methods of tackling certain aspects of the work",
        4: "references of minimum interest, for example, those that have been included from an "
           "historical viewpoint",
        5: "references of no interest (absent from the Glasgow cranqrel)",
        -1: "not a relevance grade; one row per query, naming the document the question was drawn "
            "from (query 1 'similarity laws ... aeroelastic models' -> document 486 'similarity laws "
            "for aerothermoelastic testing')",
    },
    doc="""Cranfield relevance codes (``cranqrel``, third column) -> graded relevance.

Cleverdon's codes, quoted in ``cranqrel.readme``, put the best documents at 1
("a complete answer to the question") and the weakest at 4 ("minimum
interest"); 5 ("no interest") is not in the file. Graded measures such as
nDCG need higher = better, so the scale is reversed: 1->4, 2->3, 3->2, 4->1.
The Glasgow ``cranqrel`` also has exactly one row coded -1 per query (225
rows); it names the document the question was drawn from and is mapped to 0
(judged, not relevant), as is 5 in copies that carry it. Any other code is an
error. In the mirrored file: 128 rows coded 1, 387 coded 2, 734 coded 3,
363 coded 4, 225 coded -1 (1,837 rows).
""",
)


@dataclass
class Collection:
    """A test collection: documents, queries, graded judgments and what a reader should know.

    ``notes`` are structured notes (:mod:`gabarito.notes`: text fields used, grade mapping,
    anomalies in the source files and how they were handled). ``unjudged`` holds the ids
    of queries without any relevant document; they stay in ``queries`` so a
    study can count them, and :meth:`judged_queries` leaves them out.
    """

    name: str
    documents: list[Document]
    queries: list[EvalQuery]
    qrels: dict[str, dict[str, int]]
    notes: list[dict] = field(default_factory=list)
    unjudged: tuple[str, ...] = ()
    text_fields: str = ""

    def judged_queries(self) -> list[EvalQuery]:
        return [q for q in self.queries if q.relevant_ids]


def _check_qrels(rows, source: str, query_ids: set[str], doc_ids: set[str],
                 what_query: str = "query") -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for lineno, qid, did, grade in rows:
        if qid not in query_ids:
            raise GabaritoError(f"{what_query} {qid} is not among the {len(query_ids)} queries",
                                path=source, record=f"line {lineno}")
        if did not in doc_ids:
            raise GabaritoError(f"document {did} is not in the collection", path=source,
                                record=f"line {lineno}")
        qrels.setdefault(qid, {})[did] = grade
    return qrels


#: How many ids of unjudged queries a note lists (the rest are in ``Collection.unjudged``).
SHOWN_IDS = 12


def _assemble(name: str, documents: list[Document], raw_queries: list[tuple[str, str, dict]],
              qrels: dict[str, dict[str, int]], notes: list[dict], text_fields: str) -> Collection:
    queries, unjudged = [], []
    for qid, text, extra in raw_queries:
        rel = {d: g for d, g in qrels.get(qid, {}).items() if g >= 1}
        if not rel:
            unjudged.append(qid)
        queries.append(EvalQuery(qid, text, tuple(rel), extra={**extra, "relevance": rel}))
    if unjudged:
        notes.append(note("collection.unjudged_queries", n=len(unjudged), total=len(queries),
                          ids=unjudged[:SHOWN_IDS], more=len(unjudged) > SHOWN_IDS))
    empty = [d.id for d in documents if not d.text.strip()]
    if empty:
        notes.append(note("collection.empty_documents", n=len(empty), ids=empty))
    return Collection(name, documents, queries, qrels, notes, tuple(unjudged), text_fields)
