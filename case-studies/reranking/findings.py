"""What the reranking chapter (notebooks/reranking.ipynb) states, computed from this study's
``results.json``: the headline (:func:`headline`), the funnel, the cut at k, the worked example,
the common mistakes and the exercises. Every function returns numbers, rows and the choices a
sentence needs (which pair, which verdict); the page writes the words. The thresholds a sentence
depends on are stated once, below. What comes from ``rerankers.json`` (the cross-encoder trained
here) lives in :mod:`studies.standard_collections.reranker_findings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gabarito.measure.stats import ALPHA, holm

#: The cuts at k the chapter counts (what enters a prompt), and the one its sentences read.
CUTS = (1, 3, 5)
CUT = 3
#: The budget (ms per question, for the second reading only) of the chapter's first exercise.
EXERCISE_BUDGET_MS = 1000.0
#: A corpus size that was not measured, only multiplied (the funnel's last row).
HYPOTHETICAL_CORPUS = 1_000_000

def headline_n(res: Mapping) -> int:
    return int(res["provenance"]["parameters"]["headline_N"])


def headline(results: Mapping, alpha: float = ALPHA) -> dict:
    """The chapter's headline (its first screen and the home page): which (first stage, reader)
    pairs change the first-place hits, with the exact sign test's p corrected for all the pairs at
    once (Holm); and the pair whose MRR changed most (``largest_mrr``).

    Returns ``{"N", "n", "rows": [{"first_stage", "reader", "gained", "lost", "p", "p_holm",
    "before", "after"}], "better", "worse", "better_raw", "worse_raw", "largest_mrr"}`` (better
    and worse as lists of rows: significant at ``alpha`` after and, ``_raw``, before the
    correction)."""
    rows = []
    for h in results["headline"]:
        c = h["cutoff1"]
        rows.append({"first_stage": h["first_stage"], "reader": h["reader"], "gained": c["gained"], "lost": c["lost"],
                     "p": c["p"], "before": h["before"], "after": h["after"]})
    adjusted = holm({i: r["p"] for i, r in enumerate(rows)}) if rows else {}
    for i, r in enumerate(rows):
        r["p_holm"] = adjusted[i]

    def pick(key: str, up: bool) -> list[dict]:
        return [r for r in rows if r[key] < alpha and (r["gained"] > r["lost"]) == up and r["gained"] != r["lost"]]

    largest = max(rows, key=lambda r: r["after"]["mrr"] - r["before"]["mrr"]) if rows else None
    return {"N": results["provenance"]["parameters"]["headline_N"], "n": len(rows), "rows": rows,
            "better": pick("p_holm", True), "worse": pick("p_holm", False),
            "better_raw": pick("p", True), "worse_raw": pick("p", False), "largest_mrr": largest}


def by_reader(rows: Sequence[Mapping]) -> list[dict]:
    """Pairs grouped by reader, in the order they came: ``[{"reader", "first_stages": [...]}]``,
    so that a sentence names each reader once ("r sobre a, b e c")."""
    out: dict[str, list] = {}
    for r in rows:
        out.setdefault(r["reader"], []).append(r["first_stage"])
    return [{"reader": k, "first_stages": v} for k, v in out.items()]


def significance(hl: Mapping) -> list[dict]:
    """For each direction (``"better"``, then ``"worse"``): the pairs significant before the
    correction and those still significant after it (grouped by reader), and ``after``:
    ``"none"`` (the correction leaves none), ``"all"`` (it keeps every one: a sentence says so
    instead of naming them twice) or ``"some"``."""
    out = []
    for way in ("better", "worse"):
        raw, kept = hl[f"{way}_raw"], hl[way]
        after = "none" if not kept else "all" if len(kept) == len(raw) else "some"
        out.append({"direction": way, "raw": by_reader(raw), "n_raw": len(raw), "kept": by_reader(kept),
                    "n_kept": len(kept), "after": after})
    return out


# -- ranks of the gold chunk ---------------------------------------------------------------------

def first_stage_ranks(res: Mapping, stage: str) -> dict[str, int | None]:
    """Each answerable question's gold rank in the first stage's own list (None: not returned).
    The rank before the second reading is the same for every reader, so the first one is read."""
    per_reader = res["per_question"][stage]
    first = per_reader[next(iter(per_reader))]
    return {q: ranks[0] for q, ranks in first.items()}


def _within(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def cut_at_k(res: Mapping, stage: str, ks: Sequence[int] = (1, 3, 5), n: int | None = None) -> dict:
    """Where the gold chunk falls in the first stage's list, against a cut at ``k`` (what enters
    the prompt) and the ``n`` candidates a reader would receive: found in the top ``k``; among the
    ``n`` but below ``k`` (a reader could still lift it); beyond ``n`` (no reader can)."""
    n = headline_n(res) if n is None else n
    ranks = first_stage_ranks(res, stage)
    total = len(ranks)
    beyond = sum(1 for r in ranks.values() if not _within(r, n))
    rows = []
    for k in ks:
        inside = sum(1 for r in ranks.values() if _within(r, k))
        between = sum(1 for r in ranks.values() if _within(r, n) and not _within(r, k))
        rows.append({"k": k, "inside": inside, "between": between,
                     "inside_share": inside / total, "between_share": between / total})
    return {"stage": stage, "n": n, "n_questions": total, "beyond": beyond, "beyond_share": beyond / total,
            "ceiling": (total - beyond) / total, "rows": rows}


def moves_at_k(res: Mapping, stage: str, reader: str, k: int) -> dict:
    """With the top ``headline_N`` read again: how many questions had their gold chunk among the
    candidates but below ``k`` (could enter the cut), how many the reader brought into the top
    ``k`` and how many it pushed out of it."""
    n = headline_n(res)
    ranks = res["per_question"][stage][reader]
    could = [q for q, (b, _) in ranks.items() if _within(b, n) and not _within(b, k)]
    entered = [q for q, (b, a) in ranks.items() if not _within(b, k) and _within(a, k)]
    left = [q for q, (b, a) in ranks.items() if _within(b, k) and not _within(a, k)]
    return {"stage": stage, "reader": reader, "k": k, "n": n, "could_enter": len(could),
            "entered": len(entered), "left": len(left), "entered_ids": entered, "left_ids": left}


# -- the funnel ----------------------------------------------------------------------------------

def first_stage_yardstick(res: Mapping) -> dict:
    """The first stage's cost per question: encoding the question for the better dense first
    stage (the chunk vectors were computed at index time)."""
    model = res["setup"]["better_dense"].split()[-1]
    for key, v in res["latency_ms"]["yardstick"].items():
        if key.endswith("(first stage)") and f" {model} " in f" {key} ":
            return {"key": key, "stage": res["setup"]["better_dense"], "median_ms": v["median"]}
    raise KeyError(f"no first-stage yardstick for {model}")


def funnel(res: Mapping, reader: str) -> dict:
    """One reader's cost per question for each N it was timed at (median, candidates actually
    read, cost per candidate, and how many times the first stage's cost), and the row where it
    read every chunk of the corpus (None when no N reached them all)."""
    fs = first_stage_yardstick(res)
    n_chunks = res["provenance"]["corpus"]["n_chunks"]
    rows = []
    for n, v in sorted(res["latency_ms"]["per_N"][reader].items(), key=lambda kv: int(kv[0])):
        cand = v["candidates_mean"]
        rows.append({"N": int(n), "candidates": cand, "median_ms": v["median"], "ms_per_candidate": v["median"] / cand,
                     "times_first_stage": v["median"] / fs["median_ms"], "samples": v["n"]})
    whole = [r for r in rows if r["candidates"] >= n_chunks]
    return {"reader": reader, "first_stage": fs, "n_chunks": n_chunks, "rows": rows,
            "whole_corpus": whole[0] if whole else None}


def precomputed_vs_live(res: Mapping, reader: str = "bi-encoder mpnet") -> dict:
    """A bi-encoder reader two ways: its candidate vectors ready at index time (only the question
    is encoded) against reading the top N at query time, as a cross-encoder must."""
    model = reader.split()[-1]
    n = headline_n(res)
    for key, v in res["latency_ms"]["yardstick"].items():
        if f" {model} " in f" {key} " and "precomputed" in key:
            live = res["latency_ms"]["per_N"][reader][str(n)]["median"]
            return {"reader": reader, "n": n, "precomputed_ms": v["median"], "live_ms": live,
                    "ratio": live / v["median"]}
    raise KeyError(f"no precomputed yardstick for {reader}")


# -- the worked example --------------------------------------------------------------------------

def worked_example(res: Mapping, stage: str = "bm25") -> dict | None:
    """The question whose gold chunk the most readers moved, among those the first stage put
    among the candidates but not first: its gold chunk(s), the rank before and after each reader.
    Ties: the larger spread of the ranks after, then the lower first-stage rank, then the id."""
    n = headline_n(res)
    per_reader = res["per_question"][stage]
    before = first_stage_ranks(res, stage)
    best = None
    for q, b in before.items():
        if not _within(b, n) or b == 1:
            continue
        after = {r: per_reader[r][q][1] for r in per_reader}
        moved = sum(1 for a in after.values() if a != b)
        spread = max(after.values()) - min(after.values())
        key = (moved, spread, b, _neg(q))
        if moved and (best is None or key > best[0]):
            best = (key, q, b, after)
    if best is None:
        return None
    _, q, b, after = best
    return {"question": q, "stage": stage, "n": n, "gold": res["setup"]["gold_chunks"][q], "before": b, "after": after}


def _neg(q: str) -> tuple:
    return tuple(-ord(c) for c in q)  # the lower id wins a tie under max()


# -- the common mistakes -------------------------------------------------------------------------

def sweep_extremes(res: Mapping, measure: str = "mrr") -> list[dict]:
    """Per (first stage, reader): the best N of the sweep, its value, and the value at the largest
    N (reading every candidate), against the first stage alone."""
    groups: dict[tuple, list] = {}
    for p in res["n_sweep"]:
        groups.setdefault((p["first_stage"], p["reader"]), []).append(p)
    out = []
    for (stage, reader), pts in groups.items():
        pts = sorted(pts, key=lambda p: p["N"])
        best = max(pts, key=lambda p: (p[measure], -p["N"]))
        out.append({"first_stage": stage, "reader": reader, "best_N": best["N"], "best": best[measure],
                    "largest_N": pts[-1]["N"], "at_largest": pts[-1][measure],
                    "alone": res["first_stages"][stage][measure]})
    return out


def sweep_drop(res: Mapping, measure: str = "mrr") -> dict:
    """Over the sweep's (first stage, reader) pairs: how many end, at the largest N, below their
    best N, and the pair with the largest such drop."""
    ext = sweep_extremes(res, measure)
    return {"n": len(ext), "fell": sum(1 for e in ext if e["at_largest"] < e["best"]),
            "largest": max(ext, key=lambda e: e["best"] - e["at_largest"])}


def hit1_changes(res: Mapping) -> dict:
    """At the headline N: how many (first stage, reader) pairs lower the first-place hits, raise
    them, or leave them, and the largest drop."""
    rows = [{"first_stage": h["first_stage"], "reader": h["reader"], "before": h["before"]["hit@1"],
             "after": h["after"]["hit@1"], "diff": h["after"]["hit@1"] - h["before"]["hit@1"]} for h in res["headline"]]
    worst = min(rows, key=lambda r: r["diff"])
    return {"n": len(rows), "lower": sum(r["diff"] < 0 for r in rows), "higher": sum(r["diff"] > 0 for r in rows),
            "same": sum(r["diff"] == 0 for r in rows), "worst": worst}


def prefix_effect(res: Mapping, measure: str = "mrr") -> dict:
    """The reader reading the chunk with its document and section titles in front, against the
    bare chunk: in how many pairs the prefix helps, hurts, or changes nothing."""
    diffs = [r["prefixed"][measure] - r["bare"][measure] for r in res["reader_input"]]
    return {"n": len(diffs), "helps": sum(d > 0 for d in diffs), "hurts": sum(d < 0 for d in diffs),
            "same": sum(d == 0 for d in diffs)}


def over_limit(res: Mapping) -> dict:
    """At the chunk size the study uses: each reader's token limit and the share of (question,
    chunk) pairs longer than it (the reader never sees their end); the worst reader."""
    seg = res["provenance"]["parameters"]["segmentation"]
    per = res["tokens"]["per_chunk_size"][seg]
    rows = {r: {"limit": v["max_tokens_read"], "share": v["pairs_over_limit_share"],
                "median_pair_tokens": v["pair_tokens"]["median"]} for r, v in per.items()}
    worst = max(rows, key=lambda r: rows[r]["share"])
    return {"segmentation": seg, "readers": rows, "worst": worst}


def load_and_repeat(res: Mapping) -> dict:
    """How loaded the machine was when latencies were taken (1-minute load average, before and
    after, against its cores), and the same work timed twice: the largest ratio between them."""
    lat = res["latency_ms"]
    twice = {k: {"a": v["per_N_20_median"], "b": v["per_chunk_size_median"],
                 "ratio": max(v["per_N_20_median"], v["per_chunk_size_median"])
                 / min(v["per_N_20_median"], v["per_chunk_size_median"])}
             for k, v in (lat.get("same_work_twice") or {}).items()}
    worst = max(twice, key=lambda k: twice[k]["ratio"]) if twice else None
    load = lat["load_average_1_5_15"]
    return {"cores": res["provenance"]["machine"]["cpu_count"], "load_before": load["before"][0],
            "load_after": load["after"][0], "twice": twice, "worst": worst}


def raw_significant(res: Mapping, alpha: float = ALPHA) -> int:
    """How many (first stage, reader) pairs have a sign-test p below ``alpha`` before any
    correction for the number of pairs compared."""
    return sum(1 for h in res["headline"] if h["cutoff1"]["p"] < alpha)


def threshold_drift(res: Mapping) -> dict:
    """Each scorer's threshold chosen on the first half of the questions, read on that half and
    on the other: the share of right answers kept and of unanswerable questions let through on
    each half; the scorer whose kept share falls most from the half it was chosen on, and the
    scorers with the lowest and the highest threshold found (each scorer's scale is its own)."""
    rows = {}
    for name, c in res["calibration"]["scorers"].items():
        v = c["chosen_and_validated"]
        a, b = v["chosen_on_first_half"], v["on_second_half"]
        rows[name] = {"threshold": a["threshold"],
                      "kept_chosen": a["useful_kept_share"], "kept_other": b["useful_kept_share"],
                      "through_chosen": a["unanswerable_through_share"],
                      "through_other": b["unanswerable_through_share"],
                      "drop": a["useful_kept_share"] - b["useful_kept_share"]}
    worst = max(rows, key=lambda k: rows[k]["drop"])
    found = [k for k in rows if rows[k]["threshold"] is not None]  # None: no threshold met the rule
    return {"scorers": rows, "worst": worst, "fell": sum(1 for r in rows.values() if r["drop"] > 0),
            "n": len(rows), "lowest": min(found, key=lambda k: rows[k]["threshold"]) if found else None,
            "highest": max(found, key=lambda k: rows[k]["threshold"]) if found else None}


# -- the sentences beside the tables -------------------------------------------------------------

def at_n(funnel_: Mapping, n: int) -> dict:
    """The row of a reader's funnel timed at ``n`` candidates."""
    return next(r for r in funnel_["rows"] if r["N"] == n)


def slowest_per_candidate(funnels: Mapping[str, Mapping], n: int) -> dict:
    """The funnel of the reader that costs most per candidate at ``n``."""
    return max(funnels.values(), key=lambda f: at_n(f, n)["ms_per_candidate"])


def rank_change(before: int | None, after: int | None) -> str:
    """``"up"``, ``"down"`` or ``"same"``: where a reader moved the gold chunk (None: not listed)."""
    if after == before:
        return "same"
    return "up" if after is not None and (before is None or after < before) else "down"


def example_extremes(example: Mapping) -> dict:
    """The readers of the worked example that put the gold chunk highest and lowest (a reader
    that dropped it from the list counts as lowest)."""
    ordered = sorted(example["after"].items(), key=lambda kv: (kv[1] is None, kv[1]))
    return {"highest": {"reader": ordered[0][0], "rank": ordered[0][1]},
            "lowest": {"reader": ordered[-1][0], "rank": ordered[-1][1]}}


def move_balance(res: Mapping, stages: Sequence[str], readers: Sequence[str], k: int = CUT) -> dict:
    """Over every (first stage, reader): the best and the worst balance of questions brought
    into the top ``k`` against those pushed out of it."""
    moves = [moves_at_k(res, s, r, k) for s in stages for r in readers]
    return {"best": max(moves, key=lambda m: (m["entered"] - m["left"], m["entered"])),
            "worst": min(moves, key=lambda m: (m["entered"] - m["left"], -m["left"]))}


def beyond_range(cuts: Mapping[str, Mapping]) -> dict:
    """The first stages that leave the fewest and the most questions beyond the ``n`` candidates
    (every row of the cut table between them)."""
    ordered = sorted(cuts.values(), key=lambda c: c["beyond"])
    return {"fewest": ordered[0], "most": ordered[-1], "n_questions": ordered[0]["n_questions"]}


def ceiling_exercise(res: Mapping, hl: Mapping, stages: Sequence[str]) -> dict:
    """The first stage with the largest room between first-place hits and the ceiling at N, its
    hits, recall at N and at 5, and the best first-place hits a reader reached over it."""
    n = headline_n(res)
    stage = max(stages, key=lambda s: res["first_stages"][s][f"recall@{n}"] - res["first_stages"][s]["hit@1"])
    fs = res["first_stages"][stage]
    best = max(r["after"]["hit@1"] for r in hl["rows"] if r["first_stage"] == stage)
    return {"stage": stage, "n": n, "hit1": fs["hit@1"], "recall_n": fs[f"recall@{n}"], "recall_5": fs["recall@5"],
            "best_after": best}


def significance_exercise(hl: Mapping, alpha: float = ALPHA) -> dict:
    """The pair with the most lopsided gains and losses, its p before and after Holm, and the
    verdict: ``"corrected"`` (significant even after the correction), ``"raw_only"`` or
    ``"none"``."""
    row = max(hl["rows"], key=lambda r: (abs(r["gained"] - r["lost"]), r["gained"] + r["lost"]))
    verdict = "corrected" if row["p_holm"] < alpha else "raw_only" if row["p"] < alpha else "none"
    return {"row": row, "verdict": verdict, "alpha": alpha}


def cut_exercise(res: Mapping, cuts: Mapping[str, Mapping], readers: Sequence[str], k: int = CUT) -> dict:
    """The first stage with the most questions between the cut at ``k`` and the N candidates:
    its cut row, the questions beyond N, and the reader with the best balance over it."""
    stage = max(cuts, key=lambda s: next(r["between"] for r in cuts[s]["rows"] if r["k"] == k))
    c = cuts[stage]
    best = max((moves_at_k(res, stage, r, k) for r in readers), key=lambda m: (m["entered"] - m["left"], m["entered"]))
    return {"stage": stage, "k": k, "cut": c, "row": next(r for r in c["rows"] if r["k"] == k), "best": best}


def tokenizer_of(name: str) -> dict:
    """What counted a prompt's tokens, from its recorded name: ``{"kind": "tiktoken", "name":
    encoding}``, ``{"kind": "reader", "name": reader}`` (a reader model's own tokenizer) or
    ``{"kind": "other", "name": name}``."""
    if name.startswith("tiktoken "):
        return {"kind": "tiktoken", "name": name.split(" ", 1)[1]}
    if name.endswith(" tokenizer"):
        return {"kind": "reader", "name": name[:-len(" tokenizer")]}
    return {"kind": "other", "name": name}
