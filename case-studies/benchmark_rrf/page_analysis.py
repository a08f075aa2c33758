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
