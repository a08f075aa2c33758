"""What the pages call: load results safely, format numbers in Brazilian Portuguese, build tables.

Notebooks only read JSON and draw; everything they would otherwise compute
lives here, once, so that every chapter formats and checks the same way.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from gabarito.inputs.gold import verify_frozen
from gabarito.study.records import check_results_gold

#: Display names of measures (keys as in :mod:`gabarito.measure.metrics`).
MEASURE_LABELS = {
    "R@1": "Recall@1", "R@3": "Recall@3", "R@5": "Recall@5", "R@10": "Recall@10",
    "RR@10": "MRR@10", "nDCG@5": "nDCG@5", "nDCG@10": "nDCG@10",
}


def method_label(method: str) -> str:
    """Portuguese name of a method key such as ``bm25``, ``vector`` or ``rrf@10``."""
    if method == "bm25":
        return "Palavra (BM25)"
    if method == "vector":
        return "Significado (vetor)"
    if method.startswith("rrf@"):
        return f"Fusão RRF (top-{method[4:]})"
    return method


def load_results(study_dir: str | Path) -> dict:
    """Read a study's ``results.json`` after checking its gold: frozen and the one it was run on."""
    study_dir = Path(study_dir)
    manifest = study_dir / "gold.lock.json"
    if manifest.exists():
        verify_frozen(manifest)
    check_results_gold(study_dir / "results.json")
    return json.loads((study_dir / "results.json").read_text(encoding="utf-8"))


def load_json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


# --- numbers, Brazilian style ------------------------------------------------------------------

def num(value: float | None, digits: int = 3) -> str:
    """``0.3456 -> '0,346'``; thousands with a dot; ``None -> '—'``."""
    if value is None:
        return "—"
    text = f"{value:,.{digits}f}"
    if text.lstrip("-").strip("0.,") == "":
        text = text.lstrip("-")  # no "-0,000"
    return text.replace(",", "\u2009").replace(".", ",").replace("\u2009", ".")


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{num(100 * value, digits)}%"


def ms(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{num(value, digits)} ms"


def pvalue(p: float) -> str:
    return "< 0,001" if p < 0.001 else num(p, 3)


def ci(interval: Sequence[float], digits: int = 3) -> str:
    return f"[{num(interval[0], digits)}; {num(interval[1], digits)}]"


def rank(value: int | None) -> str:
    return "—" if value is None else f"{value}º"


def date_pt(iso: str) -> str:
    """``2026-12-02T18:00:00+00:00 -> '2 de dezembro de 2026'``."""
    months = ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
              "setembro", "outubro", "novembro", "dezembro"]
    y, m, d = iso[:10].split("-")
    return f"{int(d)} de {months[int(m) - 1]} de {y}"


# --- tables --------------------------------------------------------------------------------------

def html_table(header: Sequence[str], rows: Iterable[Sequence[object]], *, table_id: str | None = None,
               align: Sequence[str] | None = None, escape: bool = True,
               min_width: Mapping[int, str] | None = None) -> str:
    """A plain HTML table (cells escaped unless ``escape=False``); ``align`` holds 'l'/'r'/'c';
    ``min_width`` maps a column index to a CSS width (e.g. ``{1: "22em"}``)."""
    style = {"l": "left", "r": "right", "c": "center"}
    attrs = f' id="{table_id}"' if table_id else ""
    out = [f'<table class="table table-sm gabarito-table"{attrs}>', "<thead><tr>"]
    for i, h in enumerate(header):
        a = style[align[i]] if align else "left"
        w = f";min-width:{min_width[i]}" if min_width and i in min_width else ""
        out.append(f'<th style="text-align:{a}{w}">{html.escape(str(h))}</th>')
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            a = style[align[i]] if align else "left"
            text = html.escape(str(cell)) if escape else str(cell)
            out.append(f'<td style="text-align:{a}">{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def metrics_rows(result_set: Mapping, methods: Sequence[str], measures: Sequence[str]) -> list[list[str]]:
    """Rows ``measure | value [CI] per method``, the best value of each row marked with ▲."""
    rows = []
    for meas in measures:
        vals = {m: result_set["metrics"][m][meas] for m in methods}
        best = max(vals.values())
        row = [MEASURE_LABELS.get(meas, meas)]
        for m in methods:
            mark = " ▲" if vals[m] == best else ""
            row.append(f"{num(vals[m])}{mark} {ci(result_set['ci95'][m][meas])}")
        rows.append(row)
    return rows


def wins_count(result_set: Mapping, winner: str, others: Sequence[str], measures: Sequence[str]) -> int:
    """On how many measures ``winner`` is strictly above every one of ``others``."""
    m = result_set["metrics"]
    return sum(all(m[winner][x] > m[o][x] for o in others) for x in measures)


def test_row(result_set: Mapping, a: str, b: str, measure: str) -> dict:
    """The paired-test record comparing methods ``a`` and ``b`` on ``measure`` (either order)."""
    for t in result_set["tests"]:
        if t["measure"] == measure and {t["a"], t["b"]} == {a, b}:
            return t
    raise KeyError(f"no test for {a} vs {b} on {measure}")


def shone_alone(rows: Sequence[Mapping], winner: str, loser: str, n: int = 3) -> list[Mapping]:
    """Questions whose gold ``winner`` put first and ``loser`` did not."""
    return [r for r in rows if r[winner]["rank"] == 1 and r[loser]["rank"] != 1][:n]


def single_word_targets(rows: Sequence[Mapping]) -> list[Mapping]:
    """Questions whose target concept is a one-word name (e.g. a generic label)."""
    return [r for r in rows if "_" not in r["gold"]]


def lexical_overlap(question: str, text: str) -> float:
    """Share of the question's content words that also occur in ``text`` (0 when it has none)."""
    from gabarito.inputs.gold import content_words

    words = content_words(question)
    return len(words & content_words(text)) / len(words) if words else 0.0


def overlap_rows(rows: Sequence[Mapping], descriptions: Mapping[str, str]) -> list[dict]:
    """For each question: its lexical overlap with the gold's description and each method's rank."""
    return [{"id": r["id"], "gold": r["gold"],
             "overlap": lexical_overlap(r["question"], descriptions[r["gold"]]),
             **{m: r[m]["rank"] for m in r if isinstance(r[m], Mapping)}} for r in rows]


def split_halves(items: Sequence[dict], key: str) -> tuple[list[dict], list[dict], float]:
    """Items below and at-or-above the median of ``key``, and that median."""
    values = sorted(x[key] for x in items)
    n = len(values)
    median = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    return [x for x in items if x[key] < median], [x for x in items if x[key] >= median], median
