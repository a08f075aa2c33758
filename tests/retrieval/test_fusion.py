import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.fusion import rrf


def test_rrf_hand_computed():
    fused = rrf([["a", "b", "c"], ["b", "c", "d"]], rrf_k=60)
    expected = {
        "a": 1 / 61,
        "b": 1 / 62 + 1 / 61,
        "c": 1 / 63 + 1 / 62,
        "d": 1 / 63,
    }
    assert [doc for doc, _ in fused] == ["b", "c", "a", "d"]
    for doc, score in fused:
        assert score == pytest.approx(expected[doc], abs=1e-15)


def test_rrf_small_k_changes_weights():
    fused = dict(rrf([["a", "b"]], rrf_k=0))
    assert fused == {"a": 1.0, "b": 0.5}


def test_rrf_ties_broken_by_doc_id_whatever_the_input_order():
    one = rrf([["y", "x"], ["x", "y"]])
    other = rrf([["x", "y"], ["y", "x"]])
    assert one == other
    assert [doc for doc, _ in one] == ["x", "y"]
    assert one[0][1] == one[1][1]


def test_rrf_depth_truncates_each_list_first():
    rankings = [["a", "b", "c"], ["c"]]
    full = rrf(rankings)
    assert [doc for doc, _ in full] == ["c", "a", "b"]
    assert dict(full)["c"] == pytest.approx(1 / 63 + 1 / 61)
    cut = rrf(rankings, depth=2)
    # c now only counts from the second list: tied with a at 1/61, a wins on id.
    assert cut == [("a", 1 / 61), ("c", 1 / 61), ("b", 1 / 62)]
    assert "c" not in dict(rrf([["a", "b", "c"]], depth=2))


def test_rrf_duplicate_in_one_list_counts_once_at_best_rank():
    assert dict(rrf([["a", "b", "a"]])) == {"a": 1 / 61, "b": 1 / 62}


def test_rrf_empty_and_bad_arguments():
    assert rrf([]) == []
    assert rrf([[], []]) == []
    with pytest.raises(GabaritoError):
        rrf([["a"]], rrf_k=-1)
    with pytest.raises(GabaritoError):
        rrf([["a"]], depth=0)
    with pytest.raises(GabaritoError):
        rrf(["abc"])


def _two_engines(gold_rank: int) -> list[list[str]]:
    """Engine A finds the gold at ``gold_rank``; engine B returns ten other documents."""
    a = [f"a{i:02d}" for i in range(1, 11)]
    a[gold_rank - 1] = "gold"
    b = [f"b{i:02d}" for i in range(1, 11)]
    return [a, b]

