"""Scaling helpers: log-log fits, /proc memory, synthetic vectors, exact top-k, recall."""

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.scaling import (
    exact_topk,
    extrapolate_seconds,
    loglog_fit,
    perturbed_copies,
    predict,
    process_memory,
    recall_at_k,
    throughput,
)


def test_loglog_fit_recovers_power_law():
    sizes = [10, 100, 1000, 10000]
    fit = loglog_fit(sizes, [3 * s ** 2 for s in sizes])
    assert fit["slope"] == pytest.approx(2.0) and fit["r2"] == pytest.approx(1.0)
    assert predict(fit, 50) == pytest.approx(3 * 50 ** 2)
    assert fit["n_points"] == 4 and fit["dropped"] == 0


def test_loglog_fit_drops_non_positive_and_needs_two_sizes():
    fit = loglog_fit([1, 10, 100, 0], [2, 20, 200, 5])
    assert fit["slope"] == pytest.approx(1.0) and fit["dropped"] == 1
    with pytest.raises(GabaritoError):
        loglog_fit([10, 10], [1, 2])
    with pytest.raises(GabaritoError):
        loglog_fit([1, 2], [1])


def test_process_memory_reads_proc_status(tmp_path):
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text("Name:\tjava\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
    assert process_memory(42, proc=tmp_path) == {"rss_mb": 100.0, "peak_rss_mb": 200.0}
    assert process_memory(43, proc=tmp_path) is None and process_memory(None) is None


def test_process_memory_of_this_process():
    import os

    mem = process_memory(os.getpid())
    assert mem is not None and mem["rss_mb"] > 0


def test_perturbed_copies_are_unit_deterministic_and_near_their_base():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(5, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    blocks = list(perturbed_copies(base, 23, sigma=0.01, seed=7, chunk=10))
    assert [s for s, _ in blocks] == [0, 10, 20]
    allv = np.vstack([b for _, b in blocks])
    assert allv.shape == (23, 16) and allv.dtype == np.float32
    assert np.allclose(np.linalg.norm(allv, axis=1), 1.0, atol=1e-5)
    cos = np.sum(allv * base[np.arange(23) % 5], axis=1)
    assert cos.min() > 0.99 and not np.allclose(allv[:5], base)
    again = np.vstack([b for _, b in perturbed_copies(base, 23, sigma=0.01, seed=7, chunk=10)])
    assert np.array_equal(allv, again)
    exact = np.vstack([b for _, b in perturbed_copies(base, 5, sigma=0.0)])
    assert np.allclose(exact, base, atol=1e-6)
    with pytest.raises(GabaritoError):
        list(perturbed_copies(base, 0, sigma=0.1))


def test_exact_topk_matches_full_sort():
    rng = np.random.default_rng(3)
    m = rng.normal(size=(200, 8)).astype(np.float32)
    q = rng.normal(size=(7, 8)).astype(np.float32)
    got = exact_topk(m, q, 10, batch=3)
    want = np.argsort(-(q @ m.T), axis=1, kind="stable")[:, :10]
    assert np.array_equal(got, want)
    tie = np.ones((4, 2), dtype=np.float32)
    assert exact_topk(tie, np.ones(2, dtype=np.float32), 3).tolist() == [[0, 1, 2]]
    assert exact_topk(tie, np.ones(2, dtype=np.float32), 10).shape == (1, 4)
    with pytest.raises(GabaritoError):
        exact_topk(m, rng.normal(size=(2, 3)), 5)


def test_recall_extrapolate_throughput():
    r = recall_at_k([[1, 2, 3], [4, 5, 9]], [[1, 2, 3], [4, 5, 6]], k=3)
    assert r["mean"] == pytest.approx((1 + 2 / 3) / 2) and r["perfect"] == 1 and r["min"] == pytest.approx(2 / 3)
    with pytest.raises(GabaritoError):
        recall_at_k([[1]], [], k=1)
    assert extrapolate_seconds(100, 2.0, 1000, slope=1.0) == pytest.approx(20.0)
    assert extrapolate_seconds(100, 2.0, 1000, slope=2.0) == pytest.approx(200.0)
    assert throughput(10, 2.0) == 5.0 and throughput(0, 1.0) is None
