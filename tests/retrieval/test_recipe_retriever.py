"""Issue 40 item 5 (Y40-fixture-retriever): a retriever added the way ``docs/architecture.md``
("Adding a retriever") says -- a class with ``name``, ``search(queries, depth) -> Run`` and
``provenance()``, its row in ``leaves.LEAVES`` (name and colour), its tests -- runs alone and fused with
BM25 through the one ``Pipeline``, is scored by ``score_runs`` and compared by ``Report.compare``,
with the numbers a hand count gives.
"""

from __future__ import annotations

import pytest

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure.score import score_runs
from gabarito.publish import labels
from gabarito.retrieval.memory import BM25
from gabarito.retrieval.pipeline import RRF, Pipeline
from gabarito.retrieval.protocol import Queries, Retriever, TextRetriever

DOCUMENTS = {"D1": "apple orchard harvest", "D2": "river boat fishing", "D3": "apple pie recipe",
             "D4": "city library reading room"}
QUESTIONS = Queries(["1", "2", "3"], ["apple harvest", "reading pie", "quantum chromodynamics"])
QRELS = Qrels({"1": {"D1": 1}, "2": {"D4": 1}, "3": {"D2": 1}})


class SharedWords:
    """The recipe's file 1: a retriever scoring a document by the distinct words it shares with the
    question (ties by document id, as every run)."""

    name = "shared_words"

    def __init__(self, documents: dict[str, str]):
        self.words = {d: set(text.lower().split()) for d, text in documents.items()}

    def search(self, queries: Queries, depth: int) -> Run:
        out = {}
        for qid, text in zip(queries.ids, queries.texts):
            asked = set(text.lower().split())
            out[qid] = [(d, float(len(asked & w))) for d, w in self.words.items() if asked & w]
        return Run(out, name=self.name).cut(depth)

    def provenance(self) -> dict:
        return {"name": self.name, "kind": "shared words", "documents": len(self.words)}


@pytest.fixture()
def labelled(monkeypatch):
    """The recipe's file 2: the retriever's row in ``leaves.LEAVES`` (its name and its colour, as
    ``labels.METHODS`` and ``palette.LEAF_COLOURS`` read them when the module loads)."""
    from gabarito.publish import palette
    from gabarito.publish.leaves import GREY, Leaf

    row = Leaf("Palavras em comum", GREY)
    monkeypatch.setitem(labels.METHODS, SharedWords.name, row.label)
    monkeypatch.setitem(palette.LEAF_COLOURS, SharedWords.name, row.colour)


def test_without_its_label_the_method_stops_the_page_in_one_line():
    with pytest.raises(GabaritoError, match="no Portuguese label for method 'shared_words'"):
        labels.method(SharedWords.name)


def test_a_retriever_added_by_the_recipe_runs_through_the_pipeline_and_the_scorer(labelled):
    mine = SharedWords(DOCUMENTS)
    assert isinstance(mine, Retriever)
    bm25 = TextRetriever("bm25", BM25(DOCUMENTS).search)
    alone = Pipeline("shared_words", [mine]).search(QUESTIONS, 10)
    fused_pipeline = Pipeline("rrf_shared_bm25", [mine, bm25], fusion=RRF(rrf_k=60))
    fused = fused_pipeline.search(QUESTIONS, 10)
    # by hand: question 1 -> D1 (2 words) before D3 (1); question 2 -> D3 ('pie') and D4 ('reading')
    # tie at one word, D3 first by id, so the relevant D4 is second; question 3 -> nothing
    assert [d for d, _ in alone["1"]] == ["D1", "D3"] and [d for d, _ in alone["2"]] == ["D3", "D4"]
    assert alone.get("3", []) == []
    report = score_runs({"shared_words": alone, "rrf_shared_bm25": fused}, QRELS, ["RR@10", "P@1"],
                        resamples=200, seed=1)
    assert report.values("shared_words", "RR@10") == {"1": 1.0, "2": 0.5, "3": 0.0}
    assert report.mean("shared_words", "RR@10") == pytest.approx(0.5, abs=1e-12)
    assert report.values("shared_words", "P@1") == {"1": 1.0, "2": 0.0, "3": 0.0}
    c = report.compare("shared_words", "rrf_shared_bm25", "RR@10")
    assert c.diff == pytest.approx(report.mean("shared_words", "RR@10") - report.mean("rrf_shared_bm25", "RR@10"))
    # a study records its provenance; a page names it by its label
    assert fused_pipeline.provenance()["first"][0] == {"name": "shared_words", "kind": "shared words", "documents": 4}
    assert labels.method("shared_words") == "Palavras em comum"
