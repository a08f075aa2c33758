"""What the flagship chapter (notebooks/benchmark_rrf.ipynb) states, computed from this study's
``results.json``: the headline (:func:`headline`, also on the home page), the chapter's finding
with its intervals (:func:`essential`, from the headline and :func:`across_sets`), the fusion's
verdict in every gold set (:func:`across_sets`), the published questions beside the reproduced
ranks (:func:`reproduction_rows`), whether the latency may be shown (:func:`latency_valid`), the paired tests of a table (:func:`paired_rows`), the
three findings of a set (:func:`set_findings`), the vocabulary the questions share with the
descriptions (:func:`overlap_halves`, :func:`leakage_reading`), the latency (:func:`latency`),
the ArcadeDB versions (:func:`versions`) and the width of the intervals (:func:`interval_widths`).

Score blocks are read through :class:`gabarito.measure.report.Report`: a comparison is always
``Report.compare``, oriented and judged there (Holm, :data:`ALPHA`). Every threshold a sentence
depends on is stated once, below; the page writes the words around what these return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from gabarito.core.measures import Measure
from gabarito.core.methods import Method, among, declare, fused as fusion, leaf
from gabarito.inputs.gold import content_words
from gabarito.measure.report import ALPHA, Comparison, Report
from gabarito.publish.fusion_verdict import SINGLES, VERB, FusionVerdict, fusion_verdict
from gabarito.publish.verdicts import Share, share

__all__ = ["ALPHA", "FLOOR_TARGET", "LEAKAGE_GAP", "NEAR_ALL", "SINGLES", "VERB", "FusionVerdict",
           "SetFindings", "across_sets", "at_ceiling", "essential", "generic_targets", "hash_rows", "headline",
           "interval_widths", "latency", "latency_valid", "leakage_reading", "overlap_halves", "paired_rows",
           "reports", "reproduction_rows", "set_findings", "set_scores", "shone_alone", "stage_paradoxes",
           "versions"]

#: The measures of the headline's verdicts, and the one that names the best single method.
HEADLINE_MEASURES = ("R@1", "R@10", "RR@10", "nDCG@10")
#: A difference in first-place hits between the questions that repeat the description more and
#: those that repeat it less, from which the page says the method depends on that repetition.
LEAKAGE_GAP = 0.1
#: The project's latency target: a database query within this many times the HTTP floor.
FLOOR_TARGET = 2.0
#: A share of questions with the target in the top-k from which a method "acerta quase tudo".
NEAR_ALL = 0.9


def reports(results: Mapping) -> dict[str, Report]:
    """Each gold set's score block as a :class:`Report`, in the results' order."""
    return {s: Report.from_dict(block) for s, block in results["sets"].items()}


def _fused(results: Mapping, deep: bool = False) -> Method:
    params = results["provenance"]["parameters"]
    return fusion(params["deep_k" if deep else "k"], SINGLES)


def fused_methods(results: Mapping) -> tuple[Method, Method]:
    """The two fusions the study ran: RRF of the two singles' top k (the headline's), and of their
    top ``deep_k`` (what the fusion of deeper lists changes)."""
    return _fused(results), _fused(results, deep=True)


def methods(results: Mapping) -> list[Method]:
    """Every method the study scored (``results["methods"]``, in its order), as values: the two
    singles and the fusions of :func:`fused_methods`."""
    ran = declare([leaf(s) for s in SINGLES] + list(fused_methods(results)))
    return [among(key, ran) for key in results["methods"]]


def best_by(results: Mapping) -> Measure:
    """The measure that names the best single method: the MRR at the study's cutoff k."""
    return Measure.of("RR", results["provenance"]["parameters"]["k"])


# -- the headline ---------------------------------------------------------------------------------

def headline(results: Mapping) -> dict:
    """The flagship's main set: how often each method puts the target first and in the top-k.

    Returns ``{"n", "n_extended", "k", "fused", "r1", "rk", "mrr": {"bm25", "vector", "fused":
    value}, "sets": {set: {"n", "best_single", "rk"}}, "best_vector_sets"}`` (the best single
    method by the MRR@k; a tie goes to BM25)."""
    k = results["provenance"]["parameters"]["k"]
    fused = _fused(results)
    pick = {"bm25": "bm25", "vector": "vector", "fused": fused}
    sets = reports(results)
    main = sets["main"]
    per_set = {key: {"n": results["sets"][key]["n"], "best_single": r.best(Measure.of("RR", k), among=SINGLES),
                     "rk": {a: r.mean(b, Measure.of("R", k)) for a, b in pick.items()}} for key, r in sets.items()}
    return {"n": results["sets"]["main"]["n"], "n_extended": results["sets"]["extended"]["n"], "k": k,
            "fused": fused, "r1": {a: main.mean(b, "R@1") for a, b in pick.items()},
            "rk": {a: main.mean(b, Measure.of("R", k)) for a, b in pick.items()},
            "mrr": {a: main.mean(b, Measure.of("RR", k)) for a, b in pick.items()}, "sets": per_set,
            "best_vector_sets": [s for s, v in per_set.items() if v["best_single"] == "vector"]}


def across_sets(results: Mapping, measures: Sequence[str] = HEADLINE_MEASURES, by: str | None = None) -> dict:
    """The fusion in every gold set, against the best and the worst single method.

    Returns ``{"sets", "verdicts": {set: {measure: FusionVerdict}}, "vs_worst": {...},
    "never_wins": the fusion beats the best single in no set on no measure, "loses_in": [sets
    where it loses to it on some measure], "beats_worst": [measures where it beats the worst in
    every set], "best_single": {set: the best single by ``by``}, "by_word", "by_meaning": [sets
    whose best single is BM25 / the vector], "best_changes": bool}``."""
    fused, sets, by = _fused(results), reports(results), by or best_by(results)
    verdicts = {s: {x: fusion_verdict(r, fused, SINGLES, x) for x in measures} for s, r in sets.items()}
    worst = {s: {x: fusion_verdict(r, fused, SINGLES, x, "worst") for x in measures} for s, r in sets.items()}
    best = {s: verdicts[s][by].single for s in sets}
    return {"sets": list(sets), "verdicts": verdicts, "vs_worst": worst,
            "never_wins": all(v.verdict != "better" for per in verdicts.values() for v in per.values()),
            "loses_in": [s for s, per in verdicts.items() if any(v.verdict == "worse" for v in per.values())],
            "beats_worst": [x for x in measures if all(worst[s][x].verdict == "better" for s in sets)],
            "best_single": best, "by_word": [s for s in sets if best[s] == "bm25"],
            "by_meaning": [s for s in sets if best[s] == "vector"], "best_changes": len(set(best.values())) > 1}


def paired_rows(report: Report, pairs: Sequence[set], measures: Sequence[str]) -> list[Comparison]:
    """The paired tests of ``report`` on ``measures`` between the ``pairs`` of methods, in the
    stored order, each oriented as the stored second method minus the first."""
    return [report.compare(t["b"], t["a"], t["measure"]) for t in report.tests
            if t["measure"] in measures and {t["a"], t["b"]} in pairs]



# -- the chapter's finding ("O essencial") --------------------------------------------------------

def set_scores(results: Mapping, name: str, measure: str = "R@1") -> dict:
    """One gold set on ``measure``: ``{"set", "n", "best_single": the best single by the MRR@k,
    "mean": {"bm25", "vector", "fused": value}, "ci": {same keys: (low, high)}}``."""
    k = results["provenance"]["parameters"]["k"]
    pick = {"bm25": "bm25", "vector": "vector", "fused": _fused(results)}
    r = Report.from_dict(results["sets"][name])
    return {"set": name, "n": results["sets"][name]["n"], "best_single": r.best(Measure.of("RR", k), among=SINGLES),
            "mean": {a: r.mean(b, measure) for a, b in pick.items()},
            "ci": {a: r.interval(b, measure) for a, b in pick.items()}}


def essential(results: Mapping, measure: str = "R@1") -> dict:
    """What the chapter's first section states, with its 95% intervals.

    ``main``: :func:`set_scores` of the main set on ``measure``; ``contrast``: the set whose best
    single method (by the MRR@k) is not the main set's and where that method leads the main set's
    best by most on ``measure`` (None when every set has the same best single); ``sets``: every
    set's scores, in the results' order; ``loses``: ``[(set, FusionVerdict)]`` where the fusion
    loses to the best single on :func:`best_by`; and from :func:`across_sets` ``never_wins``,
    ``beats_worst``, ``by_word``, ``by_meaning``, ``best_changes``, ``n_sets``."""
    cross = across_sets(results)
    sets = {s: set_scores(results, s, measure) for s in results["sets"]}
    main = sets["main"]
    lead = {s: x["mean"][x["best_single"]] - x["mean"][main["best_single"]]
            for s, x in sets.items() if x["best_single"] != main["best_single"]}
    contrast = sets[max(lead, key=lambda s: (lead[s], -list(sets).index(s)))] if lead else None
    by = best_by(results)
    loses = [(s, per[by]) for s, per in cross["verdicts"].items() if per[by].verdict == "worse"]
    return {"measure": measure, "main": main, "contrast": contrast, "sets": sets, "loses": loses,
            "n_sets": len(sets), **{key: cross[key] for key in
                                    ("never_wins", "beats_worst", "by_word", "by_meaning", "best_changes")}}


def reproduction_rows(results: Mapping, published: Mapping) -> list[dict]:
    """The reproduction's rows (``results["reproduction"]["ranks"]["rows"]``), each with the
    published question's text (``question``) from the published gold file ``published``
    (``questions_published.json``); a row whose id the file lacks stops the page."""
    text = {p["id"]: p["question"] for p in published["pairs"]}
    missing = [r["id"] for r in results["reproduction"]["ranks"]["rows"] if r["id"] not in text]
    if missing:
        raise KeyError(f"questions not in the published gold file: {', '.join(missing)}")
    return [{**r, "question": text[r["id"]]} for r in results["reproduction"]["ranks"]["rows"]]


def latency_valid(results: Mapping) -> bool:
    """Whether the results mark their latency as measured validly (``latency_ms.valid``): only
    then may a page show it; a run that does not say so is not shown."""
    return bool((results.get("latency_ms") or {}).get("valid", False))

# -- the three findings of a set ------------------------------------------------------------------

def _order(a: float, b: float) -> str:
    return "first" if a > b else "second" if a < b else "tie"


@dataclass(frozen=True)
class SetFindings:
    """The three findings of one gold set, as the page writes them.

    ``wins``: on how many of ``n_measures`` the fusion is above both single methods (``kind``
    ``all``, ``none`` or ``some``); ``vs_word``: the fusion against BM25 on the MRR@k;
    ``first`` and ``topk``: ``"meaning"`` ahead, ``"word"`` ahead or ``"tie"`` on R@1 and R@k;
    ``overlap``: the first-place hits (``both``, ``only_a`` = BM25 only, ``only_b``,
    ``neither``), ``shared`` the share of the questions either method gets first that both do
    (its ``large`` and ``word``), ``exclusive`` those exactly one does; ``near_all``: a single
    method puts the target in the top-k in at least :data:`NEAR_ALL` of the questions."""

    n: int
    k: int
    n_measures: int
    wins: int
    mrr: Mapping[str, float]
    vs_word: Comparison
    r1: Mapping[str, float]
    rk: Mapping[str, float]
    overlap: Mapping[str, int]
    near_all: bool

    @property
    def kind(self) -> str:
        return "all" if self.wins == self.n_measures else "none" if self.wins == 0 else "some"

    @property
    def first(self) -> str:
        return {"first": "meaning", "second": "word", "tie": "tie"}[_order(self.r1["vector"], self.r1["bm25"])]

    @property
    def topk(self) -> str:
        return {"first": "meaning", "second": "word", "tie": "tie"}[_order(self.rk["vector"], self.rk["bm25"])]

    @property
    def exclusive(self) -> int:
        return self.overlap["only_a"] + self.overlap["only_b"]

    @property
    def shared(self) -> Share:
        return share(self.overlap["both"], self.overlap["both"] + self.exclusive)


def set_findings(results: Mapping, name: str, measures: Sequence[str]) -> SetFindings:
    """:class:`SetFindings` of the gold set ``name`` on ``measures``."""
    k, fused = results["provenance"]["parameters"]["k"], _fused(results)
    r = Report.from_dict(results["sets"][name])
    wins = sum(all(r.mean(fused, x) > r.mean(o, x) for o in SINGLES) for x in measures)
    rk = {m: r.mean(m, Measure.of("R", k)) for m in SINGLES}
    return SetFindings(n=results["sets"][name]["n"], k=k, n_measures=len(measures), wins=wins,
                       mrr={m: r.mean(m, Measure.of("RR", k)) for m in (*SINGLES, fused)},
                       vs_word=r.compare(fused, "bm25", Measure.of("RR", k)), r1={m: r.mean(m, "R@1") for m in SINGLES},
                       rk=rk, overlap=dict(results["sets"][name]["overlap_top1"]),
                       near_all=max(rk.values()) >= NEAR_ALL)


# -- questions and their vocabulary ---------------------------------------------------------------

def shone_alone(rows: Sequence[Mapping], winner: str, loser: str, n: int = 3) -> list[Mapping]:
    """Up to ``n`` questions whose target ``winner`` put first and ``loser`` did not."""
    return [r for r in rows if r[winner]["rank"] == 1 and r[loser]["rank"] != 1][:n]


def generic_targets(rows: Sequence[Mapping], method: str) -> dict:
    """Questions whose target concept is a one-word name (a generic label): ``{"rows", "found":
    how many of them ``method`` put in its list}``."""
    gen = [r for r in rows if "_" not in r["gold"]]
    return {"rows": gen, "found": sum(r[method]["rank"] is not None for r in gen)}


def lexical_overlap(question: str, text: str) -> float:
    """Share of the question's content words that also occur in ``text`` (0 when it has none)."""
    words = content_words(question)
    return len(words & content_words(text)) / len(words) if words else 0.0


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
    items = [{"overlap": lexical_overlap(r["question"], desc[r["gold"]]),
              **{m: r[m]["rank"] for m in r if isinstance(r[m], Mapping)}} for r in result_set["per_question"]]
    low, high, median = split_halves(items, "overlap")
    halves = [{"name": name, "n": len(group),
               "overlap": sum(x["overlap"] for x in group) / len(group) if group else None,
               "top1": {m: (sum(x[m] == 1 for x in group) / len(group) if group else None) for m in methods}}
              for name, group in (("low", low), ("high", high))]
    return {"mean": sum(x["overlap"] for x in items) / len(items), "median": median, "halves": halves}


def leakage_reading(halves: Mapping, method: str = "bm25", gap: float = LEAKAGE_GAP) -> dict:
    """Whether ``method``'s first-place hits fall, rise or barely change from the upper half of
    :func:`overlap_halves` to the lower: ``{"kind": "falls" | "rises" | "flat", "high", "low"}``
    (a change of at least ``gap`` counts)."""
    low, high = (h["top1"][method] for h in halves["halves"])
    kind = "falls" if high - low >= gap else "rises" if low - high >= gap else "flat"
    return {"kind": kind, "high": high, "low": low}


# -- intervals, hashes, latency, versions ---------------------------------------------------------

def interval_widths(sets: Mapping[str, Report], method: str, measures: Sequence[str]) -> dict:
    """The width of ``method``'s 95% interval on each of ``measures``, in every report, and the
    first measure whose interval has a width in every one (a measure at its ceiling in every
    question, such as a recall of 1, has an interval of width 0, which illustrates nothing).

    Returns ``{"widths": {measure: {set: width}}, "illustrative": measure or None,
    "degenerate": [measures whose interval is a point in some set]}``."""
    widths = {x: {s: r.interval(method, x)[1] - r.interval(method, x)[0] for s, r in sets.items()}
              for x in measures}
    degenerate = [x for x, w in widths.items() if any(v <= 0 for v in w.values())]
    illustrative = next((x for x in measures if x not in degenerate), None)
    return {"widths": widths, "illustrative": illustrative, "degenerate": degenerate}


def at_ceiling(report: Report, method: str, measure: str) -> bool:
    """Whether ``method`` scores the maximum (1) on ``measure`` over the whole set."""
    return report.mean(method, measure) >= 1.0


def hash_rows(lock: Mapping, provenance: Mapping) -> list[dict]:
    """Each frozen gold file: ``{"file", "frozen", "measured" (None when not recorded), "match"}``."""
    used = provenance["gold_sha256"]
    return [{"file": f, "frozen": h, "measured": used.get(f), "match": used.get(f) == h}
            for f, h in lock["files"].items()]


def stage_paradoxes(latency_ms: Mapping, parts: Mapping[str, Sequence[str]]) -> list[dict]:
    """Pipelines whose median is below the median of one of their own parts.

    ``parts`` maps a pipeline stage (``vector_full``) to the stages it contains (``encode``,
    ``knn``). Medians of separately timed passes do not add up, and on a shared machine a part
    can come out slower than the whole; the page must say so rather than leave it unexplained.
    Returns ``[{"whole", "part", "whole_median", "part_median"}]``."""
    return [{"whole": whole, "part": part, "whole_median": latency_ms[whole]["median"],
             "part_median": latency_ms[part]["median"]}
            for whole, inside in parts.items() for part in inside
            if latency_ms[part]["median"] > latency_ms[whole]["median"]]


#: The stages each timed pipeline contains.
PIPELINES = {"vector_full": ("encode", "knn"), "hybrid_full": ("encode", "knn", "bm25")}


def latency(latency_ms: Mapping, target: float = FLOOR_TARGET) -> dict:
    """``{"ratios": median over the HTTP floor by query stage, "missed": [the database queries
    (bm25, knn) above ``target`` times the floor], "paradoxes": :func:`stage_paradoxes`,
    "costliest_vector": the vector path's stage with the highest median (encode or knn)}``."""
    ratios = latency_ms["ratio_to_floor"]
    return {"ratios": ratios, "target": target, "missed": [k for k in ("bm25", "knn") if ratios[k] > target],
            "paradoxes": stage_paradoxes(latency_ms, PIPELINES),
            "costliest_vector": max(PIPELINES["vector_full"], key=lambda s: latency_ms[s]["median"])}


def versions(vs: Mapping) -> dict:
    """The BM25 ranks of the published questions in each ArcadeDB version
    (``version_sensitivity.json``): ``{"n_versions", "n_questions", "moved": questions whose rank
    differs between versions, "same_fields", "stable": no rank moved and every version agrees
    with the published ranks equally, "exact": that agreement (None when not stable),
    "n_variants", "best_variant": the best agreement of a load or index variant (None without
    any), "unexplained": the best agreement is below every question}``."""
    agree, names = vs["comparison"]["agreement"], vs["versions"]
    published = vs["published"]["ranks"]
    moved = sum(1 for q in published if len({vs["runs"][v]["ranks"][q] for v in names}) > 1)
    exact = {agree[v]["exact"] for v in names}
    stable = moved == 0 and len(exact) == 1
    variants = [v["exact"] for k, v in agree.items() if k not in names]
    best = max(variants) if variants else None
    return {"n_versions": len(names), "n_questions": len(published), "moved": moved,
            "same_fields": bool(vs["field_mapping"]["same_set"]), "stable": stable,
            "exact": next(iter(exact)) if stable else None, "n_variants": len(variants), "best_variant": best,
            "unexplained": best is not None and best < len(published)}
