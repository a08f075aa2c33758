"""What the reranking chapter (notebooks/reranking.ipynb) states, computed from this study's
``results.json``: the headline (:func:`headline`), the finding of its first screen
(:func:`essential`, with intervals from :func:`hit1_intervals`), the cut at k, the worked example,
the common mistakes and the exercises. Every function returns numbers, rows and the choices a
sentence needs (which pair, which verdict); the page writes the words. The thresholds a sentence
depends on are stated once, below. What comes from ``rerankers.json`` (the cross-encoder trained
here) lives in :mod:`studies.standard_collections.reranker_findings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gabarito.core.methods import Method
from gabarito.core.page_guard import stored
from gabarito.measure.families import Across, across
from gabarito.measure.stats import ALPHA
from studies.reranking.hit1 import compute_hit1_reports, hit1_intervals  # noqa: F401 (the page reads it here)
from studies.reranking.methods import declared, readers

#: The cuts at k the chapter counts (what enters a prompt), and the one its sentences read.
CUTS = (1, 3, 5)
CUT = 3
#: The budget (ms per question, for the second reading only) of the chapter's first exercise.
EXERCISE_BUDGET_MS = 1000.0
#: A corpus size that was not measured, only multiplied (the funnel's last row).
HYPOTHETICAL_CORPUS = 1_000_000

def headline_n(res: Mapping) -> int:
    return int(res["provenance"]["parameters"]["headline_N"])


#: The headline's comparison family (as ``study.json`` declares it): every (first stage, reader)
#: pair, first-place hits, the exact sign test's p.
HEADLINE_FAMILY = "every first stage and reader, first-place hits (sign test)"


def headline_family(rows: Sequence[Mapping]) -> Across:
    """The family the headline's sign-test p are Holm-corrected over: every row of the study's
    ``headline`` (one per first stage and reader), its raw p at ``cutoff1.p``."""
    return Across(HEADLINE_FAMILY, tuple(f"{r['first_stage']} + {r['reader']}" for r in rows), p=("cutoff1", "p"))


def headline_holm(rows: Sequence[Mapping]) -> list[float]:
    """The Holm p of each headline row, in order, over :func:`headline_family` (what the study
    stores as each row's ``p_holm``, with ``run_rerank.py``'s ``statistics``)."""
    if not rows:
        return []
    family = headline_family(rows)
    adjusted = across(family, dict(zip(family.members, rows)))
    return [adjusted[m] for m in family.members]


def statistics(results: Mapping) -> dict:
    """What ``run_rerank.py`` stores beside its measurements: each headline row's Holm p over the
    declared family (:func:`headline_holm`), the family, and the first-place hits' bootstrap
    Reports (:func:`studies.reranking.hit1.compute_hit1_reports`)."""
    head = [{**h, "p_holm": p} for h, p in zip(results["headline"], headline_holm(results["headline"]))]
    return {"headline": head, "headline_family": headline_family(head).to_dict(),
            "hit1_intervals": compute_hit1_reports({"headline": head, "per_question": results["per_question"]})}


def headline(results: Mapping, alpha: float = ALPHA) -> dict:
    """The chapter's headline (its first screen and the home page): which (first stage, reader)
    pairs change the first-place hits, with the exact sign test's p corrected for all the pairs at
    once (Holm, :func:`headline_holm`, as the study stored it); and the pair
    whose MRR changed most (``largest_mrr``).

    Returns ``{"N", "n", "rows": [{"first_stage", "reader", "gained", "lost", "p", "p_holm",
    "before", "after"}], "better", "worse", "better_raw", "worse_raw", "largest_mrr"}`` (better
    and worse as lists of rows: significant at ``alpha`` after and, ``_raw``, before the
    correction)."""
    rows = []
    for h in results["headline"]:
        c = h["cutoff1"]
        rows.append({"first_stage": h["first_stage"], "reader": h["reader"], "gained": c["gained"], "lost": c["lost"],
                     "p": c["p"], "before": h["before"], "after": h["after"]})
    for r, h in zip(rows, results["headline"]):
        r["p_holm"] = stored(h, "p_holm")

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


# -- the finding of the first screen ("O essencial") ---------------------------------------------

def cross_encoder_reader(res: Mapping) -> Method | None:
    """The cross-encoder among the readers (None when none was measured)."""
    return next((r for r in readers(res) if r.kind == "cross_encoder"), None)


def methods(res: Mapping) -> list[Method]:
    """Every method the results name, as the values the study declares (first stages, readers and
    the calibration's scorers after the headline's N): what a page names a key by."""
    return declared(res, headline_n(res))


def essential(res: Mapping, alpha: float = ALPHA) -> dict:
    """The help-center half of the chapter's finding: how many (first stage, reader) pairs raise
    or lower the first-place hits significantly after Holm (``better``, ``worse``, of ``n``); the
    pair with the largest rise (``best``, with intervals; ``best_kept``: whether it survives the
    correction); the cross-encoder's pairs (``ce_n``, ``ce_worse``: lowered significantly) and its
    pair over the strongest first stage (``ce_strongest``, the one with the most hits alone)."""
    hl = headline(results=res, alpha=alpha)
    holm_p = {(r["first_stage"], r["reader"]): r["p_holm"] for r in hl["rows"]}
    rows = [{**r, "p_holm": holm_p[r["first_stage"], r["reader"]]} for r in hit1_intervals(res)]
    best = max(rows, key=lambda r: r["diff"])
    ce = cross_encoder_reader(res)
    ce_rows = [r for r in rows if r["reader"] == ce]
    strongest = max(res["first_stages"], key=lambda s: res["first_stages"][s]["hit@1"])
    worse = {(r["first_stage"], r["reader"]) for r in hl["worse"]}
    return {"N": hl["N"], "n": hl["n"], "n_answerable": best["n"], "better": len(hl["better"]),
            "worse": len(hl["worse"]), "best": best, "best_kept": best["p_holm"] < alpha, "ce": ce,
            "ce_n": len(ce_rows), "ce_worse": sum((r["first_stage"], ce) in worse for r in ce_rows),
            "ce_strongest": next((r for r in ce_rows if r["first_stage"] == strongest), None)}
