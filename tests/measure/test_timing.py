import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.timing import summarize, time_calls


def test_summarize_known_samples():
    result = summarize([100.0, 2.0, 4.0, 1.0, 3.0])
    assert result == {
        "n": 5,
        "mean": 22.0,
        "median": 3.0,
        "p95": pytest.approx(4.0 + 0.8 * 96.0),  # linear: position 0.95 * 4 = 3.8
        "min": 1.0,
        "max": 100.0,
    }


def test_summarize_even_count_median_and_single_sample():
    assert summarize([4.0, 1.0, 3.0, 2.0])["median"] == 2.5
    assert summarize([7.5]) == {"n": 1, "mean": 7.5, "median": 7.5, "p95": 7.5, "min": 7.5, "max": 7.5}
    with pytest.raises(GabaritoError):
        summarize([])


class FakeClock:
    """Advances by the next step on every reading."""

    def __init__(self, steps):
        self.now = 0.0
        self.steps = iter(steps)

    def __call__(self):
        self.now += next(self.steps)
        return self.now


def test_time_calls_with_fake_clock():
    calls = []
    # Readings alternate: start (after an idle gap of 1 s), then end (after the call's duration).
    durations = [0.010, 0.003, 0.020, 0.005]
    clock = FakeClock([step for d in durations for step in (1.0, d)])
    samples = time_calls(calls.append, ["a", "b"], repeat=2, warmup=3, clock=clock)
    assert calls == ["a", "b", "a", "a", "b", "a", "b"]  # three warmup calls, then two passes
    assert samples == pytest.approx([10.0, 3.0, 20.0, 5.0])
    assert summarize(samples)["median"] == pytest.approx(7.5)


def test_time_calls_real_clock_structure_and_errors():
    samples = time_calls(lambda x: x * 2, [1, 2, 3], repeat=2, warmup=0)
    assert len(samples) == 6 and all(s >= 0.0 for s in samples)
    with pytest.raises(GabaritoError):
        time_calls(print, [])
    with pytest.raises(GabaritoError):
        time_calls(print, [1], repeat=0)


def test_load_average_gives_three_rounded_non_negative_numbers():
    from gabarito.measure.timing import load_average

    loads = load_average()
    assert loads is not None and len(loads) == 3
    assert all(x >= 0 and round(x, 2) == x for x in loads)


def test_wait_for_quiet_polls_until_the_load_falls_and_gives_up_at_the_timeout():
    from gabarito.measure.timing import wait_for_quiet

    readings = iter([[2.0, 1, 1], [1.2, 1, 1], [0.4, 1, 1], [0.1, 1, 1]])
    slept = []
    assert wait_for_quiet(0.5, 60, poll_s=5, read=lambda: next(readings), sleep=slept.append) == [0.4, 1, 1]
    assert slept == [5, 5]
    busy = []
    assert wait_for_quiet(0.5, 10, poll_s=5, read=lambda: [3.0, 3, 3], sleep=busy.append) == [3.0, 3, 3]
    assert busy == [5, 5]  # gave up after the timeout and returned the last reading
    assert wait_for_quiet(0.5, 10, read=lambda: None, sleep=busy.append) is None
