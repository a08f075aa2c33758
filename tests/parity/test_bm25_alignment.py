"""The memory engine's BM25 beside ArcadeDB's (issue 42, item 5): where they differ, and the help that says so."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.memory import BM25, arcadedb_bm25

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"d1": "cat cat cat dog", "d2": "dog dog dog cat", "d3": "fish"}


def test_arcadedb_bm25_counts_a_repeated_question_word_once():
    each, once = BM25(DOCS, stop=frozenset()), arcadedb_bm25(DOCS)
    # "dog dog cat": per occurrence the dog-heavy d2 wins by more; once, d1 and d2 tie exactly
    assert once.query_terms("Dog dog cat") == ["dog", "cat"]
    assert each.query_terms("Dog dog cat") == ["dog", "dog", "cat"]
    s_each, s_once = each.scores("dog dog cat"), once.scores("dog dog cat")
    assert s_once[0] == pytest.approx(s_once[1]) and s_each[1] > s_each[0]
    # a question without repeats ranks the same; ArcadeDB keeps the constant k1 + 1
    assert once.scores("dog cat") == pytest.approx(each.scores("dog cat") * 2.2)
    with pytest.raises(GabaritoError):
        BM25(DOCS, repeated_terms="twice")


def test_cli_help_names_the_reference_engine_and_the_difference():
    out = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "ArcadeDB's FULL_TEXT index is the reference" in text
    assert "each distinct question word once" in text and "same top 10 for every question" in text
    assert "no stop words, no stemming; the same on both engines" in text


def test_committed_alignment_measurement_shows_the_aligned_engine_equal_to_arcadedb():
    data = json.loads((ROOT / "case-studies" / "peers" / "bm25_alignment.json").read_text(encoding="utf-8"))
    assert data["reference"] == "arcadedb"
    aligned = data["agreement"]["memory_aligned"]
    assert aligned["identical_topk"] == aligned["n_queries"] == data["questions"]
    assert aligned["max_rel_score_diff"] < 1e-5 and aligned["rr_differs"] == []
    before = data["agreement"]["memory_before"]
    assert before["identical_topk"] < before["n_queries"] and data["questions_with_a_repeated_word"] > 0
