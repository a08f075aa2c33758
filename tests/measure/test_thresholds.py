import math

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import thresholds

ROWS = [
    {"id": "a", "answerable": True, "hit@1": True, "top_score": 0.9},
    {"id": "b", "answerable": True, "hit@1": True, "top_score": 0.6},
    {"id": "c", "answerable": True, "hit@1": False, "top_score": 0.5},
    {"id": "d", "answerable": False, "hit@1": None, "top_score": 0.7},
    {"id": "e", "answerable": False, "hit@1": None, "top_score": 0.4},
]


def test_outcome_counts():
    o = thresholds.outcome(ROWS, 0.6)
    assert (o["useful_kept"], o["useful_total"], o["wrong_answered"], o["unanswerable_through"]) == (2, 2, 0, 1)
    assert thresholds.outcome(ROWS, 0.0)["unanswerable_through_share"] == 1.0


def test_choose_lowest_threshold_meeting_the_constraint():
    assert thresholds.choose(ROWS, max_through=0.5)["threshold"] == 0.5
    assert thresholds.choose(ROWS, max_through=0.0)["threshold"] == 0.9


def test_split_is_reproducible_and_keeps_the_mix():
    rows = [dict(r, id=f"{r['id']}{i}") for i in range(4) for r in ROWS]
    a, b = thresholds.split_halves(rows, seed=3)
    assert thresholds.split_halves(rows, seed=3) == (a, b)
    assert sorted(r["id"] for r in a + b) == sorted(r["id"] for r in rows)
    assert sum(not r["answerable"] for r in a) == sum(not r["answerable"] for r in b)
    res = thresholds.chosen_and_validated(rows, seed=3, max_through=0.25)
    assert res["on_second_half"]["threshold"] == res["chosen_on_first_half"]["threshold"]


def test_separation_auc():
    assert thresholds.separation_auc([3, 4], [1, 2]) == 1.0
    assert thresholds.separation_auc([1, 2], [3, 4]) == 0.0
    assert thresholds.separation_auc([1, 1], [1]) == 0.5
    assert thresholds.separation_auc([2, 0], [1]) == 0.5
    assert thresholds.separation_auc([3, 1, 2], [2]) == 0.5  # one above, one tie, one below
    with pytest.raises(GabaritoError):
        thresholds.separation_auc([], [1])
    with pytest.raises(GabaritoError):
        thresholds.separation_auc([math.nan], [1])
