"""Analysis that only the flagship page (notebooks/benchmark_rrf.ipynb) uses, beside its study.

The page reads ``results.json`` and calls these functions for every number it derives: which
method won where, the questions each method solved alone, the vocabulary the questions share
with the descriptions, the width of the intervals and how the latency stages relate. Nothing
here writes prose; the page does, from what these return.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.inputs.gold import content_words


def wins_count(result_set: Mapping, winner: str, others: Sequence[str], measures: Sequence[str]) -> int:
    """On how many measures ``winner`` is strictly above every one of ``others``."""
    m = result_set["metrics"]
    return sum(all(m[winner][x] > m[o][x] for o in others) for x in measures)


def shone_alone(rows: Sequence[Mapping], winner: str, loser: str, n: int = 3) -> list[Mapping]:
    """Up to ``n`` questions whose target ``winner`` put first and ``loser`` did not."""
    return [r for r in rows if r[winner]["rank"] == 1 and r[loser]["rank"] != 1][:n]


def single_word_targets(rows: Sequence[Mapping]) -> list[Mapping]:
    """Questions whose target concept is a one-word name (a generic label)."""
    return [r for r in rows if "_" not in r["gold"]]


def lexical_overlap(question: str, text: str) -> float:
    """Share of the question's content words that also occur in ``text`` (0 when it has none)."""
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


def overlap_halves(result_set: Mapping, sample: Mapping, methods: Sequence[str]) -> dict:
    """The questions split at the median overlap with their target's description, and in each
    half the share each method put first: ``{"mean", "median", "halves": [{"name", "n",
    "overlap", "top1": {method: share}}]}`` (lower half first)."""
    desc = {c["name"]: c["description"] for c in sample["concepts"]}
    items = overlap_rows(result_set["per_question"], desc)
    low, high, median = split_halves(items, "overlap")
    halves = []
    for name, group in (("low", low), ("high", high)):
        halves.append({"name": name, "n": len(group),
                       "overlap": sum(x["overlap"] for x in group) / len(group) if group else None,
                       "top1": {m: (sum(x[m] == 1 for x in group) / len(group) if group else None) for m in methods}})
    return {"mean": sum(x["overlap"] for x in items) / len(items), "median": median, "halves": halves}


def interval_widths(sets: Mapping[str, Mapping], method: str, measures: Sequence[str]) -> dict:
    """The width of ``method``'s 95% interval on each of ``measures``, in every result set, and
    the first measure whose interval has a width in every set (a measure at its ceiling in every
    question, such as a recall of 1, has an interval of width 0, which illustrates nothing).

    Returns ``{"widths": {measure: {set: width}}, "illustrative": measure or None,
    "degenerate": [measures whose interval is a point in some set]}``."""
    widths = {x: {s: rs["ci95"][method][x][1] - rs["ci95"][method][x][0] for s, rs in sets.items()}
              for x in measures}
    degenerate = [x for x, w in widths.items() if any(v <= 0 for v in w.values())]
    illustrative = next((x for x in measures if x not in degenerate), None)
    return {"widths": widths, "illustrative": illustrative, "degenerate": degenerate}


def at_ceiling(result_set: Mapping, method: str, measure: str) -> bool:
    """Whether ``method`` scores the maximum (1) on ``measure`` in the whole set."""
    return result_set["metrics"][method][measure] >= 1.0


def stage_paradoxes(latency: Mapping, parts: Mapping[str, Sequence[str]]) -> list[dict]:
    """Pipelines whose median is below the median of one of their own parts.

    ``parts`` maps a pipeline stage (``vector_full``) to the stages it contains (``encode``,
    ``knn``). Medians of separately timed passes do not add up, and on a shared machine a part
    can come out slower than the whole; the page must say so rather than leave it unexplained.
    Returns ``[{"whole", "part", "whole_median", "part_median"}]``."""
    out = []
    for whole, inside in parts.items():
        for part in inside:
            if latency[part]["median"] > latency[whole]["median"]:
                out.append({"whole": whole, "part": part, "whole_median": latency[whole]["median"],
                            "part_median": latency[part]["median"]})
    return out


def fusion_verdict(result_set: Mapping, fused: str, singles: Sequence[str], measure: str,
                   alpha: float = 0.05, *, against: str = "best") -> dict:
    """Fusion against the best (or, with ``against="worst"``, the worst) single method of one
    gold set on one measure: ``{"best", "fused", "best_value", "fused_value", "diff", "p_holm",
    "verdict"}`` (``best`` names the method compared, whichever was asked) with verdict
    ``"wins"`` / ``"loses"`` (Holm-corrected paired test below ``alpha``, sign of the
    difference) or ``"ties"``. Ties between singles go to the first of ``singles``."""
    m = result_set["metrics"]
    sign = 1 if against == "best" else -1
    best = max(singles, key=lambda s: (sign * m[s][measure], -list(singles).index(s)))
    t = next(t for t in result_set["tests"] if t["measure"] == measure and {t["a"], t["b"]} == {fused, best})
    diff = m[fused][measure] - m[best][measure]
    significant = t["p_holm"] < alpha
    verdict = "ties" if not significant or diff == 0 else ("wins" if diff > 0 else "loses")
    return {"best": best, "fused": fused, "best_value": m[best][measure], "fused_value": m[fused][measure],
            "diff": diff, "p_holm": t["p_holm"], "verdict": verdict}


def cross_set(sets: Mapping[str, Mapping], fused: str, singles: Sequence[str], measures: Sequence[str]) -> dict:
    """:func:`fusion_verdict` for every set and measure, and what holds in every set:
    ``{"verdicts": {set: {measure: verdict}}, "vs_worst": {set: {measure: verdict}},
    "same_everywhere": {measure: verdict or None}, "same_vs_worst": {...}, "best_single":
    {set: {measure: method}}, "best_changes": whether the best single method differs between sets}``."""
    def table(against):
        return {s: {x: fusion_verdict(rs, fused, singles, x, against=against) for x in measures}
                for s, rs in sets.items()}

    def same(v):
        out = {}
        for x in measures:
            kinds = {v[s][x]["verdict"] for s in sets}
            out[x] = kinds.pop() if len(kinds) == 1 else None
        return out

    verdicts, worst = table("best"), table("worst")
    best = {s: {x: v[x]["best"] for x in measures} for s, v in verdicts.items()}
    return {"verdicts": verdicts, "vs_worst": worst, "same_everywhere": same(verdicts),
            "same_vs_worst": same(worst), "best_single": best,
            "best_changes": len({b for per in best.values() for b in per.values()}) > 1}
