"""What the judgments chapter's chart, tables and detail boxes state (notebooks/julgamentos.ipynb),
beside the headline findings of :mod:`studies.judgments.findings`: each function returns the rows or
the figures one table, chart or paragraph shows, read from this study's ``results.json``.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from studies.judgments.findings import MEASURE, adjudication, assessors, regrade_drift

__all__ = ["acceptable_misses", "adjudications", "agreement_rows", "assessor_records", "chart_series", "confusion",
           "gold_rejected", "graders", "packet_21", "pool_rows", "regime_tables", "round_record"]

#: The rounds of judging, as the results name them.
ROUNDS = ("packets_01_20", "packet_21")


def chart_series(results: Mapping, methods: Sequence[str], regime: str, measure: str = MEASURE) -> dict:
    """The chart of one regime: ``{"means": {method: [its mean on measure in each gold set]},
    "ci95": {method: [its 95% interval in each set]}}``, the sets in the results' order."""
    blocks = [x["regimes"][regime] for x in results["sets"].values()]
    return {"means": {m: [b["metrics"][m][measure] for b in blocks] for m in methods},
            "ci95": {m: [b["ci95"][m][measure] for b in blocks] for m in methods}}


def pool_rows(results: Mapping) -> list[dict]:
    """One row per gold set of the pool's table: ``{"set", "n_questions", "pairs" (judged),
    "known_answers" (from packet 21), "pool_mean" (concepts per question), "relevant_mean"
    (relevant ones per question), "more_than_one" (questions with more than one relevant)}``."""
    return [{"set": s, "n_questions": x["n_questions"], "pairs": x["pool"]["pairs"], "known_answers": x["known_answers"],
             "pool_mean": x["pool"]["mean"], "relevant_mean": x["relevant_per_question"]["mean"],
             "more_than_one": x["relevant_per_question"]["with_more_than_one"]}
            for s, x in results["sets"].items()]


def acceptable_misses(results: Mapping, methods: Sequence[str]) -> dict[str, dict[str, dict]]:
    """``{set: {method: {"misses": wrong first places, "acceptable": those graded 1 or 2, "share":
    acceptable / misses (None with no miss), "full_answers": those graded 2}}}``."""
    out = {}
    for s, x in results["sets"].items():
        rows = {}
        for m in methods:
            a = x["acceptable_misses"][m]
            rows[m] = {"misses": a["misses"], "acceptable": a["acceptable"],
                       "share": a["acceptable"] / a["misses"] if a["misses"] else None,
                       "full_answers": a["full_answers"]}
        out[s] = rows
    return out


def gold_rejected(results: Mapping) -> dict:
    """The gold concepts every assessor who judged them graded 0: ``{"rows": [{"set", "question",
    "packet", "text", "doc", "grades": the grades of A, B and C that were given}], "judged": gold
    concepts judged, "n_expected": questions, "all_judged": every question's gold concept judged}``."""
    rows = [{"set": r["set"], "question": r["question"], "packet": r["packet"], "text": r["text"], "doc": r["doc"],
             "grades": [g for g in (r["a"], r["b"], r["c"]) if g is not None]} for r in results["gold_rejected"]]
    return {"rows": rows, "judged": results["expected_judged"], "n_expected": results["n_expected"],
            "all_judged": results["expected_judged"] == results["n_expected"]}


def graders(results: Mapping) -> dict:
    """How many graded: ``{"per_pair": the assessors who graded every pair of packets 01 to 20 (its
    recorded roles but the last, the third assessor, who graded only the disagreements),
    "packet_21": the same count for packet 21's new assessors, "rounds": rounds of judging}``."""
    rounds = assessors(results)["rounds"]
    return {"per_pair": len(rounds[ROUNDS[0]]["roles"]) - 1, "packet_21": len(rounds[ROUNDS[1]]["roles"]) - 1,
            "rounds": len(rounds)}


def round_record(results: Mapping) -> dict:
    """The first round (packets 01 to 20) as recorded: ``{"n_pairs", "n_disagreements" (settled by
    the third assessor), "judged_on"}``."""
    return {"n_pairs": results["n_pairs"], "n_disagreements": results["n_disagreements"],
            "judged_on": results["judged_on"]}


def _agreement_row(block: Mapping) -> dict:
    nz = block["either_nonzero"]
    return {"n_pairs": block["n_pairs"], "observed": block["observed_agreement"],
            "unweighted": {"kappa": block["unweighted"]["kappa"], "ci95": block["unweighted"]["ci95"]},
            "linear": {"kappa": block["linear"]["kappa"], "ci95": block["linear"]["ci95"]},
            "nonzero": {"n_pairs": nz["n_pairs"],
                        "unweighted": {"kappa": nz["unweighted"]["kappa"], "ci95": nz["unweighted"]["ci95"]},
                        "linear": {"kappa": nz["linear"]["kappa"], "ci95": nz["linear"]["ci95"]}}}


def agreement_rows(results: Mapping) -> list[dict]:
    """Assessors A and B's agreement, one row per gold set and then the round's total (``"set"``
    None): ``{"set", "n_pairs", "observed" (the share of pairs graded alike), "unweighted",
    "linear": {"kappa", "ci95"}, "nonzero": {"n_pairs", "unweighted", "linear"} (without the pairs
    both gave 0)}``."""
    return ([{"set": s, **_agreement_row(x["agreement"])} for s, x in results["sets"].items()]
            + [{"set": None, **_agreement_row(results["agreement"])}])


def confusion(results: Mapping) -> dict:
    """A's grades against B's in each gold set: ``{"grades": the first set's grades (the columns),
    "sets": [{"set", "rows": [(A's grade, [pairs B graded each grade])]}]}``."""
    sets = [{"set": s, "rows": list(zip(x["agreement"]["grades"], x["agreement"]["confusion"]))}
            for s, x in results["sets"].items()]
    return {"grades": next(iter(results["sets"].values()))["agreement"]["grades"], "sets": sets}


def adjudications(results: Mapping) -> dict:
    """How the third assessor settled each round (:data:`ROUNDS`): :func:`adjudication` of the
    round, with its disagreements (``n``) and those settled on the higher grade (``higher``)."""
    blocks = {ROUNDS[0]: results["adjudication"], ROUNDS[1]: results["packet_21"]["adjudication"]}
    return {r: {**adjudication(d), "n": d["n"], "higher": d["higher"]} for r, d in blocks.items()}


def assessor_records(results: Mapping) -> dict:
    """Who graded and how blind each round was, as recorded (English text): ``{"assessors":
    [(round, role, text)], "blindness": [(round, text)]}``."""
    who = {ROUNDS[0]: results["assessors"], ROUNDS[1]: results["assessors_packet_21"]}
    return {"assessors": [(r, k, v) for r, roles in who.items() for k, v in roles.items()],
            "blindness": list(results["blindness"].items())}


def packet_21(results: Mapping) -> dict:
    """Packet 21 (the gold concepts no method found, hidden among judged candidates): ``{"n_known",
    "n_decoys", "decoys_per_known", "n_pairs", "n_disagreements", "judged_on",
    "known_rejected_by_both", "agreement": {block: row of :func:`agreement_rows`} (the new A and B:
    ``all``, ``known``, ``decoy``), "vs_frozen": {block: row} (the new grades against the frozen
    ones: ``final``, ``a``, ``b``), "drift": :func:`regrade_drift`}``."""
    p = results["packet_21"]
    vs = p["decoys_vs_frozen"]
    return {"n_known": p["n_known"], "n_decoys": p["n_decoys"], "decoys_per_known": p["n_decoys"] // p["n_known"],
            "n_pairs": p["n_pairs"], "n_disagreements": p["n_disagreements"],
            "judged_on": results["judged_on_packet_21"], "known_rejected_by_both": p["known_rejected_by_both"],
            "agreement": {k: _agreement_row(b) for k, b in p["agreement"].items()},
            "vs_frozen": {k: _agreement_row(b) for k, b in vs.items() if isinstance(b, Mapping) and "linear" in b},
            "drift": regrade_drift(vs)}


def regime_tables(results: Mapping, methods: Sequence[str], regimes: Sequence[str]) -> list[dict]:
    """One table per gold set of every measure under every regime: ``[{"set", "n_questions", "rows":
    [{"regime", "measure", "values": {method: mean}, "ci95": {method: interval}, "best": the first
    method of the regime's order on the measure}]}]``."""
    measures = results["provenance"]["parameters"]["measures"]
    out = []
    for s, x in results["sets"].items():
        rows = [{"regime": r, "measure": meas, "values": {m: x["regimes"][r]["metrics"][m][meas] for m in methods},
                 "ci95": {m: x["regimes"][r]["ci95"][m][meas] for m in methods},
                 "best": x["regimes"][r]["order"][meas][0]}
                for r in regimes for meas in measures]
        out.append({"set": s, "n_questions": x["n_questions"], "rows": rows})
    return out
