"""Issue 22: kappa without the shared zeros, the adjudicator's resolutions, and the three
adjudication regimes (adjudicator's grade, min(A, B), max(A, B))."""

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.agreement import agreement_summary, cohen_kappa, either_nonzero
from gabarito.measure.judgments import combine, graded_qrels, resolutions, under_regime

A = [0, 1, 1, 2, 0, 0, 0]
B = [0, 1, 2, 2, 1, 0, 0]


def test_either_nonzero_drops_only_the_shared_zeros():
    assert either_nonzero(A, B) == ([1, 1, 2, 0], [1, 2, 2, 1])
    with pytest.raises(GabaritoError):
        either_nonzero([0], [0, 1])


def test_nonzero_kappa_by_hand_and_against_scikit_learn():
    # on (1,1) (1,2) (2,2) (0,1): observed .5; A's marginals 1/4 2/4 1/4, B's 0 2/4 2/4 -> expected .375
    out = agreement_summary(A, B, resamples=200, seed=1)
    nz = out["either_nonzero"]
    assert nz["n_pairs"] == 4 and nz["observed_agreement"] == pytest.approx(0.5)
    assert nz["unweighted"]["kappa"] == pytest.approx((0.5 - 0.375) / (1 - 0.375))
    assert out["n_pairs"] == 7 and out["unweighted"]["kappa"] == pytest.approx(cohen_kappa(A, B))
    assert out["unweighted"]["kappa"] > nz["unweighted"]["kappa"]  # the shared zeros inflate kappa
    sklearn = pytest.importorskip("sklearn.metrics")
    for name, weights in (("unweighted", None), ("linear", "linear")):
        theirs = sklearn.cohen_kappa_score([1, 1, 2, 0], [1, 2, 2, 1], weights=weights, labels=[0, 1, 2])
        assert nz[name]["kappa"] == pytest.approx(theirs)
        low, high = nz[name]["ci95"]
        assert low <= nz[name]["kappa"] <= high


def test_nonzero_block_is_empty_when_every_grade_is_zero():
    out = agreement_summary([0, 0, 1], [0, 0, 1], resamples=50)
    assert out["either_nonzero"]["n_pairs"] == 1
    out = agreement_summary([0, 0], [0, 0], resamples=50)
    assert out["either_nonzero"] == {"n_pairs": 0, "observed_agreement": None,
                                     "unweighted": {"kappa": None, "ci95": None, "undefined_resamples": 0, "n": 0},
                                     "linear": {"kappa": None, "ci95": None, "undefined_resamples": 0, "n": 0}}


KEY = {"P1": {"question": "q1", "concept": "gold1"}, "P2": {"question": "q1", "concept": "x"},
       "P3": {"question": "q1", "concept": "y"}, "P4": {"question": "q2", "concept": "z"},
       "P5": {"question": "q2", "concept": "w"}, "P6": {"question": "q2", "concept": "v"}}
EXPECTED = {"q1": "gold1", "q2": "gold2"}
GA = {"P1": 0, "P2": 0, "P3": 1, "P4": 0, "P5": 2, "P6": 1}
GB = {"P1": 1, "P2": 1, "P3": 2, "P4": 2, "P5": 2, "P6": 1}
GC = {"P1": 0, "P2": 1, "P3": 1, "P4": 1}   # P2 higher, P3 lower, P4 in between; P1 is the expected concept


def test_three_regimes_resolve_only_the_disagreements():
    pairs = combine(GA, GB, GC, KEY, EXPECTED)["pairs"]
    got = {r: {pid: p["grade"] for pid, p in under_regime(pairs, r).items()} for r in ("adjudicated", "min", "max")}
    assert got["adjudicated"] == {"P1": 2, "P2": 1, "P3": 1, "P4": 1, "P5": 2, "P6": 1}
    assert got["min"] == {"P1": 2, "P2": 0, "P3": 1, "P4": 0, "P5": 2, "P6": 1}   # expected concept stays 2
    assert got["max"] == {"P1": 2, "P2": 1, "P3": 2, "P4": 2, "P5": 2, "P6": 1}
    assert pairs["P2"]["grade"] == 1  # the input is not changed
    assert graded_qrels(under_regime(pairs, "min"), ["q2"]) == {"q2": {"z": 0, "w": 2, "v": 1}}
    with pytest.raises(GabaritoError, match="regime 'median'"):
        under_regime(pairs, "median")


def test_resolutions_count_higher_lower_between_and_outside_by_kind():
    pairs = combine(GA, GB, GC, KEY, EXPECTED)["pairs"]
    out = resolutions(pairs)
    assert {k: out[k] for k in ("n", "higher", "lower", "between", "outside")} == \
        {"n": 4, "higher": 1, "lower": 2, "between": 1, "outside": 0}
    assert out["by_kind"] == {"0-1": {"n": 2, "higher": 1, "lower": 1, "between": 0, "outside": 0},
                              "0-2": {"n": 1, "higher": 0, "lower": 0, "between": 1, "outside": 0},
                              "1-2": {"n": 1, "higher": 0, "lower": 1, "between": 0, "outside": 0}}
    odd = resolutions({"P9": {"a": 0, "b": 1, "c": 2}})
    assert odd["outside"] == 1 and odd["by_kind"]["0-1"]["outside"] == 1
    with pytest.raises(GabaritoError, match="P9 has no adjudication"):
        resolutions({"P9": {"a": 0, "b": 1, "c": None}})
