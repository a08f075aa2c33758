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


# --- freezing more files into an existing manifest -----------------------------------------

def test_freeze_more_adds_files_keeps_history_and_never_refreezes(tmp_path):
    from gabarito.inputs.gold import check_not_frozen, freeze_more

    manifest = tmp_path / "lock.json"
    a = _gold(tmp_path, [{"id": "a", "question": "first question", "gold": "X"}], "a.json")
    b = _gold(tmp_path, [{"id": "b", "question": "second question", "gold": "X"}], "b.json")
    first = freeze_more(manifest, [a], note="a first")
    assert list(first["files"]) == ["a.json"] and "history" not in first
    check_not_frozen(manifest, [b])  # b is not frozen yet: no error
    second = freeze_more(manifest, [b], note="then b")
    assert set(verify_frozen(manifest)) == {"a.json", "b.json"}
    assert second["files"]["a.json"] == first["files"]["a.json"]
    assert second["history"] == [{"frozen_at": first["frozen_at"], "note": "a first", "files": ["a.json"]}]
    with pytest.raises(GabaritoError, match="already frozen in lock.json"):
        freeze_more(manifest, [a])
    c = _gold(tmp_path, [{"id": "c", "question": "third question", "gold": "X"}], "c.json")
    a.write_text(a.read_text().replace("first", "edited"))
    with pytest.raises(GabaritoError, match="gold changed after it was frozen"):
        freeze_more(manifest, [c])
    assert "c.json" not in json.loads(manifest.read_text())["files"]


# --- the published gold (external) and the protocol sample ---------------------------------

PROTOCOLS = STUDY / "protocols"
SPEC = ROOT.parent / "shared" / "spec" / "000_published_gold.json"


def test_published_gold_is_frozen_verbatim_and_names_corpus_concepts(corpus_path):
    names = {c.name for c in load_synesis(corpus_path)}
    pairs = load_gold(STUDY / "questions_published.json", names)
    assert [p.id for p in pairs] == [f"p{i:02d}" for i in range(1, 41)]
    assert "questions_published.json" in verify_frozen(STUDY / "gold_protocols.lock.json")
    data = json.loads((STUDY / "questions_published.json").read_text(encoding="utf-8"))
    assert data["source"]["file"] == "000_82bcc069f111b0d2.txt"
    assert data["source"]["published_run"]["engine"].startswith("ArcadeDB 26.7.3")
    # the published concepts are the main sample's 40 (same seed)
    main = json.loads((STUDY / "sample.json").read_text(encoding="utf-8"))
    assert sorted(p.gold for p in pairs) == [c["name"] for c in main["concepts"]]
    if SPEC.exists():
        spec = json.loads(SPEC.read_text(encoding="utf-8"))
        assert [(p["question"], p["gold"], p["published_rank"]) for p in data["pairs"]] == [
            (q["question"], q["gold"], q["published_rank"]) for q in spec["questions"]]
        assert data["published"] == {"metrics": spec["published_metrics"],
                                     "latency_ms": spec["published_latency_ms"],
                                     "top1_overlap": spec["published_top1_overlap"]}


def _protocol_module(name):
    import importlib

    return importlib.import_module(f"studies.benchmark_rrf.protocols.{name}")


def test_protocol_sample_is_the_seeded_draw_of_unsampled_concepts(corpus_path):
    concepts = load_synesis(corpus_path)
    sample = json.loads((PROTOCOLS / "sample.json").read_text(encoding="utf-8"))
    used = {c["name"] for f in ("sample.json", "sample_extended.json")
            for c in json.loads((STUDY / f).read_text(encoding="utf-8"))["concepts"]}
    names = [c["name"] for c in sample["concepts"]]
    assert sample["seed"] == 20261203 and len(names) == 80 == sample["n"]
    assert names == draw_sample([c.name for c in concepts], 20261203, 80, exclude=used)
    assert not set(names) & used and sample["excluded_before_drawing"] == len(used)
    by_name = {c.name: c for c in concepts}
    assert all(c["fields"] == by_name[c["name"]].search_fields() for c in sample["concepts"])


def test_packets_are_what_the_sample_and_instructions_give_and_name_only_hides_descriptions():
    common = _protocol_module("protocol_common")
    sample = json.loads((PROTOCOLS / "sample.json").read_text(encoding="utf-8"))
    for filename, packet in common.packets(sample, PROTOCOLS).items():
        assert json.loads((PROTOCOLS / filename).read_text(encoding="utf-8")) == packet
    name_only = json.loads((PROTOCOLS / "packet_name_only.json").read_text(encoding="utf-8"))
    assert set(name_only) == {"protocol", "instructions", "checker", "theme", "concepts"}
    assert all(set(it) == {"id", "name"} for it in name_only["concepts"])
    assert [it["id"] for it in name_only["concepts"]] == [f"n{i:02d}" for i in range(1, 81)]
    disjoint = json.loads((PROTOCOLS / "packet_disjoint.json").read_text(encoding="utf-8"))
    assert [it["id"] for it in disjoint["concepts"]] == [f"d{i:02d}" for i in range(1, 81)]
    assert [it["name"] for it in disjoint["concepts"]] == [it["name"] for it in name_only["concepts"]]
    # the theme names none of the sampled concepts, and none of their descriptions' sentences
    theme = " " + " ".join(re.findall(r"[a-z]+", name_only["theme"].lower())) + " "
    for c in sample["concepts"]:
        assert f" {' '.join(re.findall(r'[a-z]+', c['search_name'].lower()))} " not in theme, c["name"]
        assert c["description"][:40].lower() not in name_only["theme"].lower()


# --- the writer's checker and the protocol freeze, on a tiny made-up study -----------------

def _tiny_study(tmp_path):
    """A study folder with two made-up concepts, real instructions, packets, and the published gold frozen."""
    import shutil

    from gabarito.inputs.gold import freeze_more

    common = _protocol_module("protocol_common")
    folder = tmp_path / "protocols"
    folder.mkdir(parents=True)
    for f in ("protocol_name_only.md", "protocol_disjoint.md", "theme.md"):
        shutil.copy(PROTOCOLS / f, folder / f)
    fields = {"Wind_Farm": ("Groups of turbines on hills near villages.", "Aspect 5: landscape."),
              "Grid_Tariff": ("Prices charged for using the electricity network.", "Aspect 11: money.")}
    concepts = [{"name": n, "search_name": n.replace("_", " "), "description": d,
                 "fields": {"search_name": n.replace("_", " "), "description": d, "reasoning": r,
                            "rgt_element_a": f"Low_{n}", "rgt_element_b": f"High_{n}",
                            "theoretical_significance": "0"}} for n, (d, r) in fields.items()]
    sample = {"corpus": "tiny", "corpus_sha256": "0" * 64, "concepts": concepts}
    (folder / "sample.json").write_text(json.dumps(sample), encoding="utf-8")
    for filename, packet in common.packets(sample, folder).items():
        (folder / filename).write_text(json.dumps(packet), encoding="utf-8")
    published = _gold(tmp_path, [{"id": "p01", "question": "what is on the hills", "gold": "Wind_Farm"}],
                      "questions_published.json")
    freeze_more(tmp_path / "gold_protocols.lock.json", [published])
    return folder


def _run(script, *args, cwd):
    import subprocess
    import sys

    return subprocess.run([sys.executable, str(PROTOCOLS / script), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=60)


def _draft(path, pairs):
    path.write_text(json.dumps([{"id": i, "question": q} for i, q in pairs]), encoding="utf-8")
    return path


GOOD_N = [("n01", "how do people react to big spinning generators on ridges"),
          ("n02", "what households pay for delivery of power through the wires")]
GOOD_D = [("d01", "how do people react to big spinning generators on ridges"),
          ("d02", "what households pay for delivery of power through the wires")]


def test_checker_passes_a_good_draft_and_reports_each_broken_rule(tmp_path):
    folder = _tiny_study(tmp_path)
    ok = _run("check_questions.py", "--protocol", "name_only", _draft(tmp_path / "n.json", GOOD_N),
              "--packet", folder / "packet_name_only.json", cwd=tmp_path)
    assert ok.returncode == 0 and "all 2 questions pass" in ok.stdout, ok.stdout + ok.stderr
    bad = _draft(tmp_path / "d.json", [("d01", "how do wind parks change the look of villages and hills"),
                                       ("d02", "what households pay for delivery of power through the wires")])
    out = _run("check_questions.py", "--protocol", "disjoint", bad, "--packet", folder / "packet_disjoint.json",
               cwd=tmp_path)
    assert out.returncode == 1
    assert "repeats name words: wind" in out.stdout
    assert ("shares 3 stems with the indexed text (at most 1): hill (hills), villag (villages), "
            "wind (wind)") in out.stdout
    assert "1 of 2 questions break a rule" in out.stdout
    missing = _run("check_questions.py", "--protocol", "name_only", _draft(tmp_path / "m.json", GOOD_N[:1]),
                   "--packet", folder / "packet_name_only.json", cwd=tmp_path)
    assert missing.returncode == 1 and "n02" in missing.stdout and "missing from the draft" in missing.stdout
    (tmp_path / "broken.json").write_text("[{", encoding="utf-8")
    err = _run("check_questions.py", "--protocol", "disjoint", tmp_path / "broken.json",
               "--packet", folder / "packet_disjoint.json", cwd=tmp_path)
    assert err.returncode == 2 and "broken.json: invalid JSON" in err.stderr and err.stderr.count("\n") == 1


def test_freeze_refuses_a_failing_draft_then_freezes_once_with_the_instructions(tmp_path):
    folder = _tiny_study(tmp_path)
    manifest = tmp_path / "gold_protocols.lock.json"
    before = manifest.read_text()
    args = ["--folder", folder, "--manifest", manifest]
    bad = _draft(tmp_path / "bad.json", [("d01", "wind on the hills near villages"), GOOD_D[1]])
    out = _run("freeze_protocols.py", "--disjoint", bad, "--disjoint-author", "writer B",
               "--name-only", _draft(tmp_path / "n.json", GOOD_N), "--name-only-author", "writer A",
               *args, cwd=tmp_path)
    assert out.returncode == 1 and "refusing to freeze disjoint" in out.stdout
    assert manifest.read_text() == before and not list(folder.glob("questions_*.json"))
    good = _run("freeze_protocols.py", "--disjoint", _draft(tmp_path / "d.json", GOOD_D),
                "--disjoint-author", "writer B", "--name-only", tmp_path / "n.json",
                "--name-only-author", "writer A", *args, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert set(verify_frozen(manifest)) == {"questions_published.json", "protocols/questions_name_only.json",
                                            "protocols/questions_disjoint.json"}
    for name, author in (("name_only", "writer A"), ("disjoint", "writer B")):
        gold = json.loads((folder / f"questions_{name}.json").read_text(encoding="utf-8"))
        assert gold["author"] == author and gold["protocol"] == name and gold["language"] == "en"
        assert gold["instructions"] == (PROTOCOLS / f"protocol_{name}.md").read_text(encoding="utf-8")
        assert [(p.id, p.gold) for p in load_gold(folder / f"questions_{name}.json")] == [
            (f"{name[0]}01", "Wind_Farm"), (f"{name[0]}02", "Grid_Tariff")]
    again = _run("freeze_protocols.py", "--name-only", tmp_path / "n.json", "--name-only-author", "writer A",
                 *args, cwd=tmp_path)
    assert again.returncode == 2 and "already frozen" in again.stderr


def test_freeze_refuses_without_the_published_gold_or_with_an_edited_packet(tmp_path):
    folder = _tiny_study(tmp_path)
    draft = _draft(tmp_path / "n.json", GOOD_N)
    (tmp_path / "questions_published.json").write_text('{"pairs": []}')
    out = _run("freeze_protocols.py", "--name-only", draft, "--name-only-author", "A", "--folder", folder,
               "--manifest", tmp_path / "gold_protocols.lock.json", cwd=tmp_path)
    assert out.returncode == 2 and "gold changed after it was frozen" in out.stderr
    folder2 = _tiny_study(tmp_path / "second")
    packet = json.loads((folder2 / "packet_name_only.json").read_text())
    packet["concepts"][0]["name"] = "Something Else"
    (folder2 / "packet_name_only.json").write_text(json.dumps(packet))
    out = _run("freeze_protocols.py", "--name-only", draft, "--name-only-author", "A", "--folder", folder2,
               "--manifest", tmp_path / "second" / "gold_protocols.lock.json", cwd=tmp_path)
    assert out.returncode == 2 and "packet differs" in out.stderr
