"""The project's rebuild budget, for its developers: how long rebuilding each study takes from
nothing (cold) and again (warm), the totals against the targets, and the site rebuild; read from
``case-studies/peers/budget.json`` (written by ``scripts/bench_cold_warm.py``) with the encoding
rate of ``case-studies/peers/encoders.json``.

    python scripts/rebuild_budget.py                              # print the Markdown block
    python scripts/rebuild_budget.py --write docs/rebuild_budget.md  # replace the block in the doc

The block sits in the doc between ``<!-- rebuild_budget:start -->`` and ``<!-- rebuild_budget:end -->``;
every figure in it is printed here, none is typed into the doc.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Mapping

from gabarito.publish.provenance import load_results
from studies.peers.cold_report import whole_report
from studies.peers.findings import by_category, onnx_gain

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "case-studies" / "peers"
START, END = "<!-- rebuild_budget:start -->", "<!-- rebuild_budget:end -->"

#: The targets (issue 14): the whole report cold, warm, and a site rebuild with no change, in seconds.
TARGETS = {"cold_total_s": 45 * 60, "warm_total_s": 3 * 60, "site_no_change_s": 15}
#: How many files a study's "not reproduced" list names in the doc.
SHOWN_FILES = 3
#: Where each number of a row comes from.
BASES = {"measured": "measured", "committed": "committed run",
         "estimated_encoding": "committed run + estimated encoding",
         "committed_no_encoding": "committed run (cold encoding not estimated)"}


#: The encoders bench's models the classic-collections study does not encode (e5, timed for the cost page).
NOT_IN_CLASSIC = ("e5",)


def encode_estimate_s(n_texts: int, encoders: Mapping, model: str) -> float:
    """Seconds to encode ``n_texts`` passages with ``model`` at its fastest measured ONNX setting
    (median round)."""
    m = encoders["models"][model]
    return n_texts / m["settings"][m["fastest_onnx_setting"]]["passages_per_s_median"]


def classic_encode_estimate_s(bm25: Mapping, encoders: Mapping) -> float:
    """The classic-collections study encodes every document and query with both models; at the
    fastest measured ONNX rate, that many texts take this many seconds."""
    texts = sum(c["n_docs"] + c["n_queries"] for c in bm25["collections"].values())
    return sum(encode_estimate_s(texts, encoders, model) for model in encoders["models"] if model not in NOT_IN_CLASSIC)


def committed_rows(budget: Mapping) -> list[dict]:
    """Studies not run cold: the committed (warm) run's wall time and phase categories."""
    return [{"study": s, "wall_s": r.get("wall_s"), "categories": by_category(r.get("phases_s"))}
            for s, r in budget["not_run_committed"].items() if r.get("wall_s") is not None]


def budget_summary(budget: Mapping, encoders: Mapping, bm25: Mapping, backend: str = "auto",
                   cold_run: Mapping | None = None) -> dict:
    """Per study, cold and warm seconds and how each is known (``measured``, or the committed warm
    run, with the classic collections' cold run estimated from the encoding rate); the totals,
    the targets and whether each is met; the slowest study warm. ``cold_run``: the whole report
    measured cold in one run (:func:`whole_report`); when given, the cold target is judged on it
    (a sound, complete run: every study ran) rather than on the sum of the studies' own cold runs."""
    rows = []
    for study, runs in budget["measured"].items():
        cold, warm = runs.get(f"cold_{backend}") or {}, runs.get(f"warm_{backend}") or {}
        torch = runs.get("cold_torch") or {}
        rows.append({"study": study, "cold_s": cold.get("wall_s"), "warm_s": warm.get("wall_s"),
                     "cold_torch_s": torch.get("wall_s"), "cold_basis": "measured", "warm_basis": "measured"})
    for r in committed_rows(budget):
        extra = classic_encode_estimate_s(bm25, encoders) if r["study"] == "standard_collections" else None
        rows.append({"study": r["study"], "warm_s": r["wall_s"], "warm_basis": "committed",
                     "cold_s": r["wall_s"] + (extra or 0.0), "cold_torch_s": None,
                     "cold_basis": "estimated_encoding" if extra else "committed_no_encoding"})
    cold = sum(r["cold_s"] or 0.0 for r in rows)
    warm = sum(r["warm_s"] or 0.0 for r in rows)
    site = budget.get("site") or {}
    whole = whole_report(cold_run)
    judged = whole["total_s"] if whole and not whole["failed"] else cold
    return {"rows": rows, "cold_total_s": cold, "warm_total_s": warm, "site_no_change_s": site.get("no_change_s"),
            "site_first_s": site.get("first_s"), "targets": TARGETS, "whole": whole,
            "met": {"cold": judged <= TARGETS["cold_total_s"], "warm": warm <= TARGETS["warm_total_s"],
                    "site": site.get("no_change_s") is not None and site["no_change_s"] <= TARGETS["site_no_change_s"]},
            "slowest_warm": max(rows, key=lambda r: r["warm_s"] or 0.0)["study"] if rows else None}


def slowest_categories(budget: Mapping, study: str, n: int = 3) -> list[tuple[str, float]]:
    """The ``n`` costliest phase categories of a study's committed run (what holds its warm time)."""
    phases = (budget["not_run_committed"].get(study) or {}).get("phases_s")
    return sorted(by_category(phases).items(), key=lambda kv: -kv[1])[:n]


def _s(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value / 60:.1f} min" if value >= 600 else f"{value:.1f} s"


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def whole_lines(whole: Mapping | None, target_s: float) -> list[str]:
    """The doc's lines on the whole report measured cold in one run (none without it)."""
    if not whole:
        return []
    parts = ", ".join(f"{n} {_s(v)}" for n, v in whole["per_study_s"].items())
    left = "".join(f", {n} {_s(v)} (its committed run, not rerun in it)" for n, v in whole["committed_s"].items())
    out = [f"- Whole report cold, measured in one run (one empty cache shared by the studies, in the "
           f"report's order; the readers' trainings not included): {_s(whole['total_s'])} against the target of "
           f"{_s(target_s)} ({_met(whole['total_s'] <= target_s and not whole['failed'])}): {parts}{left}."]
    if whole["failed"]:
        out.append(f"- Failed in that run: {', '.join(whole['failed'])}.")
    out.append(f"- Files that run wrote: {whole['reproduced']} of {whole['files']} reproduce the committed ones "
               "(identical, same numbers or same ranks)"
               + ("." if not whole["not_reproduced"] else "; not reproduced: " + "; ".join(
                   f"{n} {whole['not_reproduced_count'][n]} "
                   f"({', '.join(line.split(': ')[0] for line in v[:SHOWN_FILES])}"
                   f"{', …' if len(v) > SHOWN_FILES else ''})" for n, v in whole["not_reproduced"].items()) + "."))
    return out


def markdown(budget: Mapping, encoders: Mapping, bm25: Mapping, cold_run: Mapping | None = None) -> str:
    """The doc's block: the per-study table, the totals against the targets (the cold one judged on
    the whole report measured in one run when there is one), the site rebuild, what holds the
    slowest study warm, and the ONNX Runtime's cold gain per study."""
    s = budget_summary(budget, encoders, bm25, cold_run=cold_run)
    t = s["targets"]
    out = ["| Study | Cold (ONNX Runtime) | Cold (torch) | Cold: basis | Warm | Warm: basis |",
           "|---|--:|--:|---|--:|---|"]
    for r in s["rows"]:
        out.append(f"| {r['study']} | {_s(r['cold_s'])} | {_s(r['cold_torch_s'])} | {BASES[r['cold_basis']]} | "
                   f"{_s(r['warm_s'])} | {BASES[r['warm_basis']]} |")
    out.append(f"| **Total** | {_s(s['cold_total_s'])} | | | {_s(s['warm_total_s'])} | |")
    out += [""] + whole_lines(s["whole"], t["cold_total_s"])
    out += [f"- Sum of the table's cold column: {_s(s['cold_total_s'])}"
            + (" (each study on a cache of its own; the basis column says which rows are measured cold)."
               if s["whole"] else
               f" against the target of {_s(t['cold_total_s'])} ({_met(s['met']['cold'])})."),
            f"- Whole report warm: {_s(s['warm_total_s'])} against the target of {_s(t['warm_total_s'])} "
            f"({_met(s['met']['warm'])})."]
    if s["site_no_change_s"] is not None:
        out.append(f"- Site rebuild with no change: {_s(s['site_no_change_s'])} (first build, running the notebooks: "
                   f"{_s(s['site_first_s'])}) against the target of {_s(t['site_no_change_s'])} "
                   f"({_met(s['met']['site'])}).")
    parts = ", ".join(f"{k} {_s(v)}" for k, v in slowest_categories(budget, s["slowest_warm"]))
    out.append(f"- Slowest study warm: {s['slowest_warm']}" + (f" ({parts})." if parts else "."))
    for g in onnx_gain(budget):
        if g["split"]:
            out.append(f"- {g['study']} cold, ONNX Runtime vs torch: model load {_s(g['model'][0])} vs "
                       f"{_s(g['model'][1])} (export and check included), encoding {_s(g['encode'][0])} vs "
                       f"{_s(g['encode'][1])}.")
        else:
            out.append(f"- {g['study']} cold, ONNX Runtime vs torch: {_s(g['total'][0])} vs {_s(g['total'][1])}.")
    return "\n".join(out) + "\n"


def replace_block(doc: str, block: str) -> str:
    """``doc`` with the text between :data:`START` and :data:`END` replaced by ``block``."""
    head, sep, rest = doc.partition(START)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise SystemExit(f"rebuild_budget: the doc has no {START} ... {END} block")
    return f"{head}{START}\n{block}{END}{tail}"


def current_block() -> str:
    """The block from the committed results."""
    cold = load_results(PEERS, "cold_report.json") if (PEERS / "cold_report.json").is_file() else None
    return markdown(load_results(PEERS, "budget.json"), load_results(PEERS, "encoders.json"),
                    load_results(PEERS, "bm25.json"), cold)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", type=Path, help="replace the block in this Markdown file")
    args = ap.parse_args(argv)
    block = current_block()
    if args.write:
        args.write.write_text(replace_block(args.write.read_text(encoding="utf-8"), block), encoding="utf-8")
    else:
        sys.stdout.write(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
