"""The page of one evaluation run (``relatorio.html`` in the run folder ``gabarito evaluate`` wrote).

Built from the run record (``run.json``): the summary from the scorer's typed result
(:class:`~gabarito.measure.report.Report`, the record's ``report`` block: each measure's mean and
95% interval), the per-question spreadsheet, the errors by type and severity, the top scores and
"no answer" thresholds where questions without an answer exist (all from
:mod:`gabarito.evaluation.findings`, which the site's evaluate chapter reads too), and the run's
settings and provenance. Tables through :func:`gabarito.publish.tables.html_table`, figures
as inline SVG (:mod:`gabarito.publish.svg`), numbers through :mod:`gabarito.publish.formatting`; the
page is one self-contained file (:mod:`gabarito.publish.standalone`).
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.evaluation import findings
from gabarito.evaluation.paired import verified
from gabarito.hashing import atomic_write_bytes
from gabarito.measure.report import Report
from gabarito.publish import labels, standalone, svg
from gabarito.publish import formatting as fmt
from gabarito.publish.formatting import Html, code, text
from gabarito.publish.tables import html_table
from gabarito.study.integrity import record as record_written
from gabarito.study.records import now_iso

#: The page's file name in the run folder.
PAGE = "relatorio.html"
#: The name of the run's one method in its report (:data:`gabarito.evaluation.rows.METHOD`).
METHOD = "run"
#: Hit or miss at the top 1, as the spreadsheet shows it.
MARK = {True: Html('<span class="acerto">acertou</span>'), False: Html('<span class="erro">errou</span>'),
        None: "—"}


#: How each kind of measure reads from 0 to 1 ("k" is its cutoff), under the summary's chart.
SCALE = {
    "hit": "Acerto@{k}: a fração das perguntas com um documento certo {top} (0 = nunca há um; 1 = sempre há).",
    "RR": "MRR@{k}: o inverso da posição do primeiro documento certo (1 = sempre em 1º lugar; 1/2 = em 2º; 0 = "
          "nenhum certo {top}).",
    "nDCG": "nDCG@{k}: quão perto da ideal está a ordem {top}, os mais relevantes antes (1 = a ordem ideal; "
            "0 = nenhum relevante ali).",
    "AP": "MAP@{k}: a média, por pergunta, da precisão em cada documento relevante achado {top}, sobre todos "
          "os relevantes (1 = todos eles antes de qualquer irrelevante; 0 = nenhum achado).",
    "R": "Recall@{k}: a fração dos documentos relevantes que está {top} (1 = todos).",
    "P": "Precisão@{k}: a fração dos documentos {top} que é relevante (1 = todos relevantes).",
}


def scale_notes(measures) -> Html:
    """One line per kind of measure shown: how it reads from 0 to 1 (:data:`SCALE`)."""
    from gabarito.core.measures import Measure

    seen: dict[tuple[str, int | None], str] = {}
    for m in measures:
        try:
            parsed = Measure.parse(m, loose=True)
        except GabaritoError:
            continue
        k = parsed.cutoff
        top = "na lista toda" if k is None else "no 1º lugar" if k == 1 else f"entre os {k} primeiros"
        seen.setdefault((parsed.kind, k), SCALE[parsed.kind].format(k=k or "", top=top))
    items = "".join(f"<li>{text(line)}</li>" for line in seen.values())
    return Html(f'<ul class="gabarito-scale">{items}</ul>') if items else Html("")


def axis_note(measures) -> str:
    """What the bar chart's axis says: the accuracies' reading when every measure is one, else a
    pointer to the notes of :func:`scale_notes` (nDCG, MAP and recall are not "always right")."""
    if all(str(m).startswith("hit@") for m in measures):
        return "0 = nunca acerta · 1 = sempre acerta"
    return "de 0 a 1: como ler cada medida, logo abaixo"


def depth_text(record: dict) -> str:
    """How deep the run's lists are, in words: the documents each holds (fewer only where the search
    found no more), or, for a run written before it was recorded, the chunks searched."""
    ranked = record.get("ranked_lists") or {}
    if ranked.get("depth") is None:
        chunks = ranked.get("chunk_depth") or (record.get("config") or {}).get("chunk_depth")
        return f"não registrada ({fmt.integer(chunks)} trechos)" if chunks else "não registrada"
    out = fmt.integer(ranked["depth"])
    if ranked.get("shortest") is not None and ranked["shortest"] < ranked["depth"]:
        out += f" (a mais curta tem {fmt.integer(ranked['shortest'])}: a busca não achou mais)"
    return out


def run_report(record: dict) -> Report | None:
    """The run's :class:`Report` (None: a run whose judgments the rows could not be scored on)."""
    block = record.get("report")
    return Report.from_dict(block) if block else None


def summary_section(record: dict) -> list[str]:
    """Each measure's mean and 95% interval (from the report), with the site's bar chart."""
    report, s = run_report(record), record["summary"]
    out = ["<h2>Resumo</h2>",
           f"<p>{fmt.plural(s['n_queries'], 'pergunta', 'perguntas')}: {fmt.integer(s['n_answerable'])} com resposta "
           f"no acervo, {fmt.integer(s['n_unanswerable'])} sem. As médias abaixo valem para as perguntas com resposta; "
           f"o intervalo de 95% vem de reamostrar as perguntas. Documentos em cada lista ordenada, a profundidade "
           f"de todas as medidas: {text(depth_text(record))}.</p>"]
    if report is None:
        rows = [[labels.measure_label(key), fmt.num(s[key]["value"]), fmt.ci(s[key]["ci95"])]
                for key in ("top1", "top3", "top5", "mrr") if s.get(key)]
        return out + [html_table(["Medida", "Média", "Intervalo de 95%"], rows, align=["l", "r", "r"])]
    measures = list(report.measures)
    rows = [[labels.measure_label(m), fmt.num(report.mean(METHOD, m)), fmt.ci(report.interval(METHOD, m))]
            for m in measures]
    out.append(html_table(["Medida", "Média", "Intervalo de 95%"], rows, align=["l", "r", "r"], table_id="resumo"))
    block = report.to_dict(per_query=False)
    out.append(svg.metrics_bars(block, [METHOD], measures, labels={METHOD: "Esta execução"},
                                axis_note=axis_note(measures)))
    out += ["<p>Como ler cada medida, de 0 a 1:</p>", scale_notes(measures)]
    return out


#: what the type and severity columns say for a question whose evaluation record names none
BLANK = {"type": "sem tipo", "severity": "sem gravidade"}


def _term(kind: str, value: object) -> Html:
    """A question's type or severity as the page shows it; none given reads ``sem tipo``, never an
    empty chip."""
    if value is None or not str(value).strip():
        return text(BLANK[kind])
    return standalone.term_or_text(kind, value)


def _returned(row: dict) -> Html:
    items = "".join(f"<li>{text(d)} ({fmt.num(sc, 3)})</li>" for d, sc in row["returned"])
    return Html(f'<ol class="gabarito-returned">{items}</ol>') if items else Html("—")


def spreadsheet_section(record: dict) -> list[str]:
    """One row per question: what was expected, what came back (with ranks), hit or miss."""
    k = int(record["config"]["k"])
    measured = list(record.get("measures") or [])
    rows = []
    for r in findings.spreadsheet(record["per_query"]):
        expected = ", ".join(r["expected"]) if r["expected"] else "(nenhum: sem resposta no acervo)"
        rows.append([r["query"], _term("type", r["type"]), _term("severity", r["severity"]), expected, _returned(r),
                     MARK[r["hits"][1]], fmt.rank(r["rank"]) if r["answerable"] else "—",
                     *(fmt.num(r["measures"].get(m)) if r["measures"].get(m) is not None else "—" for m in measured)])
    header = ["Pergunta", "Tipo", "Gravidade", "Esperado", f"Voltou (os {fmt.integer(findings.SHOWN)} primeiros, "
              "escore)", "1º lugar", f"Posição do esperado (top-{fmt.integer(k)})",
              *(labels.measure_label(m) for m in measured)]
    return ["<h2>Pergunta por pergunta</h2>",
            f"<p>O que cada pergunta esperava e o que voltou, na ordem. Uma posição “—” numa pergunta com "
            f"resposta quer dizer que nenhum documento esperado ficou entre os {fmt.integer(k)} primeiros.</p>",
            html_table(header, rows, table_id="perguntas", align=["l", "l", "l", "l", "l", "c", "r", *"r" * len(measured)],
                       min_width={0: "14em", 4: "14em"})]


def _error_table(rows: list[dict], key: str, order) -> Html:
    head = "Tipo" if key == "type" else "Gravidade"
    body = [[_term(key, r[key]), r["n"], fmt.pct(r["top1"]), fmt.pct(r["top5"]), r["misses"]]
            for r in findings.error_rows(rows, key, order)]
    return html_table([head, "Perguntas com resposta", "Acerto no top-1", "Acerto no top-5", "Erros no top-1"],
                      body, align=["l", "r", "r", "r", "r"], table_id=f"erros-{key}")


def errors_section(record: dict) -> list[str]:
    rows = record["per_query"]
    out = ["<h2>Erros por tipo e gravidade</h2>"]
    for key, title in (("type", "Por tipo de pergunta"), ("severity", "Por gravidade")):
        order = findings.groups_in(rows, key, list(labels.TERMS[key]))
        out += [f"<h3>{title}</h3>", _error_table(rows, key, order)]
    return out


def no_answer_section(record: dict) -> list[str]:
    """Top scores of the questions with and without an answer, the thresholds' table and the
    threshold chosen on one half and checked on the other; nothing when every question has one."""
    rows = record["per_query"]
    if not findings.has_unanswerable(rows):
        return []
    scores = findings.top_scores(rows)
    fig = svg.score_boxes([("Esta execução", scores["answerable"], scores["unanswerable"])],
                          score_title="Escore do 1º resultado")
    out = ["<h2>Perguntas sem resposta: um limiar no escore</h2>",
           "<p>O escore do primeiro resultado, nas perguntas com e sem resposta no acervo. Abaixo de um limiar, a "
           "busca pode dizer que não encontrou em vez de dar uma resposta errada.</p>", fig]
    if record["config"].get("method") == "hybrid":
        out.append('<p class="gabarito-warning">Nesta execução o escore é o de uma fusão RRF: mede posições, não '
                   "semelhança, e serve mal para um limiar.</p>")
    table = [[fmt.num(o["threshold"], 3), f"{fmt.integer(o['useful_kept'])} de {fmt.integer(o['useful_total'])}",
              f"{fmt.integer(o['wrong_answered'])} de {fmt.integer(o['wrong_total'])}",
              f"{fmt.integer(o['unanswerable_through'])} de {fmt.integer(o['unanswerable_total'])}"]
             for o in findings.threshold_rows(rows)]
    out.append(html_table(["Limiar", "Respostas certas mantidas", "Respostas erradas ainda dadas",
                           "Sem resposta que passam"], table, align=["r", "r", "r", "r"], table_id="limiares"))
    v = findings.validated_threshold(rows)
    a, b = v["chosen_on_first_half"], v["on_second_half"]
    out.append(f"<p>Escolhendo, numa metade das perguntas, o menor limiar que deixa passar no máximo "
               f"{fmt.pct(v['max_through'], 0)} das perguntas sem resposta, chega-se a {fmt.num(a['threshold'], 3)}. "
               f"Na outra metade, esse limiar mantém {fmt.integer(b['useful_kept'])} de "
               f"{fmt.integer(b['useful_total'])} respostas certas e deixa passar {fmt.integer(b['unanswerable_through'])} "
               f"de {fmt.integer(b['unanswerable_total'])} perguntas sem resposta.</p>")
    return out


def provenance_items(record: dict) -> list[tuple[str, object]]:
    """(Portuguese name, value) of the run's settings and where it came from."""
    from gabarito.evaluation.compare import DETAILS, VARIABLES

    items: list[tuple[str, object]] = [("Execução", code(record["run_id"], whole=True)),
                                       ("Data", f"{fmt.date_pt(record['date'])}, {record['date'][11:19]} UTC")]
    if record["config"].get("label"):
        items.append(("Rótulo", record["config"]["label"]))
    for name in standalone.used_settings(record, (*VARIABLES, *DETAILS)):
        if name == "depth" or (name == "rerank_fuse" and not record["config"].get("reranker")):
            continue  # the depth in words below; no reader ran: nothing was fused with the first stage
        value = standalone.setting_value(name, record)
        if str(value) != "—":
            items.append((standalone.setting_name(name), value))
    ranked = record.get("ranked_lists") or {}
    items.append(("Documentos por lista (run.trec)", depth_text(record)))
    if ranked.get("depth") is not None and ranked.get("chunk_depth"):
        items.append(("Trechos buscados por pergunta", fmt.integer(ranked["chunk_depth"])))
    git = record.get("git") or {}
    commit = code(fmt.short_hash(git.get("commit")), whole=True) if git.get("commit") else text("—")
    items.append(("Commit", commit + (text(" (com mudanças não gravadas)") if git.get("dirty") else text(""))))
    items += [("Versão do gabarito", code(record.get("gabarito_version", "—"))),
              ("Documentos", code(record.get("documents_path") or "—")),
              ("Perguntas", code(record.get("evaluation_path") or "—")),
              ("Impressão digital das perguntas", code(fmt.short_hash(record.get("evaluation_sha256")), whole=True)),
              ("Máquina", code(f"{(record.get('machine') or {}).get('platform', '—')}, Python "
                               f"{(record.get('machine') or {}).get('python', '—')}"))]
    return items


def build(record: dict) -> str:
    """The whole page of one run record."""
    s = record["summary"]
    title = f"Relatório da execução {record['run_id']}"
    body = [f"<h1>{text(title)}</h1>",
            f"<p>Execução de {text(fmt.date_pt(record['date']))} sobre "
            f"{fmt.plural(record.get('n_documents') or 0, 'documento', 'documentos')} e "
            f"{fmt.plural(s['n_queries'], 'pergunta', 'perguntas')}. Os arquivos ao lado desta página "
            f"(<code>results.csv</code>, <code>run.json</code>, <code>run.trec</code>, <code>qrels.trec</code>) "
            f"guardam os mesmos números; <code>run.trec</code> guarda as listas ordenadas até a profundidade "
            f"buscada (documentos por pergunta: {text(depth_text(record))}).</p>",
            *summary_section(record), *spreadsheet_section(record), *errors_section(record),
            *no_answer_section(record), "<h2>Configuração e procedência</h2>",
            standalone.definition_list(provenance_items(record))]
    return standalone.page(title, body)


def write(folder: str | Path) -> Path:
    """Write ``folder/relatorio.html`` from the folder's ``run.json`` (checked against its
    manifest) and record it in the folder's manifest; returns its path."""
    folder = Path(folder)
    path = verified(folder / "run.json")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GabaritoError(f"cannot read the run ({exc})", path=path) from None
    out = atomic_write_bytes(folder / PAGE, build(record).encode("utf-8"))
    record_written(out, when=now_iso())
    return out
