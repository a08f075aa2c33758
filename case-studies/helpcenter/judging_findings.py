"""What the evaluate chapter states about the help-center runs judged blind, from ``judging.json``
(written by ``run_judging.py``): who judged, how much they agreed, what the judgments changed in
the answer key, and how the comparison of the two runs (e5 against BM25) reads under each answer
key. Numbers, comparisons and verdict words come from the results; the words from
:mod:`gabarito.publish.verdicts`.

* :func:`comparison_rows`: one row per measure and answer key, read through
  :meth:`gabarito.measure.report.Report.compare` (e5 minus BM25, Holm-corrected p, verdict);
* :func:`changes`: per measure, the verdict under each key and whether it is not the same under all;
* :func:`judging_summary`, :func:`judging_text`, :func:`judging_table`: the chapter's dict, its
  Portuguese paragraph (at most five sentences) and its table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from gabarito.measure.report import Comparison, Report
from gabarito.publish import formatting as fmt
from gabarito.publish.claims import p_header, rules_out
from gabarito.publish.labels import measure_label, model as model_label
from gabarito.publish.tables import html_table
from gabarito.publish.verdicts import change_word, p_text

if TYPE_CHECKING:
    from gabarito.study.claims import Family

#: The two runs: the baseline and the run compared with it (differences are OTHER - BASELINE).
BASELINE, OTHER = "bm25", "e5"
#: The measures scored under every answer key, in table order (recall, MRR and hit at grade >= 1
#: under the graded key; nDCG with the grades as gains).
MEASURES = ("hit@1", "RR@10", "R@5", "nDCG@10")
#: The answer keys: the original gold, the graded judgments (grade >= 1 relevant), grade 2 only.
REGIMES = ("gold", "graded", "grade2")
#: The measure the paragraph reads (the graded one).
HEADLINE_MEASURE = "nDCG@10"
#: The answer keys' names on the page.
REGIME_LABELS = {"gold": "gabarito original", "graded": "notas (1 ou 2 é relevante)", "grade2": "só nota 2"}


def report(results: Mapping, regime: str) -> Report:
    """The scorer's report of both runs under one answer key."""
    return Report.from_dict(results["regimes"][regime]["report"])


def comparison(results: Mapping, regime: str, measure: str) -> Comparison:
    """e5 against BM25 on ``measure`` under ``regime`` (``diff`` = e5 - BM25)."""
    return report(results, regime).compare(OTHER, BASELINE, measure)


def _higher(c: Comparison) -> str | None:
    return {1: OTHER, -1: BASELINE, 0: None}[c.direction]


def comparison_rows(results: Mapping) -> list[dict]:
    """Per measure and answer key: ``{"measure", "regime", "n", "means", "ci95", "diff", "ci",
    "p_holm", "verdict", "significant", "higher"}`` (``higher``: the run with the higher mean)."""
    rows = []
    reports = {regime: report(results, regime) for regime in REGIMES}  # each read once
    for measure in MEASURES:
        for regime, r in reports.items():
            c = r.compare(OTHER, BASELINE, measure)
            rows.append({"measure": measure, "regime": regime, "n": r.n,
                         "means": {m: r.mean(m, measure) for m in (BASELINE, OTHER)},
                         "ci95": {m: list(r.interval(m, measure)) for m in (BASELINE, OTHER)},
                         "diff": c.diff, "ci": None if c.ci is None else list(c.ci), "p_holm": c.p_holm,
                         "verdict": c.verdict, "significant": c.significant, "higher": _higher(c)})
    return rows


def changes(results: Mapping) -> dict[str, dict]:
    """Per measure: ``{"verdicts": {regime: verdict}, "higher": {regime: run}, "changed": the
    verdict is not the same under every answer key, "higher_changed": nor the run ahead}``."""
    out = {}
    reports = {regime: report(results, regime) for regime in REGIMES}
    for measure in MEASURES:
        cs = {regime: r.compare(OTHER, BASELINE, measure) for regime, r in reports.items()}
        verdicts = {g: c.verdict for g, c in cs.items()}
        higher = {g: _higher(c) for g, c in cs.items()}
        out[measure] = {"verdicts": verdicts, "higher": higher, "changed": len(set(verdicts.values())) > 1,
                        "higher_changed": len(set(higher.values())) > 1}
    return out


def judging_summary(results: Mapping) -> dict:
    """The chapter's figures: who judged, agreement, what changed in the key, the comparison."""
    a, keys, who = results["agreement"], results["key_changes"], results["assessors"]
    nonzero = a["either_nonzero"]
    changed = changes(results)
    return {
        "assessor_kind": who["kind"], "assessor_family": who.get("family"), "n_assessors": len(who["names"]), "n_adjudicated": who["n_adjudicated"],
        "n_pairs": a["n_pairs"], "depth": results["inputs"]["pool"]["depth"],
        "n_questions": keys["n_questions"],
        "kappa": a["unweighted"]["kappa"], "kappa_ci": a["unweighted"]["ci95"],
        "kappa_linear": a["linear"]["kappa"], "kappa_linear_ci": a["linear"]["ci95"],
        "kappa_nonzero": nonzero["unweighted"]["kappa"], "kappa_nonzero_ci": nonzero["unweighted"]["ci95"],
        "n_both_zero": a["n_pairs"] - nonzero["n_pairs"],
        "gained": len(keys["gained"]), "gained_without_gold_answer": len(keys["gained_without_gold_answer"]),
        "known_answers": keys["known_answers"], "known_rejected": len(keys["known_rejected"]),
        "n": {g: results["regimes"][g]["n"] for g in REGIMES},
        "headline": {g: comparison(results, g, HEADLINE_MEASURE) for g in REGIMES},
        "changes": changed, "n_changed": sum(c["changed"] for c in changed.values()),
        "other_label": model_label(results["inputs"]["runs"][OTHER]["model"]),
        "judged_share": results.get("judged_share"),
    }


def _who(s: Mapping) -> str:
    judges = ("modelos de linguagem" + (f" ({s['assessor_family']})" if s.get("assessor_family") else "")
              if s["assessor_kind"] == "language_model" else "pessoas")
    third = "modelo" if s["assessor_kind"] == "language_model" else "pessoa"
    tie = (f"um terceiro {third}, que não viu as notas dos dois, desempatou "
           f"{fmt.plural(s['n_adjudicated'], 'par', 'pares')} em que discordaram" if s["n_adjudicated"]
           else "não houve discordância a desempatar")
    count = "Dois" if s["n_assessors"] == 2 else fmt.integer(s["n_assessors"])
    return (f"{count} {judges} julgaram, "
            f"cada um isolado, os {fmt.integer(s['n_pairs'])} pares (pergunta, documento) do pool — os "
            f"{fmt.integer(s['depth'])} primeiros resultados de cada busca mais as respostas conhecidas —, sem "
            f"saber que busca trouxe cada documento, em que posição, nem qual era a resposta esperada; {tie}.")


def _key_sentence(s: Mapping) -> str:
    rejected = (f"deram nota 0 a {fmt.integer(s['known_rejected'])} das {fmt.integer(s['known_answers'])} "
                f"respostas conhecidas" if s["known_rejected"]
                else f"não deram nota 0 a nenhuma das {fmt.integer(s['known_answers'])} respostas conhecidas")
    return (f"As notas acharam documentos relevantes que o gabarito não listava em {fmt.count(s['gained'], 'f')} "
            f"das {fmt.integer(s['n_questions'])} perguntas ({fmt.count(s['gained_without_gold_answer'], 'f')} delas "
            f"sem resposta no gabarito) e {rejected}.")


def _said(c: Comparison, where: str) -> str:
    return f"{change_word(c)} {where} ({fmt.signed(c.diff)}, {p_text(c.p_holm)})"


#: How a sentence names each answer key.
_WHERE = {"gold": "com o gabarito original", "graded": "com as notas", "grade2": "contando só a nota 2"}


def _headline(h: Mapping[str, Comparison]) -> str:
    """The headline measure under the three keys: one verb when the verdict is the same in all."""
    words = {change_word(c) for c in h.values()}
    if len(words) > 1:
        return "; ".join(_said(h[g], _WHERE[g]) for g in REGIMES)
    all_ = " com nenhum dos três julgamentos" if h["gold"].verdict == "same" else " com os três julgamentos"
    each = [f"{fmt.signed(h[g].diff)} ({p_text(h[g].p_holm)}) {_WHERE[g]}" for g in REGIMES]
    return f"{words.pop()}{all_}: {fmt.join(each)}"


def _closing(s: Mapping) -> str:
    """The last sentence: do the verdicts, and the run ahead, stay the same under every key?"""
    changes_ = s["changes"]
    if not any(v != "same" for c in changes_.values() for v in c["verdicts"].values()):
        verdict = "nenhuma diferença é significativa com nenhum dos três julgamentos"
    elif not s["n_changed"]:
        verdict = "o veredito é o mesmo com os três julgamentos"
    else:
        moved = [measure_label(m) for m, c in changes_.items() if c["changed"]]
        verdict = f"o veredito muda de um julgamento para outro em {fmt.integer(len(moved))} ({fmt.join(moved)})"
    ahead = [measure_label(m) for m, c in changes_.items() if c["higher_changed"]]
    if ahead:
        verdict += (f"; {'no' if len(ahead) == 1 else 'nos'} {fmt.join(ahead)}, a busca de média mais alta "
                    f"não é a mesma nos três")
    return f"Nas {fmt.integer(len(MEASURES))} medidas da tabela, {verdict}."


def judging_text(results: Mapping) -> str:
    """The chapter's paragraph (Portuguese Markdown, five sentences)."""
    s = judging_summary(results)
    h = s["headline"]
    moves = ("cai para" if s["kappa_nonzero"] < s["kappa"] else
             "sobe para" if s["kappa_nonzero"] > s["kappa"] else "fica em")
    return " ".join([
        _who(s),
        f"A concordância entre os dois, sem peso e sobre todos os pares deste pool (não os do capítulo "
        f"[Mais de uma resposta certa](julgamentos.ipynb), que mede outros pares, com peso linear), foi kappa de Cohen = "
        f"{fmt.estimate(s['kappa'], s['kappa_ci'])}; "
        + (f"sem os {fmt.integer(s['n_both_zero'])} pares a que ambos deram 0, " if s["n_both_zero"] else
           "só com os pares a que algum deu nota acima de 0, ")
        + f"{moves} {fmt.estimate(s['kappa_nonzero'], s['kappa_nonzero_ci'])}.",
        _key_sentence(s),
        f"Ao trocar o BM25 pelo {fmt.md(s['other_label'])}, o {measure_label(HEADLINE_MEASURE)} {_headline(h)}.",
        _closing(s),
    ])


def judging_rows(results: Mapping) -> list[list[object]]:
    """The table's rows: measure, answer key, questions, each run's mean and interval, the
    difference and its interval, Holm p and the verdict word."""
    rows = []
    for r in comparison_rows(results):
        c = comparison(results, r["regime"], r["measure"])
        rows.append([measure_label(r["measure"]), REGIME_LABELS[r["regime"]], r["n"],
                     *(f"{fmt.num(r['means'][m])} {fmt.ci(r['ci95'][m])}" for m in (BASELINE, OTHER)),
                     f"{fmt.signed(r['diff'])} {fmt.ci(r['ci'])}", fmt.pvalue(r["p_holm"]), change_word(c)])
    return rows


def judging_header(results: Mapping) -> list[str]:
    """The table's header; the p column named from the declared family (``study.json`` claims:
    one test per measure and answer key, so its p is unadjusted)."""
    other = model_label(results["inputs"]["runs"][OTHER]["model"])
    return ["Medida", "Julgamento", "Perguntas", "BM25", other, f"Diferença, {other} − BM25", p_header(family()),
            f"Trocar BM25 por {other}"]


def family() -> "Family":
    """The declared family of the two runs' tests (``study.json`` claims of ``judging.json``)."""
    from gabarito.study.spec import find_study

    return find_study("helpcenter").claims["judging.json"].families[0]


def interval_sentence(results: Mapping, regime: str = "graded") -> str:
    """What the headline measure's interval under ``regime`` rules out, one Portuguese sentence
    (:func:`gabarito.publish.claims.rules_out`): a "no difference" is not an equivalence."""
    c = comparison(results, regime, HEADLINE_MEASURE)
    other = fmt.md(model_label(results["inputs"]["runs"][OTHER]["model"]))
    return rules_out(c.ci, f"o {other}", "o BM25",
                     of=f"da diferença de {measure_label(HEADLINE_MEASURE)} {_WHERE[regime]}")


def judging_table(results: Mapping) -> fmt.Html:
    """The site's table (:func:`gabarito.publish.tables.html_table`) of :func:`judging_rows`."""
    return html_table(judging_header(results), judging_rows(results), table_id="tabela-julgamento",
                      align=["l", "l", "r", "r", "r", "r", "r", "l"])


def pool_options(results: Mapping) -> dict:
    """How the pool was drawn (``judging.json``'s inputs): its depth and seed, what the page's
    commands repeat (``{"depth", "seed"}``)."""
    pool = results["inputs"]["pool"]
    return {"depth": pool["depth"], "seed": pool["seed"]}
