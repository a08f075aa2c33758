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


def test_pair_ids_are_counters_and_packets_keep_a_question_whole():
    from gabarito.inputs.pools import assessment_pairs, split_packets

    pool = {"q1": ["a", "b", "c"], "q2": ["d"], "q3": ["e", "f"]}
    pairs = assessment_pairs(pool, prefix="P")
    assert [p[0] for p in pairs] == ["P00001", "P00002", "P00003", "P00004", "P00005", "P00006"]
    packets = split_packets(pairs, 4)
    assert [[p[1] for p in pk] for pk in packets] == [["q1", "q1", "q1", "q2"], ["q3", "q3"]]
    assert sum(map(len, split_packets(pairs, 1))) == 6  # a question larger than a packet still fits alone
    with pytest.raises(GabaritoError):
        split_packets(pairs, 0)


def test_the_real_packets_leak_no_method_rank_or_expected_answer():
    """What the assessors received: only pair ids, questions, concept names and descriptions."""
    from pathlib import Path

    base = Path(__file__).resolve().parents[2] / "case-studies" / "judgments"
    packets = sorted((base / "packets").glob("packet_*.json"))
    assert packets
    for path in packets[:3]:
        data = json.loads(path.read_text())
        assert set(data) == {"packet", "guide", "n_pairs", "pairs"}
        assert all(set(p) == {"pair", "question", "concept", "description"} for p in data["pairs"])
    pool = json.loads((base / "pools" / "pool.json").read_text())
    assert all(set(q) == {"id", "question", "candidates"} for q in pool["questions"])


@pytest.mark.parametrize("content, message", [
    ("not json", "not a JSON list"),
    ('{"pair": "P1"}', "expected a JSON list"),
    ('[{"pair": "P1", "grade": 3}]', "record 1.*grade 3 is not one of"),
    ('[{"pair": "P1", "grade": 1}, {"pair": "P1", "grade": 1}]', "graded twice"),
    ('[{"pair": "P9", "grade": 1}]', "unknown pair 'P9'"),
    ('[{"pair": "P1", "grade": true}]', "grade True"),
    ('[{"pair": "P1", "grade": 1}]', "1 pair\\(s\\) without a grade, first 'P2'"),
])
def test_a_bad_grades_file_is_one_line_naming_file_and_record(tmp_path, content, message):
    from gabarito.inputs.pools import read_grades

    path = tmp_path / "grades.json"
    path.write_text(content)
    with pytest.raises(GabaritoError, match=message) as err:
        read_grades(path, ["P1", "P2"])
    assert "grades.json" in str(err.value) and "\n" not in str(err.value)


def test_good_grades_are_read():
    from gabarito.inputs.pools import read_grades
    import tempfile, pathlib

    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "g.json"
        p.write_text('[{"pair": "P2", "grade": 0}, {"pair": "P1", "grade": 2}]')
        assert read_grades(p, ["P1", "P2"]) == {"P1": 2, "P2": 0}


def test_pair_ids_can_continue_an_earlier_counter():
    from gabarito.inputs.pools import assessment_pairs

    assert [p[0] for p in assessment_pairs({"q": ["a", "b"]}, prefix="P", start=8747)] == ["P08748", "P08749"]


def test_unpooled_answers_are_the_expected_documents_no_pool_holds():
    from gabarito.inputs.pools import unpooled_answers

    pool = {"q1": ["a", "b"], "q2": ["c"]}
    assert unpooled_answers({"q1": "b", "q2": "z", "q3": "y"}, pool) == {"q2": "z", "q3": "y"}


def test_known_answers_hide_among_seeded_decoys_led_by_the_best_graded():
    from gabarito.inputs.pools import hide_known_answers

    pool = {"q1": ["a", "b", "c", "d", "e"], "q2": ["f", "g", "h"]}
    grades = {"q1": {"a": 0, "b": 2, "c": 0, "d": 1, "e": 0}, "q2": {"f": 0, "g": 0, "h": 1}}
    hidden, decoys = hide_known_answers({"q1": "k1", "q2": "k2"}, pool, grades, decoys=2, seed=7)
    assert decoys["q1"][0] == "b" and decoys["q2"][0] == "h"  # the first decoy has the question's top grade
    assert sorted(hidden["q1"]) == sorted(["k1", *decoys["q1"]]) and len(set(decoys["q1"])) == 2
    assert (hidden, decoys) == hide_known_answers({"q2": "k2", "q1": "k1"}, pool, grades, decoys=2, seed=7)
    spots = {hide_known_answers({"q1": "k1"}, pool, grades, decoys=3, seed=s)[0]["q1"].index("k1") for s in range(30)}
    assert len(spots) > 2  # the known answer's place is drawn, not fixed
    with pytest.raises(GabaritoError, match="'q2' has 3 judged candidate"):
        hide_known_answers({"q2": "k2"}, pool, grades, decoys=4, seed=7)
    with pytest.raises(GabaritoError, match="'e' has no grade"):
        hide_known_answers({"q1": "k1"}, pool, {"q1": {"a": 0, "b": 2, "c": 0, "d": 1}}, decoys=2, seed=7)
    with pytest.raises(GabaritoError, match="at least one decoy"):
        hide_known_answers({"q1": "k1"}, pool, grades, decoys=0, seed=7)
