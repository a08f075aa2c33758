"""What the judgments chapter (notebooks/julgamentos.ipynb) states, computed from this study's
``results.json``: the headline (:func:`headline`, also on the home page), the agreement with and
without the pairs both assessors gave 0 (:func:`kappa_drop`, :func:`kappa_band`), how the third
assessor decided (:func:`adjudication`), how packet 21's new grades moved (:func:`regrade_drift`),
the fusion against the best single method under every regime and tie-break
(:func:`fusion_by_regime`, :func:`fusion_by_tiebreak`), how much the tie-break rule changes the
metrics (:func:`tiebreak_sensitivity`), and what the page's "O essencial" states, with its 95%
intervals (:func:`essential`; a share's interval by :func:`wilson`). Issue 41: the headline under
the assessors' own grades, min(A, B) and mean(A, B) (:func:`assessor_keys`, from
``assessor_keys.json``), who graded each round and how blind it was (:func:`assessors`, from the
recorded fields), and the blind regrade once graded (:func:`blind_regrade`).

Score blocks (a regime's metrics and paired tests) are read through
:class:`gabarito.measure.report.Report`, and the fusion's verdict is the flagship's
(:func:`gabarito.publish.fusion_verdict.fusion_verdict`: Holm-corrected, at ``ALPHA``). Every
threshold a sentence depends on is stated once, below; the page writes the words.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from gabarito.core.methods import Method, among, declare, fused as fusion
from studies.judgments.methods import RUNS
from gabarito.core.page_guard import stored
from gabarito.errors import GabaritoError
from gabarito.measure.report import Report
from gabarito.measure.stats import Z95, wilson  # noqa: F401 - the share's interval (compute_acceptable)
from gabarito.publish.verdicts import span
from gabarito.publish.fusion_verdict import SINGLES, FusionVerdict, fusion_verdict

__all__ = ["BLINDNESS_KINDS", "EXPOSED", "KAPPA_BANDS", "LEANS_HIGH", "MAX_LIKE", "MEASURE", "MECHANICAL",
           "adjudication", "assessor_keys", "assessors", "blind_regrade", "essential", "fusion_by_regime",
           "fusion_by_tiebreak", "headline", "kappa_band", "kappa_drop", "model_of", "regrade_drift",
           "tiebreak_sensitivity", "wilson"]

#: The measure the headline and the fusion tables read.
MEASURE = "nDCG@10"
#: Landis and Koch's names for bands of kappa: up to each bound, its name; above the last,
#: :data:`TOP_BAND`.
KAPPA_BANDS = ((0.2, "leve"), (0.4, "razoável"), (0.6, "moderada"), (0.8, "substancial"))
TOP_BAND = "quase perfeita"
#: A share of disagreements the third assessor settled on the higher grade from which the page
#: says the tie-break worked as max(A, B), and from which it says it leaned to the higher grade.
MAX_LIKE = 0.9
LEANS_HIGH = 0.6
#: The regimes whose grades a tie-break rule changes, and the mechanical rules compared with the
#: third assessor's.
TIEBREAK_REGIMES = ("graded", "full")
MECHANICAL = ("min", "max")
#: How blind a round was, read from the start of its recorded ``blindness`` text: the assessors
#: worked where the gold could be opened (``instruction``), or alone in isolated folders.
BLINDNESS_KINDS = (("instructions only", "instruction"), ("isolated folders", "isolated"))
#: What a round's recorded ``blindness`` text says could be opened, by the words it uses.
EXPOSED = {"gold files": "gold", "packets/key.json": "key", "pools/sources.json": "sources"}
#: A recorded assessor: the model and its maker first, ``"Claude (Anthropic), ..."``.
MODEL = re.compile(r"^\s*([^,(]+?)\s*\(([^)]+)\)")


def _fused(results: Mapping) -> Method:
    return fusion(results["provenance"]["parameters"]["cutoff"], SINGLES)


def methods(results: Mapping) -> list[Method]:
    """The methods the study scored, in its order, as the values its script declares
    (:data:`studies.judgments.methods.RUNS`: the two singles and their fusions)."""
    ran = declare(RUNS)
    return [among(key, ran) for key in results["provenance"]["parameters"]["methods"]]


def headline(results: Mapping, measure: str = MEASURE) -> dict:
    """The chapter's headline: the range of the assessors' linearly weighted kappa over the gold
    sets (``kappa_min``, ``kappa_max``) and without the pairs both gave 0 (``kappa_nonzero_min``,
    ``kappa_nonzero_max``), how many of BM25's wrong first places were judged acceptable (grade
    >= 1: ``bm25_misses``, ``bm25_acceptable``), the gold sets where the order of the methods by
    ``measure`` changes from the single answer to graded judgments (``order_changed``), the sets
    (``sets``) and the third assessor's decisions (``adjudication``: ``{"higher", "n"}``)."""
    sets = list(results["sets"])
    agreement = [results["sets"][s]["agreement"] for s in sets]
    kappa = span(a["linear"]["kappa"] for a in agreement)
    nonzero = span(a["either_nonzero"]["linear"]["kappa"] for a in agreement)
    misses = [results["sets"][s]["acceptable_misses"]["bm25"] for s in sets]
    changed = [s for s in sets if results["sets"][s]["regimes"]["single"]["order"][measure]
               != results["sets"][s]["regimes"]["graded"]["order"][measure]]
    d = results["adjudication"]
    return {"sets": sets, "kappa_min": kappa[0], "kappa_max": kappa[1],
            "kappa_nonzero_min": nonzero[0], "kappa_nonzero_max": nonzero[1],
            "bm25_misses": sum(m["misses"] for m in misses), "bm25_acceptable": sum(m["acceptable"] for m in misses),
            "order_changed": changed, "adjudication": {"higher": d["higher"], "n": d["n"]}}


#: Where ``run_judgments.py`` stores, per method, its wrong first places over every gold set and how
#: many of them the assessors judged acceptable, with the share's Wilson interval.
ACCEPTABLE = "acceptable_misses_all_sets"


def compute_acceptable(results: Mapping) -> dict:
    """Per method: its wrong first places summed over the gold sets (``misses``), those judged
    acceptable (grade >= 1), the share and its 95% Wilson interval (what the study stores as
    :data:`ACCEPTABLE`)."""
    sets = [results["sets"][s]["acceptable_misses"] for s in results["sets"]]
    out = {}
    for method in sets[0]:
        misses, ok = sum(s[method]["misses"] for s in sets), sum(s[method]["acceptable"] for s in sets)
        out[method] = {"misses": misses, "acceptable": ok, "share": ok / misses if misses else 0.0,
                       "ci95": list(wilson(ok, misses))}
    return out


def kappa_band(kappa: float) -> str:
    """Landis and Koch's name for the agreement a kappa measures (``"moderada"``, ...)."""
    return next((name for bound, name in KAPPA_BANDS if kappa <= bound), TOP_BAND)


def kappa_drop(results: Mapping) -> dict:
    """The linearly weighted kappa without the pairs both assessors gave 0: ``{"fell": [sets
    where it is below the kappa over all pairs], "everywhere": it fell in every set, "n_sets",
    "zeros": pairs dropped in the round, "all": {"kappa", "band", "n_pairs"}, "nonzero":
    {"kappa", "band", "unweighted", "n_pairs"}}`` (the round's totals, packets 01 to 20)."""
    sets = results["sets"]
    fell = [s for s, x in sets.items()
            if x["agreement"]["either_nonzero"]["linear"]["kappa"] < x["agreement"]["linear"]["kappa"]]
    total, nz = results["agreement"], results["agreement"]["either_nonzero"]
    return {"fell": fell, "everywhere": len(fell) == len(sets), "n_sets": len(sets),
            "zeros": total["n_pairs"] - nz["n_pairs"],
            "all": {"kappa": total["linear"]["kappa"], "band": kappa_band(total["linear"]["kappa"]),
                    "n_pairs": total["n_pairs"]},
            "nonzero": {"kappa": nz["linear"]["kappa"], "band": kappa_band(nz["linear"]["kappa"]),
                        "unweighted": nz["unweighted"]["kappa"], "n_pairs": nz["n_pairs"]}}


def adjudication(d: Mapping) -> dict:
    """How the third assessor settled one round's disagreements (``results["adjudication"]`` or
    packet 21's): ``{"rows": [{"low", "high" (None on the total row), "n", "higher", "lower",
    "between", "outside"}] (one per kind of disagreement, then the total), "share": the share
    settled on the higher grade, "kind": "max" (at least :data:`MAX_LIKE`), "leans" (at least
    :data:`LEANS_HIGH`) or "neutral", "zero_one": {"n", "higher"} of the 0-against-1 ones}``."""
    counts = ("n", "higher", "lower", "between", "outside")
    rows = [{"low": kind.split("-")[0], "high": kind.split("-")[1], **{c: x[c] for c in counts}}
            for kind, x in d["by_kind"].items()]
    rows.append({"low": None, "high": None, **{c: d[c] for c in counts}})
    share = d["higher"] / d["n"] if d["n"] else 0.0
    kind = "max" if share >= MAX_LIKE else "leans" if share >= LEANS_HIGH else "neutral"
    zero_one = d["by_kind"].get("0-1", {"n": 0, "higher": 0})
    return {"rows": rows, "share": share, "kind": kind, "zero_one": {"n": zero_one["n"], "higher": zero_one["higher"]}}


def regrade_drift(decoys_vs_frozen: Mapping) -> dict:
    """Packet 21's new final grades of already judged candidates against their frozen grades:
    ``{"n", "same", "same_share", "up", "down", "direction": "higher" | "lower" | "mixed"}`` (the
    confusion matrix has the new grade in rows and the frozen one in columns)."""
    m = decoys_vs_frozen["final"]["confusion"]
    size = range(len(m))
    up = sum(m[i][j] for i in size for j in size if i > j)
    down = sum(m[i][j] for i in size for j in size if i < j)
    n, same = decoys_vs_frozen["n"], decoys_vs_frozen["same_final_grade"]
    return {"n": n, "same": same, "same_share": same / n if n else 0.0, "up": up, "down": down,
            "direction": "higher" if up > down else "lower" if down > up else "mixed"}


def fusion_by_regime(results: Mapping, regimes: Sequence[str], measure: str = MEASURE,
                     singles: Sequence[str] = SINGLES) -> dict[str, dict[str, FusionVerdict]]:
    """``{set: {regime: the fusion against the best single method on measure}}``."""
    fused = _fused(results)
    return {s: {r: fusion_verdict(Report.from_dict(x["regimes"][r]), fused, singles, measure) for r in regimes}
            for s, x in results["sets"].items()}


def fusion_by_tiebreak(results: Mapping, rules: Sequence[str], regime: str = "graded", measure: str = MEASURE,
                       singles: Sequence[str] = SINGLES) -> dict[str, dict[str, FusionVerdict]]:
    """``{set: {rule: the fusion against the best single method}}`` in ``regime`` under each
    tie-break ``rule`` (``adjudicated``, ``min``, ``max``)."""
    fused = _fused(results)
    return {s: {k: fusion_verdict(Report.from_dict(x["adjudication_regimes"][k][regime]), fused, singles, measure)
                for k in rules} for s, x in results["sets"].items()}


def tiebreak_sensitivity(results: Mapping, methods: Sequence[str], rules: Sequence[str],
                         measure: str = MEASURE) -> dict:
    """Each method's ``measure`` under each tie-break rule, against the third assessor's.

    Returns ``{"rows": [{"set", "regime", "rule", "values": {method: mean}, "best"}],
    "order_changed": [(set, regime, rule) whose order of the methods differs from the third
    assessor's], "n_combinations": sets x regimes x mechanical rules, "largest": {"diff", "set",
    "regime", "rule", "method"} (the largest change of one method's mean; None when none)}``."""
    rows, changed, largest = [], [], None
    for s, x in results["sets"].items():
        for r in TIEBREAK_REGIMES:
            base = x["adjudication_regimes"]["adjudicated"][r]
            for k in rules:
                block = x["adjudication_regimes"][k][r]
                rep = Report.from_dict(block)
                rows.append({"set": s, "regime": r, "rule": k, "values": {m: rep.mean(m, measure) for m in methods},
                             "best": block["order"][measure][0]})
                if block["order"][measure] != base["order"][measure]:
                    changed.append((s, r, k))
                for m in methods:
                    diff = abs(rep.mean(m, measure) - base["metrics"][m][measure])
                    if diff > (largest["diff"] if largest else 0.0):
                        largest = {"diff": diff, "set": s, "regime": r, "rule": k, "method": m}
    return {"rows": rows, "order_changed": changed,
            "n_combinations": len(results["sets"]) * len(TIEBREAK_REGIMES) * len(MECHANICAL), "largest": largest}


#: What a kappa of this study is computed over (the ledger's variant): weight × pairs kept.
KAPPA_VARIANTS = {("linear", "all"): "linear, all pairs", ("linear", "either_nonzero"): "linear, either non-zero",
                  ("unweighted", "all"): "unweighted, all pairs",
                  ("unweighted", "either_nonzero"): "unweighted, either non-zero"}


def kappa_identity(subset: str, weight: str = "linear", pairs: str = "all"):
    """The ledger identity of a kappa of assessors A and B: ``subset`` names the pairs' set (a gold
    set of round 1, or ``"round 1"`` for packets 01 to 20), ``weight`` ``linear`` or ``unweighted``,
    ``pairs`` ``all`` or ``either_nonzero`` (without the pairs both gave 0)."""
    from gabarito.publish.ledger import Identity

    return Identity("judgments", "kappa", collection=subset, method="assessors A and B",
                    variant=KAPPA_VARIANTS[weight, pairs])


def kappa_key(subset: str | None, weight: str = "linear", pairs: str = "all") -> list[str]:
    """Where that kappa sits in the results (``subset`` None: the round's total)."""
    base = ["agreement"] if subset is None else ["sets", subset, "agreement"]
    return base + ([] if pairs == "all" else [pairs]) + [weight, "kappa"]


def _kappa(block: Mapping) -> dict:
    k = block["linear"]
    return {"kappa": k["kappa"], "ci95": tuple(k["ci95"]), "band": kappa_band(k["kappa"]), "n_pairs": block["n_pairs"]}


def essential(results: Mapping, measure: str = MEASURE) -> dict:
    """What the chapter's "O essencial" states, each figure with its 95% interval.

    ``{"n_pairs": pairs of packets 01 to 20, "sets", "order_changed" (as :func:`headline`),
    "kappa_all", "kappa_nonzero": {"kappa", "ci95", "band", "n_pairs"} (the round's linearly
    weighted kappa over all pairs, and without the pairs both gave 0), "bm25": {"misses",
    "acceptable", "share", "ci95"} (BM25's wrong first places judged acceptable, Wilson interval, as
    the study stored them: :data:`ACCEPTABLE`),
    "first_set": {"set", "changed", "bm25_single", "bm25_graded" (BM25's place, 1-based, by
    ``measure``), "best_graded", "fusion": the fusion against the best single method, graded},
    "adjudication": {"higher", "n", "share", "kind"}, "tiebreak": {"changed", "n"} (combinations
    whose order changes under min(A, B) or max(A, B), of all)}``; the first set is the flagship's."""
    h = headline(results, measure)
    first = h["sets"][0]
    regimes = results["sets"][first]["regimes"]
    single, graded = regimes["single"]["order"][measure], regimes["graded"]["order"][measure]
    methods = results["provenance"]["parameters"]["methods"]
    sens = tiebreak_sensitivity(results, methods, ("adjudicated",) + MECHANICAL, measure)
    adj = adjudication(results["adjudication"])
    bm25 = stored(results, ACCEPTABLE)["bm25"]
    if (bm25["misses"], bm25["acceptable"]) != (h["bm25_misses"], h["bm25_acceptable"]):
        raise GabaritoError("the stored count of BM25's acceptable misses differs from the gold sets' own")
    return {"n_pairs": results["n_pairs"], "sets": h["sets"], "order_changed": h["order_changed"],
            "kappa_all": _kappa(results["agreement"]), "kappa_nonzero": _kappa(results["agreement"]["either_nonzero"]),
            "bm25": {**bm25, "ci95": tuple(bm25["ci95"])},
            "first_set": {"set": first, "changed": first in h["order_changed"],
                          "bm25_single": single.index("bm25") + 1, "bm25_graded": graded.index("bm25") + 1,
                          "best_graded": graded[0],
                          "fusion": fusion_by_regime(results, ["graded"], measure)[first]["graded"]},
            "adjudication": {**h["adjudication"], "share": adj["share"], "kind": adj["kind"]},
            "tiebreak": {"changed": len(sens["order_changed"]), "n": sens["n_combinations"]}}


def _place(order: Sequence[str], method: str) -> int:
    return list(order).index(method) + 1


def assessor_keys(keys: Mapping, measure: str = MEASURE, method: str = "bm25") -> dict:
    """The headline under each judgment key of ``assessor_keys.json`` (the rule in use, min(A, B),
    mean(A, B): :mod:`studies.judgments.keys`): ``{"sets", "first_set", "rows": {key:
    {"order_changed": [sets whose order by measure differs from the single answer's], "single",
    "graded" (``method``'s place, 1-based, in the first set), "best_graded", "moved": pairs graded
    otherwise than the rule, "largest": (the largest change of a method's mean on measure from the
    rule's, set, method)}}, "same": [keys whose headline is the rule's: the same sets change and
    ``method`` keeps its places], "differ": [the others], "holds": no key differs, "largest": the
    largest of the other keys' ``largest`` (None with no other key)}``."""
    sets = list(keys["sets"])
    first = sets[0]
    rows = {}
    for k in keys["sets"][first]["keys"]:
        changed = [s for s in sets if keys["sets"][s]["single"]["order"][measure]
                   != keys["sets"][s]["keys"][k]["graded"]["order"][measure]]
        graded = keys["sets"][first]["keys"][k]["graded"]["order"][measure]
        rows[k] = {"order_changed": changed, "single": _place(keys["sets"][first]["single"]["order"][measure], method),
                   "graded": _place(graded, method), "best_graded": graded[0], "moved": keys["moved"][k]["n"]}
        base = (keys["sets"][s]["keys"]["rule"]["graded"]["metrics"] for s in sets)
        mine = (keys["sets"][s]["keys"][k]["graded"]["metrics"] for s in sets)
        rows[k]["largest"] = max((abs(m[x][measure] - b[x][measure]), s, x)
                                 for s, b, m in zip(sets, base, mine) for x in m)
    claim = {k: (r["order_changed"], r["single"], r["graded"]) for k, r in rows.items()}
    same = [k for k in rows if k != "rule" and claim[k] == claim["rule"]]
    differ = [k for k in rows if k not in ("rule", *same)]
    largest = max((r["largest"] for k, r in rows.items() if k != "rule"), default=None)
    return {"sets": sets, "first_set": first, "rows": rows, "same": same, "differ": differ, "holds": not differ,
            "largest": largest}


def model_of(described: str) -> tuple[str, str]:
    """``(model, maker)`` of a recorded assessor, ``"Claude (Anthropic), ..."``; refused otherwise."""
    m = MODEL.match(described)
    if not m:
        raise GabaritoError(f"an assessor recorded without its model first: {described[:60]!r}")
    return m.group(1), m.group(2)


def assessors(results: Mapping) -> dict:
    """Who graded each round and how blind it was, read from the recorded fields (``assessors``,
    ``assessors_packet_21``, ``blindness``): ``{"rounds": {round: {"roles": [A, B, C], "models":
    [(model, maker)], "blindness": "instruction" | "isolated", "exposed": [of :data:`EXPOSED`'s
    values, what could be opened]}}, "models": every round's, "same_models": one set of models
    in every round}``. A blindness text of no known kind is refused."""
    who = {"packets_01_20": results["assessors"], "packet_21": results["assessors_packet_21"]}
    rounds = {}
    for r, roles in who.items():
        text = results["blindness"][r]
        kind = next((k for prefix, k in BLINDNESS_KINDS if text.startswith(prefix)), None)
        if kind is None:
            raise GabaritoError(f"round {r}: blindness of no known kind: {text[:60]!r}")
        rounds[r] = {"roles": sorted(roles), "models": sorted({model_of(d) for d in roles.values()}),
                     "blindness": kind, "exposed": [v for w, v in EXPOSED.items() if w in text]}
    models = sorted({m for x in rounds.values() for m in x["models"]})
    return {"rounds": rounds, "models": models,
            "same_models": all(x["models"] == models for x in rounds.values())}


def blind_regrade(blind: Mapping, measure: str = MEASURE) -> dict:
    """What the blind regrade (``blind_regrade.json``) says: ``{"n_pairs", "n_assessors": the blind
    assessors recorded, "agreement": {block:
    {"kappa", "ci95", "band", "n_pairs"}} (linearly weighted, over every drawn pair: blind A against
    B, each against its non-blind letter, min and mean against the non-blind ones, min against the
    grade in use), "overridden": {"n", "kept": pairs the blind min(A, B) still grades 2, "share"},
    "headline": :func:`assessor_keys` of the blind grades}``."""
    over = blind["overridden"]
    kept = over["min"].get("2", 0)
    return {"n_pairs": blind["n_pairs"], "n_assessors": len(blind["assessors"]),
            "agreement": {name: _kappa(block) for name, block in blind["agreement"]["all"].items()},
            "overridden": {"n": over["n"], "kept": kept, "share": kept / over["n"] if over["n"] else 0.0},
            "headline": assessor_keys(blind, measure)}
