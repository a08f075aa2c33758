"""case-studies/standard_collections/reranker_extras.py: the worked example, the reader-input
variant's text, and the latency phase's refusal on a busy machine, on small hand-made inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gabarito.core.runs import Run
from gabarito.retrieval.protocol import Queries
from studies.standard_collections import reranker_extras as EX

ROOT = Path(__file__).resolve().parents[2]


class LengthReader:
    """Scores a text by its length: a known order to check against."""

    def score(self, query, texts):
        return np.array([float(len(t)) for t in texts])


def test_without_title_drops_only_a_leading_title():
    assert EX.without_title("Wing  flutter\nat high speed", "Wing flutter") == "at high speed"
    assert EX.without_title("Another text", "Wing flutter") == "Another text"
    assert EX.without_title("Text", "") == "Text"


def test_worked_example_picks_the_most_changed_mixed_question_and_orders_by_the_reader():
    texts = {"a": "x" * 5, "b": "x" * 9, "c": "x" * 1, "d": "x" * 7}
    runs = {"bm25": Run({"1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "2": [("a", 3.0), ("b", 2.0)],
                         "3": [("d", 1.0), ("c", 0.5)]}),
            "dense": Run({"1": [("b", 0.9), ("a", 0.8)], "2": [], "3": []}),
            "rrf": Run({"1": [("b", 0.03)], "2": [], "3": []})}
    qrels = {"1": {"b": 1}, "2": {"a": 1, "b": 1}, "3": {"c": 2}}
    # question 2 changed most but its top holds only relevant documents; 3 and 1 change by .3
    per_query = {"bm25": {"1": 0.5, "2": 0.1, "3": 0.2}, "bm25+ce@20": {"1": 0.8, "2": 0.9, "3": 0.5}}
    ex = EX.worked_example(LengthReader(), texts, {"a": "Title A"}, {"1": "q1", "2": "q2", "3": "q3"}, qrels,
                           runs, per_query)
    assert ex["query"] == "1"  # ties on |change| go to the smaller id
    rows = {r["doc"]: r for r in ex["candidates"]}
    assert [r["doc"] for r in ex["candidates"]] == ["a", "b", "c"]
    assert {d: r["ce_rank"] for d, r in rows.items()} == {"b": 1, "a": 2, "c": 3}
    assert rows["b"]["dense_rank"] == 1 and rows["a"]["dense_rank"] == 2 and rows["c"]["dense_rank"] is None
    assert rows["b"]["grade"] == 1 and rows["a"]["grade"] is None and rows["a"]["title"] == "Title A"
    assert EX.worked_example(LengthReader(), texts, {}, {"1": "q1"}, {"1": {}}, runs,
                             {"bm25": {"1": 0.0}, "bm25+ce@20": {"1": 0.0}}) is None


def test_latency_is_not_written_when_the_machine_stays_busy(monkeypatch):
    monkeypatch.setattr(EX, "wait_for_quiet", lambda *a, **k: [2.5, 2.0, 1.0])
    out = EX.latency_phase("no-model-needed", Queries(["1"], ["q"]), {"a": "t"}, Run({"1": ["a"]}), 128)
    assert out["valid"] is False and "by_n" not in out and "2.5" in out["why_not_valid"]
