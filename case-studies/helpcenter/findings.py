"""What the evaluate-your-search page (notebooks/avalie_sua_busca.ipynb) states, from
``results.json`` and the run log; numbers, keys and choices, no sentences.

The page shows one configuration chosen on the tuning questions (:func:`headline`,
:func:`chosen`), a spreadsheet of its held-out answers (:func:`spreadsheet`), one-variable-at-a-time
groups (:func:`group_rows`, :func:`group_block`, :func:`segmentation_tradeoff`,
:func:`model_summary`), the best dense model against the fusion question by question
(:func:`dense_against_fusion`), the run log (:func:`log_rows`), the gap between tuning and held-out
(:func:`tuning_gap`), errors by type and severity (:func:`error_rows`), thresholds for "no answer"
(:func:`threshold_rows`, :func:`validated_threshold`) and what to do when search fails
(:func:`advice`). Its first screen ("O essencial") reads :func:`essential`, :func:`essential_block`
and :func:`rivals`. Each choice rule is a constant below, stated once.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from gabarito.core.page_guard import stored
from gabarito.errors import GabaritoError
from gabarito.evaluation import findings as run_findings
from gabarito.evaluation.compare import compare_runs, load_runs
from gabarito.evaluation.paired import score_records
from gabarito.measure.report import Report
from gabarito.study.integrity import verify

#: The page's measures, in table order (accuracy in the top 1, 3, 5, and the reciprocal rank).
MEASURES = ("top1", "top3", "top5", "mrr")
#: The headline's measures.
HEADLINE_MEASURES = ("top1", "top5", "mrr")
#: How many returned documents a spreadsheet row shows (the library's, :mod:`gabarito.evaluation.findings`).
SHOWN = run_findings.SHOWN
#: The segmentation the smaller cuts are compared with.
WHOLE = "document"
#: The threshold table's points, the largest share let through and the halves' seed: the library's.
QUANTILES, MAX_THROUGH, THRESHOLD_SEED = run_findings.QUANTILES, run_findings.MAX_THROUGH, run_findings.THRESHOLD_SEED
#: Severities whose errors are sent to a person.
SERIOUS = ("high", "critical")
#: The question types the advice is about (codes and identifiers; ambiguous questions).
CODE, AMBIGUOUS = "code", "ambiguous"
#: A comparison whose two runs differ in at least this many settings cannot credit any one of them.
CONFOUNDED = 2
#: The configurations the fusion comparison uses: the fusion's label, the BM25 of the advice.
FUSION_LABEL, BM25_LABEL = "hybrid", "bm25 portuguese"
#: The groups whose tuning runs the first screen's chart shows (models, BM25, fusion: one cut).
CONTENDERS = ("model", "lexical", "hybrid")
#: The chart's key for the chosen configuration on the held-out questions.
HELDOUT_KEY = "heldout"
#: The measure the chosen configuration is compared with its rivals on (``gabarito compare``'s default).
RIVAL_MEASURE = "RR@10"


# -- reading ------------------------------------------------------------------------------------

def settings(results: Mapping) -> dict[str, tuple[str, str]]:
    """``{label: (group, variant)}`` of every configuration the study ran (tuning and held-out
    runs): what a page names a run's label by (:func:`gabarito.publish.labels.settings_namer`),
    read from the results, never from the label's text. A label given to two settings is one line."""
    out: dict[str, tuple[str, str]] = {}
    for group, entries in results["groups"].items():
        for entry in entries:
            for split in ("tuning", "heldout"):
                label = entry[split]["config"]["label"]
                if out.setdefault(label, (group, entry["variant"])) != (group, entry["variant"]):
                    raise GabaritoError(f"configuration label {label!r} names two settings: {out[label]} and "
                                        f"{(group, entry['variant'])}")
    return out


def runs(results: Mapping, *groups: str) -> list[Mapping]:
    """The runs (tuning and held-out pairs) of the named groups, in order; all groups without names."""
    names = groups or tuple(results["groups"])
    return [r for g in names for r in results["groups"][g]]


def by_label(results: Mapping, label: str) -> Mapping:
    """The run pair whose configuration has this label."""
    for r in runs(results):
        if r["tuning"]["config"]["label"] == label:
            return r
    raise KeyError(label)


def key_of(results: Mapping, label: str) -> list:
    """Where the run pair with this label sits in the results (``["groups", group, index]``): the key
    a page's ledger records for its numbers."""
    for g, pairs in results["groups"].items():
        for i, r in enumerate(pairs):
            if r["tuning"]["config"]["label"] == label:
                return ["groups", g, i]
    raise KeyError(label)


def chosen(results: Mapping) -> Mapping:
    """The run pair chosen on the tuning questions."""
    return by_label(results, results["chosen"]["label"])


def models(results: Mapping) -> list[str]:
    """The model ids used by any run, sorted."""
    return sorted({r["tuning"]["config"]["model"] for r in runs(results) if r["tuning"]["config"]["model"]})


def headline(results: Mapping) -> dict:
    """The chosen configuration and how it did on the tuning and the held-out questions:
    ``{"label", "n_tuning", "n_heldout", "tuning", "heldout", "heldout_ci"}`` (measures
    :data:`HEADLINE_MEASURES`)."""
    pair = chosen(results)
    t, h = pair["tuning"]["summary"], pair["heldout"]["summary"]
    return {"label": results["chosen"]["label"], "n_tuning": t["n_answerable"], "n_heldout": h["n_answerable"],
            "tuning": {m: t[m]["value"] for m in HEADLINE_MEASURES},
            "heldout": {m: h[m]["value"] for m in HEADLINE_MEASURES},
            "heldout_ci": {m: h[m]["ci95"] for m in HEADLINE_MEASURES}}


def how_measured(results: Mapping) -> dict:
    """What "Como foi medido" states: the documents each question's list keeps (``k``, every
    configuration's) and the bootstrap resamples of the intervals (``resamples``)."""
    params = results["provenance"]["parameters"]
    return {"k": params["base"]["k"], "resamples": params["bootstrap_resamples"]}


def composition(evaluation: Sequence[Mapping], results: Mapping, lock: Mapping | None = None) -> dict:
    """The gold questions: how many (``n``, over ``n_docs`` documents), how many of each type and
    severity (``types``, ``severities``: only the ones present), the tuning/held-out split, and
    ``frozen_at``, when the gold was frozen (from its ``lock``; None without one)."""
    pair = chosen(results)
    return {"n": len(evaluation), "n_docs": results["provenance"]["corpus"]["n_docs"],
            "types": dict(Counter(q["type"] for q in evaluation)),
            "severities": dict(Counter(q["severity"] for q in evaluation)), "n_tuning": pair["tuning"]["summary"]["n_queries"],
            "n_heldout": pair["heldout"]["summary"]["n_queries"], "frozen_at": lock["frozen_at"] if lock else None}


# -- tables -------------------------------------------------------------------------------------

def cache_rows(perf: Mapping) -> dict:
    """The whole evaluation with the vector cache empty (cold) and full (warm), one per model, from
    ``perf.json``: ``segmentation`` (how the documents were cut) and ``rows``: ``model``, ``origin``,
    ``n_chunks``, ``cold_s`` with ``cold_key`` (where it sits in the file), ``warm_s``, ``speedup``
    (warm over cold) and ``qps`` (queries per second, the search alone)."""
    return {"segmentation": perf["segmentation"],
            "rows": [{"model": r["model"], "origin": r["origin"], "n_chunks": r["n_chunks"], "cold_s": r["cold"]["wall_s"],
                      "cold_key": ["rows", i, "cold", "wall_s"], "warm_s": r["warm"]["wall_s"],
                      "speedup": r["speedup_warm"], "qps": r["qps_search_only"]} for i, r in enumerate(perf["rows"])]}


def spreadsheet(record: Mapping) -> list[dict]:
    """One row per question of a run: ``query``, ``hits`` (``{1, 3, 5}`` -> True/False/None),
    ``rr``, ``false_positive``, ``expected`` and the first :data:`SHOWN` ``returned`` (id, score)."""
    keys = ("query", "hits", "rr", "false_positive", "expected", "returned")
    return [{k: r[k] for k in keys} for r in run_findings.spreadsheet(record["per_query"], SHOWN)]


def group(results: Mapping, name: str) -> list[Mapping]:
    """The runs of one of the results' groups (``segmentation``, ...), for :func:`group_rows`."""
    return results["groups"][name]


def group_rows(pairs: Iterable[Mapping], split: str = "tuning") -> list[dict]:
    """Per run of a group: ``label``, ``n_chunks``, model ``origin`` and ``{measure: (value, ci95)}``."""
    out = []
    for r in pairs:
        s = r[split]["summary"]
        out.append({"label": r["tuning"]["config"]["label"], "n_chunks": r[split]["n_chunks"],
                    "origin": (r["tuning"]["model"] or {}).get("origin"),
                    "measures": {m: (s[m]["value"], s[m]["ci95"]) for m in MEASURES}})
    return out


def group_block(pairs: Iterable[Mapping], split: str = "tuning") -> Report:
    """A group as a :class:`~gabarito.measure.report.Report` (means and intervals by configuration
    label, no tests: each run was scored alone) for a chart."""
    rows = group_rows(pairs, split)
    return Report(metrics={r["label"]: {m: v for m, (v, _) in r["measures"].items()} for r in rows},
                  ci={r["label"]: {m: ci for m, (_, ci) in r["measures"].items()} for r in rows},
                  measures=MEASURES)


def segmentation_tradeoff(results: Mapping) -> dict:
    """Does a smaller cut hit more in the top 1 and less in the top 5 than the whole document?
    ``{"whole": {measure: value}, "traded": [labels], "mrr_within_half_ci": bool}`` (the last:
    every smaller cut's MRR is within half its own interval's width of the whole document's)."""
    seg = {r["variant"]: r for r in results["groups"]["segmentation"]}
    whole = seg[WHOLE]["tuning"]["summary"]
    smaller = {k: r for k, r in seg.items() if k != WHOLE}
    summary = {k: r["tuning"]["summary"] for k, r in smaller.items()}
    traded = [smaller[k]["tuning"]["config"]["label"] for k, v in summary.items()
              if v["top1"]["value"] > whole["top1"]["value"] and v["top5"]["value"] < whole["top5"]["value"]]
    within = all(abs(v["mrr"]["value"] - whole["mrr"]["value"]) < (v["mrr"]["ci95"][1] - v["mrr"]["ci95"][0]) / 2
                 for v in summary.values())
    return {"whole": {m: whole[m]["value"] for m in MEASURES}, "traded": traded, "mrr_within_half_ci": within}


def best_dense(results: Mapping) -> Mapping:
    """The model run with the highest tuning MRR (the first in order on a tie)."""
    pairs = list(enumerate(results["groups"]["model"]))
    return max(pairs, key=lambda ir: (ir[1]["tuning"]["summary"]["mrr"]["value"], -ir[0]))[1]


def model_summary(results: Mapping) -> dict:
    """The highest tuning MRR among models, BM25 and fusion, and BM25's MRR per analyzer."""
    mrr = {r["tuning"]["config"]["label"]: r["tuning"]["summary"]["mrr"]["value"]
           for r in runs(results, "model", "lexical", "hybrid")}
    best = max(mrr, key=mrr.get)
    return {"best": best, "best_mrr": mrr[best],
            "lexical": {r["variant"]: r["tuning"]["summary"]["mrr"]["value"] for r in results["groups"]["lexical"]}}


def dense_against_fusion(results: Mapping) -> dict:
    """``gabarito compare`` of the best dense model against the fusion on the tuning questions, as
    the study stored it (``run_evaluations.py``, with :func:`compute_dense_against_fusion`):
    ``{"dense", "pair", "changed", "confounded"}``; ``pair["tests"]`` maps each measure to its row
    (``mean_a`` dense, ``mean_b`` fusion, wins/losses/ties counted for the fusion)."""
    return dict(stored(results, "dense_against_fusion"))


def compute_dense_against_fusion(results: Mapping, log_path: str | Path) -> dict:
    """:func:`dense_against_fusion` computed from the runs the log names."""
    dense = best_dense(results)
    ids = [dense["tuning"]["run_id"], by_label(results, FUSION_LABEL)["tuning"]["run_id"]]
    pair = compare_runs(load_runs(ids, log_path), RIVAL_MEASURE)["pairs"][0]
    return {"dense": dense["tuning"]["config"]["label"], "pair": pair, "changed": list(pair["changed"]),
            "confounded": len(pair["changed"]) >= CONFOUNDED}


def log_rows(log_path: str | Path) -> list[dict]:
    """Each line of the run log: id, date, label, which questions (``tuning``, ``heldout`` or
    ``all``, from the evaluation file's name), answerable count, top-1, MRR and cache counts. The
    log must be the one its runs left (its sha256 in the folder's manifest), else a one-line error."""
    verify(log_path)
    out = []
    for line in Path(log_path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        path, s = rec["evaluation_path"], rec["summary"]
        split = "tuning" if "tuning" in path else "heldout" if "heldout" in path else "all"
        out.append({"run_id": rec["run_id"], "date": rec["date"], "label": rec["config"].get("label") or None,
                    "split": split, "n_answerable": s["n_answerable"], "top1": s["top1"]["value"],
                    "mrr": s["mrr"]["value"], "cache": rec.get("cache")})
    return out


def tuning_gap(results: Mapping) -> list[dict]:
    """The chosen configuration per measure: tuning and held-out value and interval, and the
    difference (held-out minus tuning)."""
    pair = chosen(results)
    t, h = pair["tuning"]["summary"], pair["heldout"]["summary"]
    return [{"measure": m, "tuning": (t[m]["value"], t[m]["ci95"]), "heldout": (h[m]["value"], h[m]["ci95"]),
             "diff": h[m]["value"] - t[m]["value"]} for m in MEASURES]


def _both(pair: Mapping) -> list[Mapping]:
    """The tuning and the held-out questions of a run pair, together."""
    return list(pair["tuning"]["per_query"]) + list(pair["heldout"]["per_query"])


def error_rows(results: Mapping, key: str, order: Sequence[str]) -> list[dict]:
    """The chosen configuration over all its questions, grouped by ``key`` (``type`` or
    ``severity``) in ``order``: answerable questions, top-1 and top-5 accuracy, top-1 misses.
    Groups with no answerable question are left out."""
    return run_findings.error_rows(_both(chosen(results)), key, order)


def worst(rows: Sequence[Mapping], measure: str = "top1") -> Mapping:
    """The :func:`error_rows` row with the lowest ``measure`` (the first such in their order)."""
    return min(rows, key=lambda r: r[measure])


def hit_rate(pair: Mapping, qtype: str) -> float | None:
    """Top-1 accuracy of a run pair on the answerable questions of one type (None: no such question)."""
    g = [r for r in _both(pair) if r["type"] == qtype and r["answerable"]]
    return sum(r["hit@1"] for r in g) / len(g) if g else None


# -- "no answer" ----------------------------------------------------------------------------------

def score_groups(results: Mapping) -> list[dict]:
    """Per model: the top score of the answerable and of the unanswerable questions."""
    out = []
    for r in results["groups"]["model"]:
        out.append({"model": r["tuning"]["config"]["model"], **run_findings.top_scores(_both(r))})
    return out


def threshold_rows(results: Mapping) -> dict:
    """What thresholds at :data:`QUANTILES` of the best dense model's distinct top scores keep
    and let through (all its questions): ``{"model", "rows": [thresholds.outcome ...]}``."""
    dense = best_dense(results)
    return {"model": dense["tuning"]["config"]["model"], "rows": run_findings.threshold_rows(_both(dense), QUANTILES)}


def validated_threshold(results: Mapping) -> dict:
    """The lowest threshold letting through at most :data:`MAX_THROUGH` of the unanswerable
    questions, chosen on one half of the best dense model's questions and checked on the other."""
    return run_findings.validated_threshold(_both(best_dense(results)), seed=THRESHOLD_SEED, max_through=MAX_THROUGH)


def advice(results: Mapping) -> dict:
    """The numbers behind the page's advice: top-1 accuracy on codes of the chosen configuration
    and of the Portuguese BM25 (``words_first``: BM25 does better), on ambiguous questions, the
    validated threshold, and the serious (:data:`SERIOUS`) answerable questions missed in the top 1."""
    pair = chosen(results)
    code, code_bm25 = hit_rate(pair, CODE), hit_rate(by_label(results, BM25_LABEL), CODE)
    serious = [r for r in _both(pair) if r["severity"] in SERIOUS and r["answerable"] and not r["hit@1"]]
    return {"code": code, "code_bm25": code_bm25, "words_first": code_bm25 > code,
            "ambiguous": hit_rate(pair, AMBIGUOUS), "threshold": validated_threshold(results)["on_second_half"],
            "serious_misses": len(serious)}


# -- the first screen ("O essencial") ------------------------------------------------------------

def best_lexical(results: Mapping) -> Mapping:
    """The BM25 run with the highest tuning MRR (the first in order on a tie)."""
    pairs = list(enumerate(results["groups"]["lexical"]))
    return max(pairs, key=lambda ir: (ir[1]["tuning"]["summary"]["mrr"]["value"], -ir[0]))[1]


def essential(results: Mapping) -> dict:
    """:func:`headline`, plus ``inside`` (every held-out mean of :data:`HEADLINE_MEASURES` falls
    inside its tuning interval), ``ci_width`` (the held-out top-1 interval's width) and ``threshold``
    (the validated threshold on the half that did not choose it, :func:`validated_threshold`)."""
    h = headline(results)
    gap = {r["measure"]: r for r in tuning_gap(results)}
    inside = all(gap[m]["tuning"][1][0] <= gap[m]["heldout"][0] <= gap[m]["tuning"][1][1] for m in HEADLINE_MEASURES)
    low, high = h["heldout_ci"]["top1"]
    return {**h, "inside": inside, "ci_width": high - low,
            "threshold": validated_threshold(results)["on_second_half"],
            "threshold_model": best_dense(results)["tuning"]["config"]["model"]}


def essential_block(results: Mapping) -> Report:
    """The first screen's chart as a :class:`~gabarito.measure.report.Report`: the tuning runs of
    :data:`CONTENDERS` by label, then the chosen configuration on the held-out questions under
    :data:`HELDOUT_KEY` (means and intervals; no tests)."""
    block = group_block(runs(results, *CONTENDERS))
    held = chosen(results)["heldout"]["summary"]
    return Report(metrics={**block.metrics, HELDOUT_KEY: {m: held[m]["value"] for m in MEASURES}},
                  ci={**block.ci, HELDOUT_KEY: {m: held[m]["ci95"] for m in MEASURES}}, measures=MEASURES)


def rivals(results: Mapping) -> list[dict]:
    """The chosen configuration against the best dense model and the best BM25 on the tuning
    questions, scored together as ``gabarito compare`` does (Holm over the pairs), on
    :data:`RIVAL_MEASURE`: per rival ``{"label", "mean", "chosen_mean", "diff"`` (chosen minus
    rival), ``"ci", "p_holm", "verdict"`` (``better``/``worse``/``same``, the chosen against it)``}``,
    read from the Report the study stored (``run_evaluations.py``, with :func:`compute_rivals`)."""
    block = stored(results, "rivals")
    report, runs = Report.from_dict(block["report"]), block["runs"]
    chosen_key, *others = runs
    out = []
    for key in others:
        c = report.compare(chosen_key, key, block["measure"])
        out.append({"label": runs[key]["label"], "mean": c.mean_b, "chosen_mean": c.mean_a, "diff": c.diff,
                    "ci": None if c.ci is None else list(c.ci), "p_holm": c.p_holm, "verdict": c.verdict})
    return out


def compute_rivals(results: Mapping, log_path: str | Path) -> dict:
    """What :func:`rivals` reads, computed from the runs the log names: ``{"measure", "runs":
    {name in the report: {"run_id", "label"}} (the chosen first), "report"}``, the Report of the
    chosen configuration and its rivals on their tuning runs (per-question values included)."""
    pair = chosen(results)
    entries = [pair] + [r for r in (best_dense(results), best_lexical(results)) if r is not pair]
    report, names = score_records(load_runs([r["tuning"]["run_id"] for r in entries], log_path), RIVAL_MEASURE)
    return {"measure": RIVAL_MEASURE, "report": report.to_dict(),
            "runs": {name: {"run_id": r["tuning"]["run_id"], "label": r["tuning"]["config"]["label"]}
                     for name, r in zip(names, entries)}}
