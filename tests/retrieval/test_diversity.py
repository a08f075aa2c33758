"""MMR, repeated text and distinct counts, on small hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gabarito.retrieval.diversity import distinct, mmr, repeated_text_fraction, shingles
from gabarito.errors import GabaritoError


def unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


# q at 0 degrees; a at 5, b at 15 (close to a), c at -40 (far from a and b).
Q = unit(0)
VECS = [unit(5), unit(15), unit(-40)]
IDS = ["a", "b", "c"]


def test_lambda_one_is_relevance_order():
    # cos 5 = 0.996 > cos 15 = 0.966 > cos 40 = 0.766
    assert mmr(Q, VECS, IDS, lam=1.0, k=3) == ["a", "b", "c"]


def test_lambda_half_picks_the_diverse_second_item():
    # first pick: a (0.5 * cos 5). Then
    #   b: 0.5 * cos 15 - 0.5 * cos 10 = 0.5 * (0.96593 - 0.98481) = -0.00944
    #   c: 0.5 * cos 40 - 0.5 * cos 45 = 0.5 * (0.76604 - 0.70711) = +0.02947  -> c
    assert mmr(Q, VECS, IDS, lam=0.5, k=2) == ["a", "c"]
    assert mmr(Q, VECS, IDS, lam=0.5, k=3) == ["a", "c", "b"]
    assert mmr(Q, VECS, IDS, lam=1.0, k=2) == ["a", "b"]


def test_four_vectors_hand_computed():
    # d at 80 degrees: little relevance (cos 80 = 0.174) but far from the rest.
    vecs = VECS + [unit(80)]
    ids = IDS + ["d"]
    # lam = 0.3, after a: b = 0.3*.96593 - 0.7*.98481 = -0.39959; c = 0.3*.76604 - 0.7*.70711 = -0.26517;
    # d = 0.3*.17365 - 0.7*cos 75 (.25882) = -0.12908 -> d.
    assert mmr(Q, vecs, ids, lam=0.3, k=2) == ["a", "d"]
    # third: b = 0.3*.96593 - 0.7*max(.98481, cos 65=.42262) = -0.39959;
    #        c = 0.3*.76604 - 0.7*max(.70711, cos 120=-.5) = -0.26517 -> c
    assert mmr(Q, vecs, ids, lam=0.3, k=4) == ["a", "d", "c", "b"]


def test_lambda_one_equals_sorting_by_similarity_with_ties_in_input_order():
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(30, 8))
    vecs[10] = vecs[3]  # an exact tie: 3 must come before 10
    query = rng.normal(size=8)
    ids = [f"d{i}" for i in range(30)]
    sims = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)) @ (query / np.linalg.norm(query))
    expected = [ids[i] for i in sorted(range(30), key=lambda i: (-sims[i], i))]
    assert mmr(query, vecs, ids, lam=1.0, k=30) == expected
    got = mmr(query, vecs, ids, lam=1.0, k=30)
    assert got.index("d3") < got.index("d10")


def test_ties_go_to_the_first_candidate():
    vecs = [unit(10), unit(-10), unit(10)]
    assert mmr(Q, vecs, ["x", "y", "z"], lam=1.0, k=3) == ["x", "y", "z"]
    assert mmr(Q, vecs, ["x", "y", "z"], lam=0.0, k=1) == ["x"]


def test_k_larger_than_candidates_and_k_zero():
    assert mmr(Q, VECS, IDS, lam=0.5, k=10) == ["a", "c", "b"]
    assert mmr(Q, VECS, IDS, lam=0.5, k=0) == []
    assert mmr(Q, np.zeros((0, 2)), [], lam=0.5, k=3) == []


def test_unnormalised_and_zero_vectors():
    scaled = [[10 * x for x in v] for v in VECS]
    assert mmr(Q, scaled, IDS, lam=0.5, k=3) == mmr(Q, VECS, IDS, lam=0.5, k=3)
    # a zero vector has similarity 0 to everything: last by relevance here
    assert mmr(Q, VECS + [[0.0, 0.0]], IDS + ["z"], lam=1.0, k=4) == ["a", "b", "c", "z"]


@pytest.mark.parametrize("kwargs", [{"lam": 1.5, "k": 2}, {"lam": -0.1, "k": 2}, {"lam": 0.5, "k": -1},
                                    {"lam": 0.5, "k": 1.5}])
def test_bad_arguments(kwargs):
    with pytest.raises(GabaritoError):
        mmr(Q, VECS, IDS, **kwargs)


def test_shape_mismatches():
    with pytest.raises(GabaritoError):
        mmr(Q, VECS, ["a", "b"], lam=0.5, k=2)
    with pytest.raises(GabaritoError):
        mmr([1.0, 0.0, 0.0], VECS, IDS, lam=0.5, k=2)


def test_shingles():
    assert shingles("One two, three four FIVE six") == [("one", "two", "three", "four", "five"),
                                                        ("two", "three", "four", "five", "six")]
    assert shingles("too short here") == []


def test_repeated_text_fraction_crafted():
    first = "the quick brown fox jumps over the lazy dog"          # 9 words -> 5 shingles
    copy = "The quick brown fox jumps over the lazy dog!"          # same 5 shingles, all repeated
    other = "a completely different sentence with nothing shared"  # 7 words -> 3 shingles, none repeated
    assert repeated_text_fraction([first]) == 0.0
    assert repeated_text_fraction([first, copy]) == pytest.approx(5 / 10)
    assert repeated_text_fraction([first, other]) == 0.0
    assert repeated_text_fraction([first, other, copy]) == pytest.approx(5 / 13)
    # half overlap: "jumps over the lazy dog and then sleeps" shares 1 shingle of 4 with first
    partial = "jumps over the lazy dog and then sleeps"
    assert repeated_text_fraction([first, partial]) == pytest.approx(1 / 9)


def test_repeats_inside_one_text_do_not_count():
    looped = "one two three four five one two three four five"  # 6 shingles, "one..five" twice
    assert repeated_text_fraction([looped]) == 0.0
    # in a later text every occurrence of an earlier shingle counts
    assert repeated_text_fraction(["one two three four five", looped]) == pytest.approx(2 / 7)


def test_repeated_text_fraction_edge_cases():
    assert repeated_text_fraction([]) == 0.0
    assert repeated_text_fraction(["short", "short"]) == 0.0
    assert repeated_text_fraction(["a b c", "a b c"], n=2) == pytest.approx(2 / 4)
    with pytest.raises(GabaritoError):
        repeated_text_fraction(["x"], n=0)
    with pytest.raises(GabaritoError):
        repeated_text_fraction([None])  # type: ignore[list-item]


def test_distinct():
    assert distinct(["d1", "d2", "d1", "d3", "d2"]) == 3
    assert distinct([]) == 0
    assert distinct(x for x in (1, 1, 1)) == 1
