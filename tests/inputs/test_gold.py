import json
import re
from pathlib import Path

import pytest

from gabarito.inputs.corpus import load_synesis
from gabarito.errors import GabaritoError
from gabarito.inputs.gold import content_words, draw_sample, freeze, load_gold, rule_violations, verify_frozen

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "benchmark_rrf"
SOURCE = ROOT.parent / "shared" / "datasets" / "social_acceptance" / "SOURCE.txt"


def test_content_words_and_rule():
    assert content_words("How do the early adopters act?") == {"early", "adopters", "act"}
    assert rule_violations("Technology_Uptake", "How fast does technology spread?") == {"technology"}
    assert rule_violations("Early_Adoption", "Who moves first?") == set()


def test_sample_reproduces_the_40_names_of_source_txt(corpus_path, mirror):
    names = [c.name for c in load_synesis(corpus_path)]
    text = (mirror / "social_acceptance" / "SOURCE.txt").read_text(encoding="utf-8")
    listed = text.split("gives exactly:")[1].split("Quirks")[0]
    expected = re.findall(r"[A-Za-z_]+", listed)
    assert len(expected) == 40
    assert draw_sample(names, 20260817, 40) == expected
    # the committed sample is that draw, with descriptions
    sample = json.loads((STUDY / "sample.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in sample["concepts"]] == expected
    ext = json.loads((STUDY / "sample_extended.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in ext["concepts"]] == draw_sample(names, ext["seed"], 160, exclude=expected)


def test_sample_ignores_file_order():
    names = [f"c{i}" for i in range(50)]
    assert draw_sample(names, 7, 5) == draw_sample(list(reversed(names)), 7, 5)


def test_committed_gold_keeps_the_rule_and_names_corpus_concepts(corpus_path):
    names = {c.name for c in load_synesis(corpus_path)}
    main = load_gold(STUDY / "questions.json", names)
    ext = load_gold(STUDY / "questions_extended.json", names)
    assert len(main) == 40 and len(ext) >= 160
    assert not {p.gold for p in main} & {p.gold for p in ext}
    assert verify_frozen(STUDY / "gold.lock.json")


def _gold(tmp_path, pairs, name="q.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"pairs": pairs}), encoding="utf-8")
    return p


@pytest.mark.parametrize("pairs, words", [
    ([{"id": "a", "question": "   ", "gold": "X"}], "record 1 (a): empty question"),
    ([{"id": "a", "question": "what is it", "gold": "Nope"}], "'Nope' is not in the corpus"),
    ([{"id": "a", "question": "q one here", "gold": "X"}, {"id": "a", "question": "q two", "gold": "X"}],
     "duplicate id"),
    ([{"id": "a", "question": "tell me about alpha things", "gold": "Alpha"}], "repeats content words"),
])
def test_bad_gold_records(tmp_path, pairs, words):
    with pytest.raises(GabaritoError) as err:
        load_gold(_gold(tmp_path, pairs), {"X", "Alpha"})
    assert words in str(err.value) and "q.json" in str(err.value) and "\n" not in str(err.value)


def test_gold_not_an_object(tmp_path):
    p = tmp_path / "q.json"
    p.write_text("[1, 2]")
    with pytest.raises(GabaritoError, match="expected an object"):
        load_gold(p)


def test_lucene_syntax_question_is_valid_gold(tmp_path):
    q = 'What is "this" (really)? a: [b] AND c* ~ d^2 \\ e/f'
    [pair] = load_gold(_gold(tmp_path, [{"id": "a", "question": q, "gold": "X"}]), {"X"})
    assert pair.question == q


def test_freeze_then_edit_is_refused(tmp_path):
    g = _gold(tmp_path, [{"id": "a", "question": "some question", "gold": "X"}])
    freeze(tmp_path / "gold.lock.json", [g])
    assert verify_frozen(tmp_path / "gold.lock.json") == {"q.json": verify_frozen(tmp_path / "gold.lock.json")["q.json"]}
    g.write_text(g.read_text().replace("some", "another"))
    with pytest.raises(GabaritoError, match="gold changed after it was frozen"):
        verify_frozen(tmp_path / "gold.lock.json")


def test_missing_manifest(tmp_path):
    with pytest.raises(GabaritoError, match="freeze the gold before searching"):
        verify_frozen(tmp_path / "gold.lock.json")


def test_stratified_split_is_reproducible_and_keeps_strata():
    from gabarito.inputs.gold import stratified_split

    items = [{"id": i, "type": t} for i, t in enumerate(["a"] * 10 + ["b"] * 6 + ["c"] * 2)]
    tune, held = stratified_split(items, lambda x: x["type"], 0.3, seed=7)
    assert stratified_split(items, lambda x: x["type"], 0.3, seed=7) == (tune, held)
    assert sorted(x["id"] for x in tune + held) == list(range(18))
    assert [sum(x["type"] == t for x in held) for t in "abc"] == [3, 2, 1]
    assert stratified_split(items, lambda x: x["type"], 0.3, seed=8) != (tune, held)
