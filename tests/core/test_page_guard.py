"""No statistic is computed while a page builds: under the page's variable every statistic of the
library is one line naming the page; a worked example opens and closes its exception; a stored
statistic that is missing is one line, never a computation."""

from __future__ import annotations

import pytest

from gabarito.core import page_guard
from gabarito.core.signtest import sign_test
from gabarito.errors import GabaritoError
from gabarito.measure import agreement, stats


STATISTICS = [("a bootstrap interval", lambda: stats.bootstrap_ci([1.0, 0.0, 1.0], n_resamples=10)),
              ("a randomization test", lambda: stats.paired_randomization_test([1.0, 0.0], [0.0, 0.0], n_resamples=10)),
              ("a Holm correction", lambda: stats.holm({"a": 0.01, "b": 0.04})),
              ("a Wilson interval", lambda: stats.wilson(3, 10)),
              ("a sign test", lambda: sign_test([1.0, 0.0], [0.0, 1.0])),
              ("a kappa", lambda: agreement.cohen_kappa([0, 1, 2], [0, 1, 1])),
              ("a kappa interval", lambda: agreement.kappa_interval([0, 1, 2], [0, 1, 1], resamples=5))]


@pytest.mark.parametrize("what,call", STATISTICS, ids=[w for w, _ in STATISTICS])
def test_every_statistic_is_refused_while_a_page_builds(monkeypatch, what, call):
    call()  # outside a page build: computed
    monkeypatch.setenv(page_guard.PAGE_ENV, "notebooks/x.ipynb")
    with pytest.raises(GabaritoError, match=f"notebooks/x.ipynb: {what} computed while the page builds"):
        call()


def test_a_worked_example_opens_and_closes_its_exception(monkeypatch):
    monkeypatch.setenv(page_guard.PAGE_ENV, "notebooks/x.ipynb")
    page_guard.begin_example("o exemplo que o leitor roda")
    try:
        assert stats.holm({"a": 0.01, "b": 0.04}) == {"a": 0.02, "b": 0.04}
    finally:
        page_guard.end_example()
    with pytest.raises(GabaritoError, match="Holm"):
        stats.holm({"a": 0.01})
    with pytest.raises(GabaritoError, match="without begin_example"):
        page_guard.end_example()
    with pytest.raises(GabaritoError, match="needs its reason"):
        page_guard.begin_example("  ")


def test_a_missing_stored_statistic_is_one_line():
    assert page_guard.stored({"x": 1}, "x") == 1
    with pytest.raises(GabaritoError, match="no stored 'y'.*--statistics-only"):
        page_guard.stored({"x": 1}, "y")
