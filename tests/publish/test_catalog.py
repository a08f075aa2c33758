"""Notes as codes: every note the committed results hold renders in Portuguese; anything else stops the build."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from gabarito.errors import GabaritoError
from gabarito.notes import CodedError, error_note, is_note, note
from gabarito.publish import catalog, labels

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"
#: Words of the English notes the studies used to record; none may reach a page.
ENGLISH = re.compile(r"\b(the|and|of|with|from|is|are|was|not|first stage|after|reused|could|when|used|kept|"
                     r"rows|grade|query|document text|exceeds|slope|tokens counted|chunk level|measured)\b", re.I)
GOLD = ("questions.json", "questions_extended.json", "questions_published.json")


def _portuguese(text: str) -> bool:
    plain = re.sub(r"`[^`]*`", "", text)  # code is not prose
    return not ENGLISH.search(plain)


def _notes(value, out: list) -> list:
    if is_note(value):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _notes(v, out)
    elif isinstance(value, list):
        for v in value:
            _notes(v, out)
    return out


def committed_notes() -> list[tuple[str, dict]]:
    """Every structured note in the committed results files (one per distinct note)."""
    seen: dict[str, tuple[str, dict]] = {}
    for manifest in sorted(STUDIES.glob("*/results.sha256.json")):
        for name in json.loads(manifest.read_text(encoding="utf-8"))["files"]:
            path = manifest.parent / name
            if path.suffix != ".json":  # a recorded input a page quotes (the assessors' guide): no notes
                continue
            for n in _notes(json.loads(path.read_text(encoding="utf-8")), []):
                seen.setdefault(json.dumps(n, sort_keys=True), (f"{manifest.parent.name}/{name}", n))
    return list(seen.values())


NOTES = committed_notes()


def test_the_committed_results_hold_notes_of_many_codes():
    codes = {n["code"] for _, n in NOTES}
    assert len(codes) >= 40 and "error.hub_unreachable" in codes and "rerank.gold_chunk_level" in codes


@pytest.mark.parametrize("where,value", NOTES, ids=[f"{w}:{n['code']}" for w, n in NOTES])
def test_every_committed_note_renders_in_portuguese(where, value):
    out = labels.note(value)
    assert out and _portuguese(out), (where, out)


def test_no_english_note_is_left_in_the_committed_results():
    """The strings the migration rewrote appear nowhere in the results files any more."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("migrate_notes", REPO / "scripts" / "migrate_notes_to_codes.py")
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    PLACES, TABLE, _slots = migration.PLACES, migration.TABLE, migration._slots
    for rel, places in PLACES.items():
        data = json.loads((STUDIES / rel).read_text(encoding="utf-8"))
        for path in places:
            for parent, key, where in _slots(data, path):
                assert is_note(parent[key]), (rel, where, parent[key])
        text = (STUDIES / rel).read_text(encoding="utf-8")
        left = [s for s, n in TABLE.items() if len(s) > 20 and "message" not in n  # an error keeps its text
                and json.dumps(s, ensure_ascii=False) in text]
        assert not left, (rel, left)


def test_an_unknown_code_fails_once_naming_it():
    with pytest.raises(GabaritoError, match="'rerank.something_new'") as err:
        labels.note({"code": "rerank.something_new", "n": 3})
    assert "catalog.py" in str(err.value) and "\n" not in str(err.value)


def test_a_plain_english_string_fails():
    for text in ("Gold is chunk level.", "score descending, then doc id ascending", ""):
        with pytest.raises(GabaritoError, match="not a structured note"):
            labels.note(text)
    with pytest.raises(GabaritoError, match="not a structured note"):
        labels.error("We couldn't connect to 'https://huggingface.co' to load the files")


def test_a_missing_field_names_the_code_and_the_field():
    with pytest.raises(GabaritoError, match=r"'engine.rrf' lacks the field 'depth'"):
        labels.note({"code": "engine.rrf", "k": 60})


def test_numbers_and_names_come_from_the_fields():
    out = labels.note(note("collection.unjudged_queries", n=1036, total=2112, ids=["7", "9"], more=True))
    assert out.startswith("1.036 das 2.112 consultas") and "(números: 7, 9, ...)" in out
    assert "1 das 1 consultas" in labels.note(note("collection.unjudged_queries", n=1, total=1, ids=["7"],
                                                   more=False))
    assert "Denso e5" in labels.note(note("rerank.better_dense_choice", method="dense e5"))
    assert "k1 = 1,2 e b = 0,75" in labels.note(note("method.bm25_arcadedb_standard", k1=1.2, b=0.75))
    skipped = labels.note(note("scaling.skipped_budget", ingest_s=906.4, build_s=1038.2, total_min=32.44,
                               budget_min=15.0, from_vectors=100000, first_ingest_s=91.2, first_build_s=104.0,
                               slope=1.0, fitted_slope=None, rss_mb=1629.6, heap_gb=4.0))
    assert "906 s de carga" in skipped and "100.000 vetores" in skipped and "a ajustada, —" in skipped


def test_the_frozen_gold_texts_stand_for_codes():
    for name in GOLD:
        path = STUDIES / "benchmark_rrf" / name
        if not path.is_file():
            continue
        gold = json.loads(path.read_text(encoding="utf-8"))
        for field in ("author", "method", "relevance"):
            if gold[field] in catalog.GOLD_TEXTS:
                assert _portuguese(labels.gold_note(gold[field]))
    with pytest.raises(GabaritoError, match="frozen gold"):
        labels.gold_note("Written by someone else.")


def test_errors_are_recorded_as_codes():
    class LocalEntryNotFoundError(Exception):
        pass

    try:
        try:
            raise LocalEntryNotFoundError("offline")
        except LocalEntryNotFoundError as inner:
            raise OSError("We couldn't connect to 'https://huggingface.co' ...") from inner
    except OSError as exc:
        recorded = error_note(exc)
    assert recorded["code"] == "error.hub_unreachable" and "couldn" not in labels.error(recorded)
    coded = error_note(CodedError("gone", note("error.trained_reader_missing", reader="heldout-npl-0a1b")))
    assert "heldout-npl-0a1b" in labels.error(coded) and _portuguese(labels.error(coded))
    unknown = error_note(KeyError("x"))
    assert unknown["code"] == "error.unclassified" and unknown["error_type"] == "KeyError"
    with pytest.raises(GabaritoError, match="error.unclassified"):
        labels.error(unknown)  # a new kind of failure stops the build


def test_the_trained_reader_lookup_raises_coded_errors(tmp_path):
    from gabarito.retrieval.rerank.training import trained_reader_folder

    with pytest.raises(CodedError) as err:
        trained_reader_folder("trained:npl", tmp_path / "rerankers.json")
    assert err.value.note["code"] == "error.no_training_results"
    (tmp_path / "rerankers.json").write_text('{"folds": {}}', encoding="utf-8")
    with pytest.raises(CodedError) as err:
        trained_reader_folder("trained:npl", tmp_path / "rerankers.json")
    assert err.value.note == {"code": "error.no_heldout_fold", "fold": "npl"}
    assert "`npl`" in labels.error(error_note(err.value))


def test_a_loader_records_codes():
    from gabarito.inputs.collections.glasgow import parse_glasgow

    notes: list = []
    parse_glasgow(".I 1\n.T\nsame title\n.A\nX\n.A\nY\n.T\n same  title\n.W\nabs\n.A\nstray\n.B\nbib\n",
                  "toy.all", "TABW", notes=notes)
    assert notes == [{"code": "collection.field_inside_abstract", "source": "toy.all", "line": 12, "record": "1",
                      "field": ".A"},
                     {"code": "collection.field_repeated", "source": "toy.all", "record": "1", "field": ".T"}]
    assert all(_portuguese(labels.note(n)) for n in notes)


def test_a_study_note_factory_produces_codes():
    run_rerank = pytest.importorskip("studies.reranking.run_rerank")
    bench = SimpleNamespace(chunks=[object()] * 89, better="dense e5")
    made = run_rerank.notes(bench, {"measured": False})
    assert all(is_note(n) for n in made) and made[-1]["code"] == "rerank.cross_encoder_not_measured"
    assert made[1] == {"code": "rerank.corpus_smaller_than_depth", "n_chunks": 89,
                       "segmentation": run_rerank.MAIN_SPEC, "depth": run_rerank.DEPTH}
    assert all(_portuguese(labels.note(n)) for n in made)


def test_note_codes_are_checked_when_made():
    assert note("engine.rrf", k=60, depth=100) == {"code": "engine.rrf", "k": 60, "depth": 100}
    for bad in ("Engine RRF", "rrf", "engine.", "engine.RRF"):
        with pytest.raises(GabaritoError, match="not a note code"):
            note(bad)


def test_note_markup_becomes_html_for_tables():
    assert catalog.to_html("campo `<title>` e **isto**") == "campo <code>&lt;title&gt;</code> e <strong>isto</strong>"
    assert catalog.to_html("``a`b`` e `c`") == "<code>a`b</code> e <code>c</code>"
    assert str(labels.note_html(note("collection.query_text_abstract"))) == "texto da consulta: o campo <code>.W</code>"


def test_the_catalog_and_the_labels_do_not_import_each_other():
    text = (REPO / "gabarito" / "publish" / "catalog.py").read_text(encoding="utf-8")
    assert not [m for m in re.findall(r"^\s*(?:from|import) ([\w.]+)", text, re.M) if "labels" in m]
    assert not (REPO / "gabarito" / "publish" / "notes.py").exists()


#: Notes the committed results do not hold (another run's branches, the frozen gold, errors).
OTHER_NOTES = [
    note("cost.tiktoken_from_package", encodings=["o200k_base", "cl100k_base"]),
    note("engine.arcadedb_external"),
    note("error.name_not_resolved", host="huggingface.co"),
    note("error.no_heldout_fold", fold="npl"),
    note("error.no_training_results"),
    note("error.trained_reader_missing", reader="heldout-npl-0a1b"),
    note("gold.author_claude"),
    note("gold.method_from_description", file="sample.json"),
    note("gold.relevance_sampled_concept"),
    note("rerank.cross_encoder_not_attempted"),
    note("rerank.cross_encoder_not_measured"),
    note("rerank.no_cross_encoder_loaded", tried=["cross-encoder/x", "trained:npl"]),
]


def test_every_catalog_code_is_exercised():
    exercised = {n["code"] for _, n in NOTES} | {n["code"] for n in OTHER_NOTES}
    assert exercised == set(catalog.NOTES)


@pytest.mark.parametrize("value", OTHER_NOTES, ids=[n["code"] for n in OTHER_NOTES])
def test_the_other_codes_render_in_portuguese(value):
    out = labels.note(value)
    assert out and _portuguese(out), out


#: What a note must never tell a reader: the computer that built the site, the project's targets, its time
#: limits (the reader's world only: what was not measured and why, in neutral words).
BUILD_WORDS = re.compile(r"\bmáquina\b|\blimite de \d+ minutos\b|\bmeta\b|\bnão é alcançável\b|\bMAX_LOAD\b", re.I)


@pytest.mark.parametrize("value", [n for _, n in NOTES] + OTHER_NOTES,
                         ids=[n["code"] for _, n in NOTES] + [n["code"] for n in OTHER_NOTES])
def test_no_note_speaks_of_the_build(value):
    out = labels.note(value)
    assert not BUILD_WORDS.search(out), out


def test_the_notes_once_about_the_build_keep_their_facts_in_the_readers_words():
    arcadedb = labels.note(note("peer.bm25_arcadedb", k1=1.2, b=0.75))
    assert "no mesmo computador" in arcadedb and "HTTP" in arcadedb
    hub = labels.note(note("error.hub_unreachable", host="huggingface.co"))
    assert "`huggingface.co`" in hub and "cópia local" in hub
    skipped = labels.note(note("scaling.skipped_budget", ingest_s=906.4, build_s=1038.2, total_min=32.44,
                               budget_min=15.0, from_vectors=100000, first_ingest_s=91.2, first_build_s=104.0,
                               slope=1.0, fitted_slope=None, rss_mb=1629.6, heap_gb=4.0))
    assert skipped.startswith("não medido") and "32,4 min" in skipped and "15" not in skipped
