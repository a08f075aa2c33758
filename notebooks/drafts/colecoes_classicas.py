# %% [raw]
# ---
# title: "Além de um corpus: coleções clássicas com julgamentos humanos"
# subtitle: "BM25, vetores densos e RRF em ADI, Cranfield, CISI, MEDLINE e NPL, e quanto custa crescer"
# lang: pt-BR
# ---

# %% [markdown]
# ## Por que outro capítulo
#
# O estudo principal julga a busca com perguntas escritas pelo próprio projeto, uma resposta certa
# por pergunta. O padrão da área são coleções em que pessoas leram os documentos e julgaram quais
# respondem a cada necessidade de informação. Cinco dessas coleções, das décadas de sessenta a
# oitenta, cabem nesta máquina. Aqui o mesmo pipeline roda nelas: os mesmos motores, as mesmas
# métricas, os mesmos testes. A pergunta é se as conclusões do estudo principal sobrevivem a
# julgamentos que não foram feitos por nós.

# %%
#| code-summary: "Mostrar código: carregar os resultados"
from pathlib import Path

import plotly.graph_objects as go
from IPython.display import HTML, Markdown, display

from gabarito.publish import charts
from gabarito.publish import formatting as report
from gabarito.inputs.collections import CRANFIELD_GRADES

BASE = Path("../case-studies/standard_collections")
res = report.load_results(BASE)  # recusa resultados calculados sobre outros julgamentos
cols = res["collections"]
NOMES = {"adi": "ADI", "cranfield": "Cranfield", "cisi": "CISI", "medline": "MEDLINE", "npl": "NPL"}
ORDEM = [c for c in NOMES if c in cols]
METODOS = list(res["methods"])
ROTULO = {"bm25_arcadedb_standard": "BM25 ArcadeDB (padrão)", "bm25_arcadedb_english": "BM25 ArcadeDB (inglês)",
          "bm25s": "bm25s (referência)", "dense_minilm": "Denso MiniLM", "dense_mpnet": "Denso mpnet",
          "dense_mpnet_arcadedb": "Denso mpnet (índice ArcadeDB)", "rrf_minilm": "RRF BM25 + MiniLM",
          "rrf_mpnet": "RRF BM25 + mpnet"}
L = lambda m: ROTULO.get(m, m)
MEDIDAS = list(res["measures"])

# %% [markdown]
# ## As coleções

# %%
#| code-summary: "Mostrar código: tabela das coleções"
linhas = [[NOMES[c], cols[c]["n_documents"], cols[c]["n_queries"], cols[c]["n_judged"], cols[c]["excluded"]["count"],
           "graduado" if cols[c]["graded"] else "binário"] for c in ORDEM]
display(HTML(report.html_table(["Coleção", "Documentos", "Consultas", "Com julgamento", "Excluídas", "Relevância"],
                               linhas, align=["l", "r", "r", "r", "r", "l"])))
display(Markdown("Consultas sem nenhum documento julgado relevante ficam fora das médias e são contadas acima."))

# %% [markdown]
# ### A escala de Cranfield
#
# O arquivo de julgamentos de Cranfield usa códigos em que o menor número é o **mais** relevante,
# e um código especial marca o documento de onde a pergunta foi tirada, que não é um julgamento de
# relevância. Para o nDCG, que espera "maior é melhor", os códigos foram convertidos assim:

# %%
#| code-summary: "Mostrar código: a conversão de Cranfield"
display(HTML(report.html_table(["Código no cranqrel", "Ganho usado no nDCG", "Significado"],
                               [[k, v, CRANFIELD_GRADES.labels.get(k, "")] for k, v in CRANFIELD_GRADES.items()],
                               align=["r", "r", "l"])))
display(Markdown("Notas do carregador, por coleção:\n\n" + "\n".join(
    f"- **{NOMES[c]}**: " + "; ".join(cols[c]["notes"][:4]) for c in ORDEM if cols[c]["notes"])))

# %% [markdown]
# ## Os métodos
#
# Os mesmos do estudo principal, e mais dois para controle: o BM25 do ArcadeDB com dois
# analisadores (o padrão e o de inglês, que reduz palavras ao radical), uma implementação
# independente de BM25 (bm25s) como referência, dois modelos densos e a fusão RRF do melhor BM25
# com cada modelo denso, fundindo o top-100.

# %%
#| code-summary: "Mostrar código: descrição dos métodos"
display(HTML(report.html_table(["Método", "O que é"], [[L(m), d] for m, d in res["methods"].items()])))

# %% [markdown]
# ## Resultados por coleção

# %%
#| code-summary: "Mostrar código: nDCG@10 por coleção"
#| fig-cap: "nDCG@10 por coleção e método, com intervalo de confiança de 95% (bootstrap)."
fig = go.Figure()
for i, m in enumerate(METODOS):
    vals = [cols[c]["metrics"][m]["nDCG@10"] for c in ORDEM]
    lo = [v - cols[c]["ci95"][m]["nDCG@10"][0] for v, c in zip(vals, ORDEM)]
    hi = [cols[c]["ci95"][m]["nDCG@10"][1] - v for v, c in zip(vals, ORDEM)]
    fig.add_trace(go.Bar(x=[NOMES[c] for c in ORDEM], y=vals, name=L(m), marker_color=charts.PALETTE[i % len(charts.PALETTE)],
                         error_y=dict(type="data", array=hi, arrayminus=lo, thickness=1)))
fig.update_layout(template="plotly_white", barmode="group", height=460, yaxis=dict(title="nDCG@10", range=[0, 1]),
                  legend=dict(orientation="h", y=-0.15), margin=dict(l=10, r=10, t=30, b=10))
fig.show()

# %%
#| code-summary: "Mostrar código: tabelas completas"
for c in ORDEM:
    mm, ci = cols[c]["metrics"], cols[c]["ci95"]
    linhas = []
    for m in METODOS:
        linhas.append([L(m)] + [f"{report.num(mm[m][x])} {report.ci(ci[m][x])}" for x in MEDIDAS])
    display(Markdown(f"**{NOMES[c]}** ({cols[c]['n_judged']} consultas julgadas)"))
    display(HTML(report.html_table(["Método"] + MEDIDAS, linhas, align=["l"] + ["r"] * len(MEDIDAS))))

# %% [markdown]
# ## Significância
#
# Para cada coleção, cada par de métodos foi comparado consulta a consulta com o teste de
# aleatorização pareado; os valores-p foram corrigidos pelo método de Holm para todas as
# comparações da coleção. O tamanho do efeito é o *d* de Cohen para dados pareados (a diferença
# média dividida pelo desvio das diferenças). A matriz mostra, para o nDCG@10, o valor-p corrigido;
# as células escuras são as diferenças que sobrevivem à correção.

# %%
#| code-summary: "Mostrar código: matriz de significância"
#| fig-cap: "Valor-p de Holm (nDCG@10) para cada par de métodos, por coleção; escuro = significativo a 5%."
for c in ORDEM:
    p = {(t["a"], t["b"]): t["p_holm"] for t in cols[c]["tests"]["nDCG@10"]}
    z = [[(p.get((a, b)) if (a, b) in p else p.get((b, a))) if a != b else None for b in METODOS] for a in METODOS]
    fig = go.Figure(go.Heatmap(z=z, x=[L(m) for m in METODOS], y=[L(m) for m in METODOS], zmin=0, zmax=0.1,
                               colorscale=[[0, "#0E7490"], [0.5, "#A5F3FC"], [1, "#F8FAFC"]],
                               text=[[report.pvalue(v) if v is not None else "" for v in row] for row in z],
                               texttemplate="%{text}", hovertemplate="%{y} × %{x}: p Holm %{z:.3f}<extra></extra>"))
    fig.update_layout(template="plotly_white", height=420, title=NOMES[c], margin=dict(l=10, r=10, t=40, b=10))
    fig.show()

# %% [markdown]
# ## A conclusão do estudo principal vale aqui?
#
# O estudo principal perguntava se a fusão ganha dos dois métodos isolados. Para cada coleção, a
# resposta abaixo usa a fusão com o modelo mpnet (o mesmo do estudo principal) contra o BM25 que
# entrou na fusão e contra o mpnet sozinho, no nDCG@10 e no MAP@100, com o teste corrigido.

# %%
#| code-summary: "Mostrar código: a resposta, coleção por coleção"
def teste(c, a, b, medida):
    for t in cols[c]["tests"][medida]:
        if {t["a"], t["b"]} == {a, b}:
            sinal = 1 if t["a"] == a else -1
            return sinal * t["mean_diff"], t["p_holm"], sinal * t["dz"]
    return None

itens = []
for c in ORDEM:
    bm = cols[c]["rrf_bm25_input"]["chosen"]
    partes = []
    for medida in ("nDCG@10", "AP@100"):
        frases = []
        for outro in (bm, "dense_mpnet"):
            r = teste(c, "rrf_mpnet", outro, medida)
            if r is None:
                continue
            d, p, dz = r
            veredito = ("ganha" if d > 0 else "perde") + (" (significativo)" if p < 0.05 else " (não significativo)")
            frases.append(f"{veredito} de {L(outro)} por {report.num(d)} (p Holm {report.pvalue(p)}, d {report.num(dz, 2)})")
        partes.append(f"{medida}: " + "; ".join(frases))
    itens.append(f"- **{NOMES[c]}**: " + ". ".join(partes) + ".")
display(Markdown("\n".join(itens)))

# %% [markdown]
# ## Paridade do BM25: o ArcadeDB contra o bm25s
#
# Se o BM25 do banco é o modelo de Robertson e Zaragoza, uma implementação independente com a mesma
# tokenização e os mesmos parâmetros deve devolver quase as mesmas listas. A meta era uma diferença
# de nDCG@10 de no máximo meio centésimo.

# %%
#| code-summary: "Mostrar código: paridade"
linhas = []
for c in ORDEM:
    p = cols[c]["parity"]
    linhas.append([NOMES[c], p["n_queries"], report.num(p["mean_jaccard"]), f"{p['identical_topk']} de {p['n_queries']}",
                   report.num(p["ndcg_a"]), report.num(p["ndcg_b"]), report.num(p["ndcg_diff"], 4),
                   "sim" if p["target_met"] else "não"])
display(HTML(report.html_table(["Coleção", "Consultas", "Jaccard médio do top-10", "Top-10 idêntico",
                                "nDCG@10 ArcadeDB", "nDCG@10 bm25s", "Diferença", "Meta atingida"], linhas,
                               align=["l", "r", "r", "r", "r", "r", "r", "c"])))

# %% [markdown]
# ## O índice vetorial do banco contra a busca exata

# %%
#| code-summary: "Mostrar código: recall do índice aproximado"
linhas = [[NOMES[c], report.num(cols[c]["ann"]["recall@10"]["mean"])] for c in ORDEM]
display(HTML(report.html_table(["Coleção", "Recall@10 do LSM_VECTOR contra a busca exata"], linhas, align=["l", "r"])))

# %% [markdown]
# ## Custo e escala
#
# Um script de desempenho, separado do estudo, mede o que custa indexar e consultar à medida que o
# acervo cresce: ADI, Cranfield e NPL de verdade, e uma escala sintética para o índice vetorial
# (os vetores do NPL replicados com uma pequena perturbação). Cada etapa sobe um servidor novo,
# mede a carga, a montagem do grafo vetorial (a primeira consulta depois da carga), a latência das
# consultas depois do aquecimento, a memória do processo Java e o recall do índice aproximado.

# %%
#| code-summary: "Mostrar código: as coleções reais"
esc = report.load_json(BASE / "scaling.json")
real = esc["real"]
linhas = []
for c, r in real.items():
    lat = r["latency_ms"]
    linhas.append([NOMES.get(c, c), r["n_docs"], r["n_tokens"], report.num(r["ingest_s"], 2) + " s",
                   report.num(r["vector_build_s"], 2) + " s", report.ms(lat["http_floor"]["median"]),
                   f"{report.ms(lat['bm25']['median'])} / {report.ms(lat['bm25']['p95'])}",
                   f"{report.ms(lat['knn']['median'])} / {report.ms(lat['knn']['p95'])}",
                   report.num(r["memory_mb"]["after_build"]["rss_mb"], 0) + " MB", report.num(r["ann_recall"]["mean"])])
display(HTML(report.html_table(["Coleção", "Documentos", "Palavras", "Carga", "Grafo vetorial", "Piso HTTP",
                                "BM25 mediana / p95", "kNN mediana / p95", "Memória", "Recall@10 ANN"], linhas,
                               align=["l"] + ["r"] * 9)))

# %%
#| code-summary: "Mostrar código: como cada custo cresce"
#| fig-cap: "Custos contra o tamanho do acervo, em escala log-log; a inclinação da reta ajustada diz como o custo cresce."
NOMES_FIT = {"ingest_s": "carga (s)", "vector_build_s": "grafo vetorial (s)", "bm25_median_ms": "BM25, mediana (ms)",
             "knn_median_ms": "kNN, mediana (ms)", "rss_after_build_mb": "memória (MB)"}
fig = go.Figure()
for i, (k, nome) in enumerate(NOMES_FIT.items()):
    f = esc["fits"].get(k)
    if not f:
        continue
    xs, ys = zip(*f["points"])
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers+lines", name=f"{nome}: inclinação {report.num(f['slope'], 2)}",
                             marker_color=charts.PALETTE[i]))
fig.update_layout(template="plotly_white", height=440, xaxis=dict(type="log", title="documentos (ou vetores)"),
                  yaxis=dict(type="log", title="custo"), legend=dict(orientation="h", y=-0.2),
                  margin=dict(l=10, r=10, t=20, b=10))
fig.show()
display(Markdown("Uma inclinação perto de 1 quer dizer que o custo cresce na proporção do acervo; perto de 0, "
                 "que quase não cresce. " + esc["fits"]["note"]))

# %%
#| code-summary: "Mostrar código: a escala sintética do índice vetorial"
linhas = []
for n, s in esc["synthetic"].items():
    lat = s["latency_ms"]
    for nome, chave, rk in (("padrão", "knn_default", "default"), ("efSearch alto", "knn_ef200", "ef200")):
        if chave in lat:
            linhas.append([s["n_docs"], nome, report.num(s["ingest_s"], 1) + " s", report.num(s["vector_build_s"], 1) + " s",
                           f"{report.ms(lat[chave]['median'])} / {report.ms(lat[chave]['p95'])}",
                           report.num(s["ann_recall"][rk]["mean"]), report.num(s["memory_mb"]["after_build"]["rss_mb"], 0) + " MB"])
display(HTML(report.html_table(["Vetores", "Busca", "Carga", "Grafo", "kNN mediana / p95", "Recall@10", "Memória"],
                               linhas, align=["r", "l", "r", "r", "r", "r", "r"])))
display(Markdown("Como se ajusta a busca: " + esc["provenance"]["engine"]["efsearch"]["query_time"]
                 + ". " + esc["provenance"]["engine"]["efsearch"]["default_when_unset"] + "."))
for n, s in esc.get("skipped", {}).items():
    display(Markdown(f"**{n} vetores: não medido.** Motivo registrado pelo script: {s['reason']}."))

# %% [markdown]
# ### Lado a lado, na mesma execução
#
# O banco responde pela rede (HTTP local) e guarda, indexa e serve muitos usuários; uma biblioteca
# dentro do processo não tem nada disso, e por isso é mais rápida. A tabela mostra de quanto é a
# diferença, medida na mesma execução.

# %%
#| code-summary: "Mostrar código: consultas por segundo"
linhas = []
for c, r in list(real.items()) + [(f"sintético {n}", s) for n, s in esc["synthetic"].items()]:
    sb = r.get("side_by_side", {})
    if "bm25" in sb:
        linhas.append([NOMES.get(c, c), "BM25", report.num(sb["bm25"]["arcadedb_http_qps"], 0),
                       report.num(sb["bm25"]["bm25s_in_process_qps"], 0), report.num(sb["bm25"]["ratio_bm25s_over_arcadedb"], 1) + "×"])
    if "knn" in sb:
        linhas.append([NOMES.get(c, c), "kNN", report.num(sb["knn"]["arcadedb_http_qps"], 0),
                       report.num(sb["knn"]["numpy_exact_qps"], 0), report.num(sb["knn"]["ratio_numpy_over_arcadedb"], 1) + "×"])
display(HTML(report.html_table(["Acervo", "Busca", "ArcadeDB (consultas/s)", "Em processo (consultas/s)", "Razão"],
                               linhas, align=["l", "l", "r", "r", "r"])))

# %% [markdown]
# ## Quando uma máquina não basta
#
# Nada muda no código: o mesmo estudo aponta para um servidor ArcadeDB externo (um cluster, por
# exemplo) com uma opção.
#
# ```bash
# export GABARITO_ARCADEDB_USER=root GABARITO_ARCADEDB_PASSWORD=...
# .venv/bin/python case-studies/standard_collections/run_study.py --arcadedb-url http://cluster:2480
# ```
#
# A documentação do ArcadeDB recomenda, para escalar consultas, uma configuração de alta
# disponibilidade com pelo menos três servidores e um balanceador de carga na frente ("Run
# ArcadeDB", docs.arcadedb.com), e os mantenedores descrevem a replicação embutida como baseada em
# consenso Raft, em que cada escrita espera a confirmação da maioria dos nós (discussão 4363 do
# repositório ArcadeData/arcadedb). Nada disso foi medido aqui: esta máquina tem um único servidor
# e não alcança outra.
#
# ## E os números publicados?
#
# Estas coleções aparecem em muitos artigos, mas com protocolos diferentes (campos do documento,
# radicalização, lista de palavras vazias, métrica e profundidade, tratamento das consultas sem
# julgamento). Não encontramos uma fonte que publique nDCG@10 com o mesmo protocolo deste capítulo,
# e por isso não pusemos números de terceiros ao lado dos nossos: uma comparação entre protocolos
# diferentes diria mais sobre os protocolos que sobre os sistemas.
#
# ## Reproduzir
#
# ```bash
# GABARITO_DATA_MIRROR=../shared/datasets .venv/bin/python case-studies/standard_collections/run_study.py
# .venv/bin/python case-studies/standard_collections/bench_scaling.py
# ```
