"""The second reading as a stage of the shared pipeline: first stage -> reader over the top n ->
cut, with the rest of the list kept below in its first-stage order."""

from __future__ import annotations

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.pipeline import Pipeline, SecondReading
from gabarito.retrieval.protocol import Queries, TextRetriever

TEXTS = {"a": "short", "b": "a much longer text", "c": "medium text", "d": "the longest text of them all"}


class LengthReader:
    name = "length"

    def __init__(self):
        self.seen = []

    def score(self, query, texts):
        self.seen.append(list(texts))
        return np.array([float(len(t)) for t in texts])

    def provenance(self):
        return {"kind": "test", "name": self.name}


def _first(text, depth):
    return [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)][:depth]


def test_the_reader_reorders_only_the_top_n_and_the_cut_comes_last():
    reader = LengthReader()
    pipe = Pipeline("bm25+len@3", TextRetriever("bm25", _first), second=SecondReading(reader, TEXTS, n=3), cutoff=3)
    stages = pipe.stages(Queries(["q1"], ["question"]), depth=4)
    assert list(stages) == ["bm25", "read", "cut"]
    assert stages["bm25"].ids("q1") == ["a", "b", "c", "d"]
    assert stages["read"].ids("q1") == ["b", "c", "a", "d"]  # d was not re-read: it stays below
    assert stages["cut"].ids("q1") == ["b", "c", "a"]
    assert reader.seen == [[TEXTS["a"], TEXTS["b"], TEXTS["c"]]]  # only the top 3 were read
    prov = pipe.provenance()
    assert prov["second_reading"] == {"reader": {"kind": "test", "name": "length"}, "n": 3} and prov["cutoff"] == 3


def test_a_second_reading_needs_at_least_one_candidate():
    with pytest.raises(GabaritoError, match="n >= 1"):
        SecondReading(LengthReader(), TEXTS, n=0)
