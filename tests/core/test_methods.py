"""Methods as values (gabarito.core.methods): a method is its key for every dict and file that
already used the key, carries what makes it, survives JSON and pickling, refuses a bad field with
one line, and is found among declared methods -- never parsed from its key."""

from __future__ import annotations

import json
import pickle

import pytest

from gabarito.core import methods as M
from gabarito.errors import GabaritoError


def test_keys_are_the_names_results_files_have_always_used():
    assert M.fused(10, ["bm25", "vector"]) == "rrf@10"
    assert M.reading("convex", 20) == "convex@20"
    assert M.cross_encoder("cache:cross-encoders/heldout-cranfield-1") == "cross-encoder cache:cross-encoders/heldout-cranfield-1"
    assert M.first_stage("cosine e5") == "cosine e5 (first stage)"
    assert M.reread(M.cross_encoder("x"), "dense e5", 20) == "cross-encoder x (after dense e5 top 20)"
    assert M.leaf("bm25") == "bm25" and M.leaf("bm25").kind == "leaf"


def test_a_method_carries_its_fields_and_reads_a_results_dict_as_is():
    fused = M.fused(100, ["bm25", "vector"])
    assert (fused.kind, fused.top, fused.inputs) == ("fused", 100, (M.leaf("bm25"), M.leaf("vector")))
    assert {"rrf@100": 0.5}[fused] == 0.5 and {fused: 1}["rrf@100"] == 1
    assert json.dumps({fused: [fused]}) == '{"rrf@100": ["rrf@100"]}'
    with pytest.raises(AttributeError):
        fused.top = 10


def test_dict_and_pickle_round_trips_keep_every_field():
    m = M.reread(M.cross_encoder("cache:x"), M.leaf("dense e5"), 20)
    for again in (M.Method.from_dict(json.loads(json.dumps(m.to_dict()))), pickle.loads(pickle.dumps(m))):
        assert again == m and again.kind == "reread" and again.top == 20
        assert again.inputs[0].kind == "cross_encoder" and again.inputs[0].name == "cache:x"


@pytest.mark.parametrize("make, words", [
    (lambda: M.fused(0), "fusion depth"), (lambda: M.fused(True), "fusion depth"),
    (lambda: M.reading("sum", 20), "unknown way to join"), (lambda: M.reread("a", "b", -1), "reading depth"),
    (lambda: M.leaf(""), "non-empty"), (lambda: M.Method("mystery"), "unknown method kind"),
])
def test_a_bad_field_is_one_line(make, words):
    with pytest.raises(GabaritoError, match=words):
        make()


def test_a_key_is_found_among_declared_methods_never_parsed():
    ran = [M.leaf("bm25"), M.fused(10), M.fused(100)]
    found = M.among("rrf@100", ran)
    assert isinstance(found, M.Method) and found.top == 100
    with pytest.raises(GabaritoError, match="'rrf@20' is not one of the methods declared"):
        M.among("rrf@20", ran)  # well-formed, but not what the study ran


def test_declared_methods_are_indexed_once_and_a_key_declared_twice_differently_is_refused():
    ten = M.fused(10, ["bm25", "vector"])
    index = M.declare([M.leaf("bm25"), ten, "vector"])
    assert list(index) == ["bm25", "rrf@10", "vector"] and index["rrf@10"].inputs == ("bm25", "vector")
    assert M.among("rrf@10", index) is index["rrf@10"]  # a lookup in the index, not a scan
    assert M.among("rrf@10", [ten]).top == 10  # the methods themselves still work
    assert M.declare([ten, M.fused(10, ["bm25", "vector"])]) == {"rrf@10": ten}  # the same method twice: fine
    with pytest.raises(GabaritoError, match="'rrf@10' is declared twice as two different methods"):
        M.declare([ten, M.fused(10, ["bm25", "splade"])])
    with pytest.raises(GabaritoError, match="'rrf@20' is not one of the methods declared here"):
        M.among("rrf@20", index)


def test_the_trained_readers_reading_is_a_value_with_the_classic_collections_key():
    from gabarito.publish import labels, palette

    m = M.trained_reading("bm25", 20)
    assert m == "bm25+ce@20" and (m.kind, m.top, m.name, m.inputs) == ("trained_reading", 20, "ce", ("bm25",))
    assert M.Method.from_dict(json.loads(json.dumps(m.to_dict()))).to_dict() == m.to_dict()
    assert labels.method(m) == "Palavra (BM25), top-20 relido pelo leitor treinado aqui"
    assert palette.method_color(m) == palette.READING_COLOURS["replace"]
    with pytest.raises(GabaritoError, match="reading depth"):
        M.trained_reading("bm25", 0)
