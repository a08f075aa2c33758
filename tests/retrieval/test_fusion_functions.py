import math

import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.fusion import rrf_runs
from gabarito.retrieval.fusion_functions import (DBSF, CombSUM, Linear, WeightedRRF, combine_scores, normalize,
                                                 parse_fusion)
from gabarito.retrieval.pipeline import RRF

A = {"q": [("a", 10.0), ("b", 6.0), ("c", 2.0)]}
B = {"q": [("c", 0.9), ("d", 0.5)]}


def test_minmax_zscore_dbsf_hand_computed():
    assert normalize(A["q"], "minmax") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert normalize([("x", 3.0), ("y", 3.0)], "minmax") == {"x": 1.0, "y": 1.0}
    mean, sd = 6.0, math.sqrt(32 / 3)
    z = normalize(A["q"], "zscore")
    assert z["a"] == pytest.approx(4 / sd) and z["b"] == pytest.approx(0.0) and z["c"] == pytest.approx(-4 / sd)
    d = normalize(A["q"], "dbsf")
    assert d["b"] == pytest.approx(0.5) and d["a"] == pytest.approx((10 - (mean - 3 * sd)) / (6 * sd))
    assert normalize([("x", 1.0)], "dbsf") == {"x": 0.5}
    with pytest.raises(GabaritoError, match="unknown normalization"):
        normalize(A["q"], "softmax")


def test_linear_is_a_convex_combination_and_missing_docs_count_zero():
    run = Linear(0.25)([A, B], depth=10)
    # A min-max: a 1, b .5, c 0; B min-max: c 1, d 0
    want = {"a": 0.25, "b": 0.125, "c": 0.75, "d": 0.0}
    assert dict(run["q"]) == pytest.approx(want)
    assert [d for d, _ in run["q"]] == ["c", "a", "b", "d"]
    with pytest.raises(GabaritoError):
        Linear(1.5)


def test_combsum_combmnz_and_depth():
    s = dict(CombSUM()([A, B], 10)["q"])
    m = dict(CombSUM(mnz=True)([A, B], 10)["q"])
    assert s["c"] == pytest.approx(1.0) and m["c"] == pytest.approx(2.0) and m["a"] == pytest.approx(1.0)
    cut = dict(combine_scores([A, B], 1)["q"])  # only each list's first document is read
    assert set(cut) == {"a", "c"}


def test_weighted_rrf_with_unit_weights_is_rrf_and_weights_matter():
    assert WeightedRRF(60)([A, B], 10) == rrf_runs([A, B], rrf_k=60, depth=10) == RRF(60)([A, B], 10)
    w = dict(WeightedRRF(60, (2.0, 1.0))([A, B], 10)["q"])
    assert w["a"] == pytest.approx(2 / 61) and w["c"] == pytest.approx(2 / 63 + 1 / 61)


def test_dbsf_sums_dbsf_scores():
    got = dict(DBSF()([A, B], 10)["q"])
    want_c = normalize(A["q"], "dbsf")["c"] + normalize(B["q"], "dbsf")["c"]
    assert got["c"] == pytest.approx(want_c)


def test_parse_fusion():
    assert parse_fusion("rrf") == RRF(60) and parse_fusion("rrf:10") == RRF(10)
    assert parse_fusion("linear:0.3") == Linear(0.3) and parse_fusion("dbsf") == DBSF()
    assert parse_fusion("wrrf:60:2,1") == WeightedRRF(60, (2.0, 1.0))
    assert parse_fusion("combmnz") == CombSUM(mnz=True)
    for bad in ("rrf:x", "borda", "linear:abc", ""):
        with pytest.raises(GabaritoError, match="unknown fusion"):
            parse_fusion(bad)
