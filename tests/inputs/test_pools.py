import json

import pytest

from gabarito.errors import GabaritoError
from gabarito.inputs.pools import build_pool, pool_sources, write_pool

RUNS = {
    "bm25": {"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("x", 1.0)]},
    "vector": {"q1": [("c", 0.9), ("d", 0.8)], "q2": [("y", 0.7), ("x", 0.6)]},
}


def test_pool_is_the_deduplicated_union_of_the_top_depth():
    pool = build_pool(RUNS, ["q1", "q2"], depth=2, seed=5)
    assert sorted(pool["q1"]) == ["a", "b", "c", "d"] and sorted(pool["q2"]) == ["x", "y"]
    assert build_pool(RUNS, ["q1"], depth=1, seed=5)["q1"] in (["a", "c"], ["c", "a"])


def test_order_is_seeded_and_independent_of_method_order():
    one = build_pool(RUNS, ["q1"], depth=3, seed=5)
    two = build_pool(dict(reversed(list(RUNS.items()))), ["q1"], depth=3, seed=5)
    assert one == two
    orders = {tuple(build_pool(RUNS, ["q1"], depth=3, seed=s)["q1"]) for s in range(20)}
    assert len(orders) > 1  # the seed, not the retrieval order, decides


def test_pool_file_names_no_method_and_sources_are_kept_apart(tmp_path):
    pool = build_pool(RUNS, ["q1", "q2"], depth=2, seed=1)
    path = write_pool(tmp_path / "pool.json", pool, {"q1": "first?", "q2": "second?"}, meta={"depth": 2})
    text = path.read_text()
    assert "bm25" not in text and "vector" not in text and "score" not in text and "rank" not in text
    data = json.loads(text)
    assert [q["id"] for q in data["questions"]] == ["q1", "q2"]
    assert pool_sources(RUNS, pool, depth=2)["q1"]["c"] == ["vector"]
    with pytest.raises(GabaritoError):
        write_pool(tmp_path / "p.json", pool, {"q1": "only one"}, meta={})
