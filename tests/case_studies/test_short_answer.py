"""The home page's short answer (studies.standard_collections.short_answer): which of its endings is
written is chosen from the data -- no loss anywhere, a loss on the headline measure, a loss only on
another measure (with the link to the chapter) -- and the committed results give the sentence the
chapter's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studies.standard_collections import findings as CF
from studies.standard_collections import short_answer

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "case-studies" / "standard_collections" / "results.json"


@pytest.fixture(scope="module")
def results():
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def _with(monkeypatch, **changes):
    real = CF.essentials
    monkeypatch.setattr(CF, "essentials", lambda res: {**real(res), **changes})


def test_committed_sentence_names_the_loss_on_another_measure_and_links_the_chapter(results):
    ess = CF.essentials(results)
    text = short_answer.sentence(results, RESULTS)
    assert ess["worse_elsewhere"], "the committed results have a loss on another measure"
    assert short_answer.CHAPTER in text and "noutra medida" in text
    assert text.count('class="gabarito-num"') == sum(min(len(ess[s]["by_gain"]), 2) for s in ("vs_bm25", "vs_dense"))


def test_no_loss_anywhere_says_so_without_a_link(results, monkeypatch):
    _with(monkeypatch, worse_any=[], worse_elsewhere=[])
    text = short_answer.sentence(results, RESULTS)
    assert "em nenhuma coleção ficam abaixo" in text and short_answer.CHAPTER not in text


def test_a_loss_on_the_headline_measure_names_the_collection(results, monkeypatch):
    _with(monkeypatch, worse_any=["medline"], worse_elsewhere=[])
    text = short_answer.sentence(results, RESULTS)
    assert "ficam abaixo de uma das duas, com diferença que resiste, em MEDLINE" in text
    assert "em nenhuma coleção" not in text


def test_fewer_wins_against_meaning_search_say_apenas(results, monkeypatch):
    ess = CF.essentials(results)
    _with(monkeypatch, vs_dense={**ess["vs_dense"], "better": [], "by_gain": []},
          vs_bm25={**ess["vs_bm25"], "better": ["adi"]})
    text = short_answer.sentence(results, RESULTS)
    assert "; da só por significado, em apenas " in text and ", e da só por significado em" not in text
