import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from gabarito.errors import GabaritoError
from gabarito.measure.stats import (
    bootstrap_ci,
    compare_methods,
    effect_size,
    holm,
    paired_randomization_test,
)
from gabarito.core.signtest import sign_test


def _pairs(wins: int, losses: int, ties: int) -> tuple[list[float], list[float]]:
    a = [1.0] * wins + [0.0] * losses + [0.5] * ties
    b = [0.0] * wins + [1.0] * losses + [0.5] * ties
    return a, b


@pytest.mark.parametrize("wins,losses,ties", [
    (0, 1, 0), (3, 0, 2), (7, 3, 0), (5, 5, 4), (12, 2, 1), (30, 12, 8), (100, 70, 5), (0, 25, 0),
])
def test_sign_test_matches_scipy_binomtest(wins, losses, ties):
    a, b = _pairs(wins, losses, ties)
    result = sign_test(a, b)
    assert (result["wins"], result["losses"], result["ties"]) == (wins, losses, ties)
    expected = binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue
    assert result["p"] == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_sign_test_all_ties():
    assert sign_test([0.3, 0.2], [0.3, 0.2]) == {"wins": 0, "losses": 0, "ties": 2, "p": 1.0}


def test_randomization_identical_inputs_give_p_one():
    a = [0.1, 0.5, 1.0, 0.0, 0.33]
    assert paired_randomization_test(a, a, n_resamples=2000) == 1.0


def test_randomization_strong_difference_gives_smallest_p():
    rng = np.random.default_rng(1)
    a = rng.uniform(0.4, 1.0, size=60)
    b = a - 0.3
    p = paired_randomization_test(a, b, n_resamples=5000, seed=2)
    assert p == pytest.approx(1 / 5001)


def test_randomization_is_deterministic_with_seed():
    rng = np.random.default_rng(3)
    a = rng.uniform(size=40)
    b = a + rng.normal(0.02, 0.2, size=40)
    first = paired_randomization_test(a, b, n_resamples=3000, seed=9)
    assert paired_randomization_test(a, b, n_resamples=3000, seed=9) == first
    assert 0 < first <= 1


def test_randomization_close_to_exact_enumeration():
    diff = np.array([0.3, -0.1, 0.25, 0.05, -0.2, 0.4, 0.1, -0.05, 0.15, 0.2])
    observed = abs(diff.mean())
    flips = np.array(list(itertools.product([-1.0, 1.0], repeat=diff.size)))
    exact = np.mean(np.abs((flips * diff).mean(axis=1)) >= observed - 1e-12)
    p = paired_randomization_test(diff, np.zeros_like(diff), n_resamples=20000, seed=4)
    assert p == pytest.approx(exact, abs=0.01)


def test_paired_length_mismatch_is_an_error():
    with pytest.raises(GabaritoError):
        paired_randomization_test([1.0, 2.0], [1.0])
    with pytest.raises(GabaritoError):
        sign_test([], [])


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    rng = np.random.default_rng(5)
    values = rng.binomial(1, 0.6, size=200).astype(float)
    low, high = bootstrap_ci(values, n_resamples=4000, seed=1)
    assert low < values.mean() < high
    assert bootstrap_ci(values, n_resamples=4000, seed=1) == (low, high)
    # Close to the normal approximation for a proportion.
    half_width = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert (high - low) / 2 == pytest.approx(half_width, rel=0.1)
    # A wider level gives a wider interval.
    low90, high90 = bootstrap_ci(values, n_resamples=4000, alpha=0.10, seed=1)
    assert low <= low90 and high90 <= high


def test_chunked_resampling_gives_the_same_results(monkeypatch):
    import gabarito.measure.stats as stats

    values = np.arange(10, dtype=float)
    whole = bootstrap_ci(values, n_resamples=500, seed=8)
    rng = np.random.default_rng(8)
    means = values[rng.integers(0, 10, size=(500, 10))].mean(axis=1)
    assert whole == tuple(np.percentile(means, [2.5, 97.5]))
    a = np.random.default_rng(2).uniform(size=37)
    b = a + np.random.default_rng(3).normal(0.03, 0.2, size=37)
    p_whole = paired_randomization_test(a, b, n_resamples=1000, seed=3)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 50)  # forces many small resampling matrices
    assert bootstrap_ci(values, n_resamples=500, seed=8) == whole
    assert paired_randomization_test(a, b, n_resamples=1000, seed=3) == p_whole


def test_bootstrap_ci_constant_values_and_errors():
    assert bootstrap_ci([0.5] * 7, n_resamples=100) == (0.5, 0.5)
    with pytest.raises(GabaritoError):
        bootstrap_ci([])
    with pytest.raises(GabaritoError):
        bootstrap_ci([1.0, float("nan")])


def test_holm_hand_computed():
    raw = {"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}
    # Sorted: d (x4) 0.02, a (x3) 0.03, c (x2) 0.06, b (x1) 0.04 -> raised to 0.06.
    adjusted = holm(raw)
    assert list(adjusted) == ["a", "b", "c", "d"]
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})


def test_holm_caps_at_one_and_handles_empty():
    assert holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}
    assert holm({}) == {}
    assert holm({"only": 0.2}) == {"only": 0.2}


def test_effect_size():
    result = effect_size([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert result == {"mean_diff": 2.0, "dz": 2.0}
    assert effect_size([1.0, 1.0], [1.0, 1.0]) == {"mean_diff": 0.0, "dz": 0.0}
    assert effect_size([2.0, 2.0], [1.0, 1.0])["dz"] == float("inf")
    assert np.isnan(effect_size([1.0], [0.0])["dz"])


def test_compare_methods_rows():
    rng = np.random.default_rng(6)
    base = rng.uniform(size=80)
    per_query = {
        "bm25": list(base),
        "dense": list(np.clip(base + 0.25, 0, 1)),
        "hybrid": list(np.clip(base + rng.normal(0, 0.05, 80), 0, 1)),
    }
    rows = compare_methods(per_query, n_resamples=2000, seed=3)
    assert [(r["a"], r["b"]) for r in rows] == [("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")]
    for row in rows:
        a, b = np.array(per_query[row["a"]]), np.array(per_query[row["b"]])
        assert row["mean_diff"] == pytest.approx(a.mean() - b.mean())
        assert row["ci_low"] <= row["mean_diff"] <= row["ci_high"]
        assert row["wins"] + row["losses"] + row["ties"] == 80
        assert row["p_holm"] >= row["p_randomization"]
        assert row["p_sign"] == sign_test(a, b)["p"]
    assert rows[0]["mean_diff"] < 0 and rows[0]["p_randomization"] < 0.001
    assert rows == compare_methods(per_query, n_resamples=2000, seed=3)


def test_compare_methods_aligns_mappings_on_qid():
    as_lists = compare_methods({"x": [1.0, 0.0, 0.5], "y": [0.0, 0.0, 1.0]}, n_resamples=200)
    as_maps = compare_methods({"x": {"q2": 0.0, "q1": 1.0, "q3": 0.5},
                               "y": {"q3": 1.0, "q1": 0.0, "q2": 0.0}}, n_resamples=200)
    assert as_lists == as_maps
    with pytest.raises(GabaritoError):
        compare_methods({"x": {"q1": 1.0}, "y": {"q2": 1.0}})
    with pytest.raises(GabaritoError):
        compare_methods({"x": [1.0]})


# --- Shared draws (issue 22, item 9): the same numbers as resampling each series alone. ---
# The reference below is the algorithm before the shared draw, written out plainly: each series
# drew its own index matrix (in chunks of at most 2,000,000 cells) and averaged x[idx].

def _reference_chunks(n_resamples, n, cells=2_000_000):
    rows = max(1, cells // n)
    return [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]


def _reference_bootstrap_ci(x, n_resamples, alpha, seed):
    x = np.asarray(x, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.concatenate([x[rng.integers(0, x.size, size=(rows, x.size))].mean(axis=1)
                            for rows in _reference_chunks(n_resamples, x.size)])
    return tuple(float(v) for v in np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)]))


def _reference_randomization(a, b, n_resamples, seed):
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    observed = abs(diff.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(diff).max()))
    rng = np.random.default_rng(seed)
    count = 0
    for rows in _reference_chunks(n_resamples, diff.size):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, diff.size))
        count += int(np.sum(np.abs((signs * diff).mean(axis=1)) >= observed - tolerance))
    return (count + 1) / (n_resamples + 1)


def _series(seed, n, count):
    """Continuous, 0/1 and few-valued series (ties between resample means are common)."""
    rng = np.random.default_rng(seed)
    kinds = [rng.uniform(size=n), rng.binomial(1, 0.4, size=n).astype(float),
             rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0], size=n), rng.normal(0, 3, size=n)]
    return [kinds[i % len(kinds)] for i in range(count)]


@pytest.mark.parametrize("seed,n,resamples,cells", [
    (1, 1, 1, None), (2, 2, 7, None), (3, 37, 1, 50), (4, 37, 1001, 50), (5, 333, 2500, 1000),
    (6, 1001, 999, None), (20240601, 4097, 301, 8191), (20261203, 250, 10000, None),
])
def test_bootstrap_ci_many_equals_each_series_alone_by_the_old_algorithm(monkeypatch, seed, n, resamples, cells):
    import gabarito.measure.stats as stats

    if cells is not None:  # chunks that do not divide n_resamples, rows that do not fill a chunk
        monkeypatch.setattr(stats, "_CHUNK_CELLS", cells)
    series = _series(seed, n, 6)
    for alpha in (0.05, 0.1):
        got = stats.bootstrap_ci_many(series, n_resamples=resamples, alpha=alpha, seed=seed)
        for x, (low, high) in zip(series, got, strict=True):
            ref = _reference_bootstrap_ci(x, resamples, alpha, seed)
            assert abs(low - ref[0]) <= 1e-12 and abs(high - ref[1]) <= 1e-12
            alone = stats.bootstrap_ci(x, n_resamples=resamples, alpha=alpha, seed=seed)
            assert alone == pytest.approx((low, high), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed,n,resamples,cells", [
    (1, 1, 1, None), (2, 3, 50, None), (3, 37, 1, 50), (4, 37, 1001, 50), (5, 333, 2500, 1000),
    (20240601, 4097, 301, 8191), (20261203, 250, 10000, None),
])
def test_randomization_p_many_equals_each_pair_alone_by_the_old_algorithm(monkeypatch, seed, n, resamples, cells):
    import gabarito.measure.stats as stats

    if cells is not None:
        monkeypatch.setattr(stats, "_CHUNK_CELLS", cells)
    a_list = _series(seed, n, 5)
    b_list = [a + np.random.default_rng(seed + i).normal(0.01 * i, 0.2, size=n) for i, a in enumerate(a_list)]
    b_list[1] = a_list[1].copy()  # identical methods: p = 1
    b_list[2] = np.round(a_list[2] - 0.25, 2)  # few distinct differences: resample means tie the observed one
    got = stats.randomization_p_many([a - b for a, b in zip(a_list, b_list)], n_resamples=resamples, seed=seed)
    for a, b, p in zip(a_list, b_list, got, strict=True):
        assert p == _reference_randomization(a, b, resamples, seed)
        assert stats.paired_randomization_test(a, b, n_resamples=resamples, seed=seed) == p
    assert got[1] == 1.0


def test_the_sign_stream_is_the_old_one_whatever_the_chunking():
    """rng.choice over 2 values draws the same stream in any chunking (the shared draw relies on it)."""
    whole = np.random.default_rng(11).choice(np.array([-1.0, 1.0]), size=(40, 97))
    rng = np.random.default_rng(11)
    parts = np.concatenate([rng.choice(np.array([-1.0, 1.0]), size=(rows, 97)) for rows in (3, 1, 7, 29)])
    assert np.array_equal(whole, parts)
    idx = np.random.default_rng(12).integers(0, 97, size=(40, 97))
    rng = np.random.default_rng(12)
    assert np.array_equal(idx, np.concatenate([rng.integers(0, 97, size=(rows, 97)) for rows in (3, 1, 7, 29)]))


def test_compare_tables_equals_compare_methods_per_table_and_the_old_numbers():
    from gabarito.measure.stats import compare_tables

    rng = np.random.default_rng(21)
    tables = {
        "RR@10": {m: list(rng.choice([0.0, 0.2, 1 / 3, 0.5, 1.0], size=61)) for m in ("bm25", "dense", "hybrid")},
        "nDCG@10": {m: list(rng.uniform(size=61)) for m in ("bm25", "dense", "hybrid")},
        "short": {"x": list(rng.uniform(size=9)), "y": list(rng.uniform(size=9))},  # another length
    }
    got = compare_tables(tables, n_resamples=1500, seed=5)
    assert list(got) == list(tables)
    for key, per_query in tables.items():
        alone = compare_methods(per_query, n_resamples=1500, seed=5)
        for row, other in zip(got[key], alone, strict=True):
            assert row.keys() == other.keys()
            for name, value in row.items():
                assert value == (pytest.approx(other[name], abs=1e-12, rel=0, nan_ok=True)
                                 if isinstance(value, float) else other[name])
        for row in got[key]:
            a, b = per_query[row["a"]], per_query[row["b"]]
            low, high = _reference_bootstrap_ci(np.subtract(a, b), 1500, 0.05, 5)
            assert abs(row["ci_low"] - low) <= 1e-12 and abs(row["ci_high"] - high) <= 1e-12
            assert row["p_randomization"] == _reference_randomization(a, b, 1500, 5)


def test_bootstrap_ci_many_checks_its_series():
    from gabarito.measure.stats import bootstrap_ci_many, randomization_p_many

    with pytest.raises(GabaritoError, match="different lengths"):
        bootstrap_ci_many([[1.0, 2.0], [1.0]])
    with pytest.raises(GabaritoError, match="NaN"):
        bootstrap_ci_many([[1.0, 2.0], [1.0, float("inf")]])
    with pytest.raises(GabaritoError):
        bootstrap_ci_many([])
    with pytest.raises(GabaritoError):
        randomization_p_many([[0.1, 0.2]], n_resamples=0)


def test_same_numbers_with_and_without_the_one_thread_blas_limit(monkeypatch):
    import gabarito.measure.stats as stats

    series = _series(8, 501, 5)
    limited = stats.bootstrap_ci_many(series, n_resamples=800, seed=2)
    p_limited = stats.randomization_p_many(series, n_resamples=800, seed=2)
    monkeypatch.setattr(stats, "_BLAS", False)  # threadpoolctl missing: BLAS left as it is
    unlimited = stats.bootstrap_ci_many(series, n_resamples=800, seed=2)
    assert np.max(np.abs(np.subtract(unlimited, limited))) <= 1e-12
    assert stats.randomization_p_many(series, n_resamples=800, seed=2) == p_limited


@pytest.mark.parametrize("n,k", [(0, 0), (1, 0), (1, 1), (5, 2), (100, 37), (100, 50), (2701, 1200)])
def test_binomial_tail_is_the_old_sum_of_combinations(n, k):
    from gabarito.core.signtest import binomial_tail

    assert binomial_tail(n, k) == sum(math.comb(n, i) for i in range(k + 1))


def test_sign_test_on_tens_of_thousands_of_queries():
    """The old sum of math.comb took minutes here (a pair of methods on 50,000 questions)."""
    a, b = _pairs(19000, 18000, 500)
    result = sign_test(a, b)
    assert (result["wins"], result["losses"], result["ties"]) == (19000, 18000, 500)
    assert result["p"] == pytest.approx(binomtest(19000, 37000, 0.5).pvalue, rel=1e-12)


def test_wilson_interval_matches_scipy():
    from scipy.stats import binomtest

    from gabarito.measure.stats import wilson

    for k, n in ((0, 10), (5, 10), (68, 202), (10, 10), (1, 3)):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert wilson(0, 0) == (0.0, 1.0)
