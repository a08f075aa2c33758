import pytest
from sklearn.metrics import cohen_kappa_score

from gabarito.errors import GabaritoError
from gabarito.measure.agreement import cohen_kappa, confusion, kappa_interval

A = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
B = [0, 1, 1, 1, 2, 0, 2, 0, 2, 2]


def test_hand_computed_two_by_two():
    # 10 items: agree yes 4, agree no 3, a-yes/b-no 2, a-no/b-yes 1
    a = [1] * 4 + [0] * 3 + [1] * 2 + [0]
    b = [1] * 4 + [0] * 3 + [0] * 2 + [1]
    po = 0.7
    pe = 0.6 * 0.5 + 0.4 * 0.5  # a says yes 6/10, b says yes 5/10
    assert cohen_kappa(a, b, labels=(0, 1)) == pytest.approx((po - pe) / (1 - pe))
    assert confusion(a, b, labels=(0, 1)) == [[3, 1], [2, 4]]


@pytest.mark.parametrize("weights", [None, "linear"])
def test_agrees_with_scikit_learn(weights):
    assert cohen_kappa(A, B, weights=weights) == pytest.approx(cohen_kappa_score(A, B, weights=weights, labels=[0, 1, 2]))


def test_undefined_and_bad_input():
    assert cohen_kappa([2, 2, 2], [2, 2, 2]) is None  # one grade for everything: no chance agreement to beat
    assert cohen_kappa([0, 1, 2], [0, 1, 2]) == 1.0
    with pytest.raises(GabaritoError):
        confusion([0, 1], [0])
    with pytest.raises(GabaritoError, match="grade 3"):
        confusion([0, 3], [0, 1])
    with pytest.raises(GabaritoError, match="weights"):
        cohen_kappa(A, B, weights="quadratic-ish")


def test_interval_brackets_kappa_and_is_seeded():
    one = kappa_interval(A, B, resamples=500, seed=3)
    two = kappa_interval(A, B, resamples=500, seed=3)
    assert one == two and one["n"] == 10
    low, high = one["ci95"]
    assert low <= one["kappa"] <= high
