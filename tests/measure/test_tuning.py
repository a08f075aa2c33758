"""Choosing a parameter on one half and scoring it on the other; tests against one baseline."""

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.core.runs import Qrels, Run
from gabarito.measure.tuning import against_baseline, choose, cross_fit, split_halves, tuning_curve

QIDS = [f"q{i}" for i in range(8)]
QRELS = Qrels({q: {"rel": 1} for q in QIDS})
GRID = [i / 7 for i in range(8)]


def solver(w: float) -> Run:
    """A run in which value ``GRID[i]`` puts the relevant document first for query ``q{i}`` only
    (second for every other query)."""
    i = GRID.index(w)
    return Run({q: ([("rel", 2.0), ("x", 1.0)] if q == f"q{i}" else [("x", 2.0), ("rel", 1.0)]) for q in QIDS})


def test_split_is_fixed_by_the_seed_and_ignores_input_order():
    a, b = split_halves(QIDS + ["q8"], seed=7)
    assert (a, b) == split_halves(list(reversed(QIDS + ["q8"])), seed=7)
    assert sorted(a + b) == sorted(QIDS + ["q8"]) and not set(a) & set(b)
    assert (len(a), len(b)) == (4, 5)
    assert split_halves(QIDS, seed=8) != split_halves(QIDS, seed=7)
    with pytest.raises(GabaritoError):
        split_halves(["q1"], seed=1)


def test_choose_breaks_ties_towards_the_preferred_value():
    curve = [{"value": 0.2, "score": 0.5}, {"value": 0.4, "score": 0.5}, {"value": 0.9, "score": 0.5},
             {"value": 0.6, "score": 0.1}]
    assert choose(curve) == 0.4
    assert choose(curve, prefer=1.0) == 0.9
    assert choose([{"value": 0.3, "score": 0.5}, {"value": 0.7, "score": 0.5}]) == 0.3  # equally near: smaller
    with pytest.raises(GabaritoError):
        choose([])


def test_tuning_curve_by_hand():
    runs = {w: solver(w) for w in GRID[:2]}
    curve = tuning_curve(runs, QRELS, ["q0", "q2"], "RR@10")
    assert curve == [{"value": 0.0, "score": (1 + 0.5) / 2}, {"value": GRID[1], "score": (0.5 + 0.5) / 2}]


def test_cross_fit_never_scores_a_query_with_a_value_chosen_on_it():
    """Every value solves exactly one query, so a value chosen on one half solves nothing on the
    other: cross-fitted, every query scores 0.5 (rank 2); tuned on itself, a half would score higher."""
    fit = cross_fit(solver, GRID, QRELS, "RR@10", seed=3, name="solver_cv")
    (f1, f2) = fit["folds"]
    assert f1["tuned_on"] == f2["scored_on"] and f1["scored_on"] == f2["tuned_on"]
    for fold in fit["folds"]:
        assert fold["chosen"] in [GRID[int(q[1:])] for q in fold["tuned_on"]]
        best = max(p["score"] for p in fold["curve"])
        assert best > 0.5 and {p["value"]: p["score"] for p in fold["curve"]}[fold["chosen"]] == best
        for q in fold["scored_on"]:
            assert fit["run"].ids(q) == ["x", "rel"]
    assert fit["run"].name == "solver_cv" and sorted(fit["run"]) == QIDS
    assert [p["value"] for p in fit["curve_all"]] == GRID
    assert all(p["score"] == pytest.approx((1 + 7 * 0.5) / 8) for p in fit["curve_all"])


def test_against_baseline_holm_over_the_comparisons_with_the_baseline_only():
    base = {f"q{i}": 0.5 for i in range(12)}
    better = {f"q{i}": 0.9 for i in range(12)}
    same = {f"q{i}": 0.5 + (0.1 if i % 2 else -0.1) for i in range(12)}
    rows = against_baseline({"base": base, "better": better, "same": same}, "base", resamples=2000, seed=5)
    assert [(r["a"], r["b"]) for r in rows] == [("better", "base"), ("same", "base")]
    assert rows[0]["mean_diff"] == pytest.approx(0.4) and rows[1]["mean_diff"] == pytest.approx(0.0)
    raw = {str(i): r["p_randomization"] for i, r in enumerate(rows)}
    assert [r["p_holm"] for r in rows] == [stats.holm(raw)[str(i)] for i in range(2)]
    assert all(r["p_holm"] >= r["p_randomization"] and r["holm_family"] == 2 for r in rows)
    assert rows[0]["p_holm"] < 0.01 < rows[1]["p_holm"]
    with pytest.raises(GabaritoError):
        against_baseline({"a": base}, "base", resamples=100, seed=1)
