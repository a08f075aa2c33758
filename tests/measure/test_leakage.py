import pytest

from gabarito.errors import GabaritoError
from gabarito.inputs.corpus import SEARCH_FIELDS, Concept
from gabarito.measure.leakage import (BANDS, band_index, band_labels, by_band, distribution,
                                      indexed_text, leakage, question_problems, shared_stems, stem,
                                      stems)


def test_stems_remove_stop_words_and_merge_inflections():
    # "The", "and" are stop words, "a" is too short; both forms of community share one stem
    assert stems("The communities and a community") == {"communiti"}
    # "between" and "these" are only in the Snowball stop list, not in the gold rule's list
    assert stems("between these regions") == {"region"}
    assert stem("turbines") == stem("turbine") == "turbin"


def test_leakage_hand_computed():
    q = "How do wind turbines affect communities?"   # stems: wind, turbin, affect, communiti
    text = "Community reaction to a turbine"          # stems: communiti, reaction, turbin
    assert shared_stems(q, text) == {"turbin", "communiti"}
    assert leakage(q, text) == 2 / 4
    assert leakage("Which policies work between regions?", "Between the regions") == 1 / 3
    assert leakage(q, q) == 1.0
    assert leakage(q, "nothing alike here") == 0.0


def test_question_without_content_word_has_zero_leakage():
    assert stems("how is it of the") == set()
    assert leakage("how is it of the", "how is it of the") == 0.0


def test_indexed_text_joins_every_search_field_in_order_and_splits_poles():
    c = Concept("Wind_Energy", {"description": "Turbines on hills.", "reasoning": "Aspect 5.",
                                "rgt_element_a": "Low_Cost", "rgt_element_b": "High_Cost",
                                "theoretical_significance": "0"})
    assert indexed_text(c) == "Wind Energy Turbines on hills. Aspect 5. Low_Cost High_Cost 0"
    assert indexed_text(c.search_fields()) == indexed_text(c)
    # the tokenizer splits on underscores, so a pole's words count
    assert shared_stems("is it cheap or low in cost", indexed_text(c)) == {"low", "cost"}
    with pytest.raises(GabaritoError, match="indexed fields missing: reasoning"):
        indexed_text({k: "" for k in SEARCH_FIELDS if k != "reasoning"})


def test_question_problems_name_words_stems_and_shared_limit():
    text = "Early Adoption First users of rooftop panels in villages."
    assert question_problems("Early_Adoption", "who installs rooftop kit first?") == []
    assert question_problems("Early_Adoption", "which early movers?") == ["repeats name words: early"]
    assert question_problems("Early_Adoption", "who are the adopters?") == [
        "repeats name stems: adopt (adopters)"]
    # disjoint: "rooftop" alone is allowed, "rooftop" + "villages" is not
    assert question_problems("Early_Adoption", "who puts kit on a rooftop?", text, 1) == []
    [problem] = question_problems("Early_Adoption", "rooftop kit in villages", text, 1)
    assert problem == ("shares 2 stems with the indexed text (at most 1): "
                       "rooftop (rooftop), villag (villages)")
    assert question_problems("X", "  ") == ["empty question"]
    with pytest.raises(GabaritoError, match="needs the concept's indexed text"):
        question_problems("X", "some question", None, 1)


def test_bands_are_half_open_except_the_last():
    assert BANDS == (0.0, 0.25, 0.5, 1.0)
    assert [band_index(v) for v in (0, 0.2499, 0.25, 0.4999, 0.5, 1.0)] == [0, 0, 1, 1, 2, 2]
    assert band_labels() == ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 1]"]
    for bad in (-0.01, 1.01):
        with pytest.raises(GabaritoError, match="outside the bands"):
            band_index(bad)
    with pytest.raises(GabaritoError, match="must increase"):
        band_index(0.3, (0, 0.5, 0.5, 1))


def test_by_band_means_outcomes_per_band():
    rows = by_band([0.0, 0.3, 0.3, 0.9], [1, 0, 1, 1])
    assert [(r["band"], r["n"], r["mean"]) for r in rows] == [
        ("[0, 0.25)", 1, 1.0), ("[0.25, 0.5)", 2, 0.5), ("[0.5, 1]", 1, 1.0)]
    assert by_band([0.9], [0])[0]["mean"] is None
    with pytest.raises(GabaritoError, match="2 values but 1 outcomes"):
        by_band([0.1, 0.2], [1])


def test_distribution_summary():
    d = distribution([0, 0.5, 0.25, 1])
    assert (d["n"], d["mean"], d["median"], d["min"], d["max"], d["zero"]) == (4, 0.4375, 0.375, 0, 1, 1)
    assert [b["n"] for b in d["bands"]] == [1, 1, 2]
    assert distribution([0.3, 0.1, 0.2])["median"] == 0.2
    with pytest.raises(GabaritoError, match="no values"):
        distribution([])


def test_leakage_summary_against_the_expected_and_the_best_wrong_concept():
    from gabarito.measure.leakage import leakage_summary

    texts = {"A": "wind turbines on hills", "B": "solar panels on roofs", "C": "wind farms"}
    rows = [  # q1: gold A first for bm25; q2: gold B, bm25 prefers C
        {"id": "q1", "question": "turbines in the wind", "gold": "A",
         "bm25": {"rank": 1, "top": ["A", "C"]}, "vec": {"rank": 2, "top": ["C", "A"]}},
        {"id": "q2", "question": "wind power on roofs", "gold": "B",
         "bm25": {"rank": 2, "top": ["C", "B"]}, "vec": {"rank": 1, "top": ["B"]}},
    ]
    out = leakage_summary(rows, ["bm25", "vec"], texts, wrong_from="bm25")
    q1, q2 = out["per_question"]
    assert q1["leakage"] == 1.0 and q1["wrong"] == "C" and q1["wrong_leakage"] == 0.5   # wind, turbin
    assert q2["leakage"] == 1 / 3 and q2["wrong"] == "C" and q2["wrong_leakage"] == 1 / 3  # wind, power, roof
    assert out["wrong_higher"] == 0 and out["expected"]["n"] == 2
    bands = {m: [b["mean"] for b in out["recall1_by_band"][m]] for m in ("bm25", "vec")}
    assert bands == {"bm25": [None, 0.0, 1.0], "vec": [None, 1.0, 0.0]}
