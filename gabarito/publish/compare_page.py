"""The page of a comparison of evaluation runs (``gabarito compare RUN RUN… [--out FILE.html]``).

The first run is the baseline, as in :mod:`gabarito.evaluation.compare`. The page shows the runs
side by side (each run's own :class:`~gabarito.measure.report.Report` from its ``run.json``: means
and 95% intervals, with the site's bar chart), the paired tests of each run against the baseline
(:func:`gabarito.evaluation.compare.compare_runs` on every measure tested: difference, its interval,
wins and losses, the p corrected by Holm over every measure x pair and the verdict word of
:mod:`gabarito.publish.verdicts`), the questions that changed
(:func:`gabarito.evaluation.findings.changed_questions`) and every setting that differs
(:func:`gabarito.evaluation.compare.config_differences`). One self-contained file
(:mod:`gabarito.publish.standalone`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gabarito.evaluation import findings
from gabarito.evaluation.compare import DETAILS, VARIABLES, compare_runs, config_differences
from gabarito.hashing import atomic_write_bytes
from gabarito.measure.report import Comparison, Report
from gabarito.publish import labels, run_page, standalone, svg, verdicts
from gabarito.publish import formatting as fmt
from gabarito.publish.formatting import Html, code, text
from gabarito.publish.tables import html_table

#: How a changed question is named.
CHANGE = {"gained": "passou a acertar no 1º lugar", "lost": "deixou de acertar no 1º lugar",
          "moved": "o esperado mudou de posição"}


def run_name(i: int, record: dict) -> str:
    """``#1``, ``#2``, ... with the run's label when it has one."""
    label = (record.get("config") or {}).get("label")
    return f"#{i + 1} ({label})" if label else f"#{i + 1}"


def runs_section(records: Sequence[dict]) -> list[str]:
    head = ["Execução", "Data", "Método", "Motor", "Modelo", "Documentos por lista", "Perguntas com resposta"]
    rows = [[Html(f"{text(run_name(i, r))} {code(r['run_id'], whole=True)}"), fmt.date_pt(r["date"]),
             standalone.setting_value("method", r), standalone.setting_value("engine", r),
             standalone.setting_value("model", r), run_page.depth_text(r), r["summary"]["n_answerable"]]
            for i, r in enumerate(records)]
    return ["<h2>As execuções</h2>", "<p>A primeira é a referência: cada outra é comparada com ela, pergunta "
            "por pergunta, nas mesmas perguntas. Nenhuma medida lê uma lista mais funda do que a da execução mais "
            "rasa.</p>",
            html_table(head, rows, table_id="execucoes", align=["l", "l", "l", "l", "l", "r", "r"])]


def side_by_side(records: Sequence[dict]) -> list[str]:
    """Each run's means and intervals on the measures every run's report holds."""
    reports = [Report.from_dict(r["report"]) if r.get("report") else None for r in records]
    if any(rep is None for rep in reports):
        return []
    measures = [m for m in reports[0].measures if all(m in rep.measures for rep in reports[1:])]
    names = [run_name(i, r) for i, r in enumerate(records)]
    rows = [[labels.measure_label(m)] + [f"{fmt.num(rep.mean('run', m))} {fmt.ci(rep.interval('run', m))}"
                                         for rep in reports] for m in measures]
    block = {"metrics": {n: dict(rep.metrics["run"]) for n, rep in zip(names, reports)},
             "ci95": {n: dict(rep.ci["run"]) for n, rep in zip(names, reports)}}
    fig = svg.metrics_bars(block, names, measures, labels={n: n for n in names}, axis_note=run_page.axis_note(measures))
    return ["<h2>Lado a lado</h2>", "<p>Média de cada execução nas perguntas com resposta, com o intervalo de "
            "95%.</p>", html_table(["Medida", *names], rows, align=["l"] + ["r"] * len(names), table_id="lado-a-lado"),
            fig, "<p>Como ler cada medida, de 0 a 1:</p>", run_page.scale_notes(measures)]


def _comparison(measure: str, t: dict) -> Comparison:
    """A test row of :func:`compare_runs` (other run against the baseline) as a :class:`Comparison`
    of the other run against the baseline, its ``p_holm`` over every measure x pair."""
    return Comparison(measure=measure, a=t.get("b", ""), b=t.get("a", ""), mean_a=t["mean_b"], mean_b=t["mean_a"],
                      diff=t["mean_diff"], ci=tuple(t["ci95_diff"]) if t.get("ci95_diff") else None,
                      p=t["p_randomization"], p_holm=t["p_holm"], p_sign=t["p_sign"], wins=t["wins"],
                      losses=t["losses"], ties=t["ties"], dz=None)


def tests_section(records: Sequence[dict], result: dict) -> list[str]:
    """Each run against the baseline on every measure tested: the paired tests, Holm over them all."""
    pairs = result["pairs"]
    family = next((t.get("holm_family") for pair in pairs for t in pair["tests"].values()), None) or 1
    out = ["<h2>Testes pareados</h2>",
           f"<p>Cada execução contra a referência, nas mesmas {fmt.plural(pairs[0]['n'] or 0, 'pergunta', 'perguntas')}: "
           "diferença das médias com seu intervalo de 95%, em quantas perguntas ficou acima, abaixo ou igual, e o "
           f"p do teste de aleatorização corrigido por Holm sobre os {fmt.integer(family)} testes da página "
           "(cada medida em cada comparação).</p>"]
    rows, sentences = [], []
    for i, (r, pair) in enumerate(zip(records[1:], pairs), start=1):
        for m, t in pair["tests"].items():
            c = _comparison(m, t)
            rows.append([run_name(i, r), labels.measure_label(m), fmt.num(c.mean_b), fmt.num(c.mean_a),
                         f"{fmt.signed(c.diff)} {fmt.ci(c.ci)}", f"{fmt.integer(c.wins)} / {fmt.integer(c.losses)} / "
                         f"{fmt.integer(c.ties)}", fmt.pvalue(c.p_holm), verdicts.change_word(c)])
            sentences.append(f"<li>{text(run_name(i, r))} {text(verdicts.change_word(c))} em relação à referência em "
                             f"{text(labels.measure_label(m))} ({text(fmt.signed(c.diff))}, Holm "
                             f"{text(verdicts.p_text(c.p_holm))}).</li>")
    out.append(html_table(["Execução", "Medida", "Referência", "Esta execução", "Diferença [IC 95%]",
                           "acima / abaixo / igual", "p (Holm)", "Veredito"], rows, table_id="testes",
                          align=["l", "l", "r", "r", "r", "c", "r", "l"]))
    return out + [f"<ul>{''.join(sentences)}</ul>"]


def changed_section(records: Sequence[dict]) -> list[str]:
    out = ["<h2>Perguntas que mudaram</h2>"]
    base = records[0]
    for i, other in enumerate(records[1:], start=1):
        changed = findings.changed_questions(base, other)
        out.append(f"<h3>{text(run_name(i, other))} contra a referência</h3>")
        if not changed:
            out.append("<p>Nenhuma pergunta mudou: os documentos esperados ficaram nas mesmas posições.</p>")
            continue
        counts = {k: sum(c["change"] == k for c in changed) for k in CHANGE}
        out.append(f"<p>{fmt.integer(counts['gained'])} passaram a acertar no 1º lugar, {fmt.integer(counts['lost'])} "
                   f"deixaram de acertar e em {fmt.integer(counts['moved'])} o esperado só mudou de posição.</p>")
        rows = [[c["query"], CHANGE[c["change"]], ", ".join(c["expected"]), fmt.rank(c["rank_a"]),
                 fmt.rank(c["rank_b"]), c["top_a"] or "—", c["top_b"] or "—"] for c in changed]
        out.append(html_table(["Pergunta", "Mudança", "Esperado", "Posição na referência", "Posição nesta",
                               "1º na referência", "1º nesta"], rows, table_id=f"mudaram-{i + 1}",
                              align=["l", "l", "l", "r", "r", "l", "l"], min_width={0: "14em"}))
    return out


def settings_section(records: Sequence[dict]) -> list[str]:
    """Every setting in which some run differs from the baseline, each run's value side by side,
    and a warning where a run differs in several (no one of them can be credited)."""
    base = records[0]
    differ = {i: config_differences(base, r) for i, r in enumerate(records[1:], start=1)}
    names = [n for n in (*VARIABLES, *DETAILS) if any(n in d for d in differ.values())]
    out = ["<h2>Configurações que diferem</h2>"]
    if not names:
        out.append('<p class="gabarito-warning">As execuções têm as mesmas configurações: as diferenças entre elas '
                   "são variação de uma execução para outra (ou mudanças no código).</p>")
        return out
    rows = [[standalone.setting_name(n)] + [standalone.setting_value(n, r) for r in records] for n in names]
    out.append(html_table(["Configuração", *(run_name(i, r) for i, r in enumerate(records))], rows,
                          table_id="configuracoes", align=["l"] * (len(records) + 1)))
    for i, d in differ.items():
        if len(d) > 1:
            out.append(f'<p class="gabarito-warning">{text(run_name(i, records[i]))} difere da referência em '
                       f"{fmt.integer(len(d))} configurações ({text(fmt.join([standalone.setting_name(n).lower() for n in d]))}): "
                       "uma diferença entre elas não pode ser atribuída a nenhuma sozinha.</p>")
    return out


def build(records: Sequence[dict], measures: str | Sequence[str] | None = None, result: dict | None = None) -> str:
    """The whole page comparing ``records`` (the first is the baseline) on ``measures`` (None: chosen
    from the judgments) and hit@1; ``result`` is their :func:`compare_runs` when already made (it
    refuses runs on other gold, edited rows and measures deeper than a run's lists)."""
    records = list(records)
    result = result if result is not None else compare_runs(records, measures)
    title = f"Comparação de {fmt.integer(len(records))} execuções"
    body = [f"<h1>{text(title)}</h1>", *runs_section(records), *side_by_side(records),
            *tests_section(records, result), *changed_section(records), *settings_section(records)]
    return standalone.page(title, body)


def write(records: Sequence[dict], out: str | Path, measures: str | Sequence[str] | None = None,
          result: dict | None = None) -> Path:
    """Write the comparison page of ``records`` to ``out`` (see :func:`build`); returns its path."""
    return atomic_write_bytes(Path(out), build(records, measures, result).encode("utf-8"))


def default_path(records: Sequence[dict], folder: str | Path) -> Path:
    """``folder/comparacao-<first run id>-<last run id>.html``."""
    return Path(folder) / f"comparacao-{records[0]['run_id']}-{records[-1]['run_id']}.html"
