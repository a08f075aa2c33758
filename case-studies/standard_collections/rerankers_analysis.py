"""What the reranking page computes from ``rerankers.json`` (the cross-encoder trained here):
small reshapes of the committed results, so the notebook only reads and draws."""

from __future__ import annotations

from collections.abc import Mapping

STAGES = ("bm25", "dense", "rrf")


def folds(res: Mapping) -> list[str]:
    return list(res["folds"])


def ns(res: Mapping) -> list[int]:
    return list(res["provenance"]["parameters"]["ns"])


def variant(stage: str, n: int) -> str:
    return f"{stage}+ce@{n}"


def test_row(stage_result: Mapping, stage: str, n: int, measure: str) -> dict:
    """The paired test of the reranked top ``n`` against its first stage, oriented as
    reranked minus first stage (wins are questions the second reading improved)."""
    name = variant(stage, n)
    for t in stage_result["tests"]:
        if t["measure"] != measure:
            continue
        if t["a"] == name and t["b"] == stage:
            return {"diff": t["mean_diff"], "ci": [t["ci_low"], t["ci_high"]], "p_holm": t["p_holm"],
                    "gained": t["wins"], "lost": t["losses"], "same": t["ties"]}
        if t["a"] == stage and t["b"] == name:
            return {"diff": -t["mean_diff"], "ci": [-t["ci_high"], -t["ci_low"]], "p_holm": t["p_holm"],
                    "gained": t["losses"], "lost": t["wins"], "same": t["ties"]}
    raise KeyError(f"no test of {name} against {stage} on {measure}")


def training_rows(res: Mapping) -> list[dict]:
    out = []
    for held, f in res["folds"].items():
        t = f["training"]
        curve = t["loss_curve"]
        out.append({"held_out": held, "train_on": f["train_on"], "pairs": t["pairs"], "steps": t["steps"],
                    "max_steps": t["config"]["max_steps"], "batch": t["config"]["batch_size"],
                    "stopped_by": t["stopped_by"], "seconds": t["train_seconds"],
                    "loss_first": curve[0][1] if curve else None, "loss_last": curve[-1][1] if curve else None,
                    "sha256": t["weights_sha256"], "reused": t.get("reused", False)})
    return out


def headline_rows(res: Mapping, measure: str = "nDCG@10", n: int = 20) -> list[dict]:
    """Per held-out collection and first stage: before, after reading the top ``n`` again, the
    difference with its interval, Holm p, gained/lost questions, and the ceiling recall@n."""
    out = []
    for held, f in res["folds"].items():
        for stage in STAGES:
            s = f["first_stages"][stage]
            t = test_row(s, stage, n, measure)
            out.append({"held_out": held, "stage": stage, "n_queries": s["n_queries"],
                        "before": s["metrics"][stage][measure], "after": s["metrics"][variant(stage, n)][measure],
                        "ceiling": s["ceiling"][f"R@{n}"] if f"R@{n}" in s["ceiling"] else None, **t})
    return out


def sweep_points(res: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """One point per (held-out collection, first stage, N): the value after reading the top N
    again, and ``before``, the first stage's own value."""
    pts = []
    for held, f in res["folds"].items():
        for stage in STAGES:
            m = f["first_stages"][stage]["metrics"]
            pts += [{"view": held, "series": stage, "n": n, "value": m[variant(stage, n)][measure],
                     "before": m[stage][measure]} for n in ns(res)]
    return pts


def cost(res: Mapping) -> dict:
    """Cost per (question, text) pair per fold, whether it was measured on a quiet machine, and
    the funnel: milliseconds per question to read the top N again, from the median fold's cost."""
    per = {held: f["cost"] for held, f in res["folds"].items()}
    values = sorted(c["ms_per_pair"] for c in per.values())
    median = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    return {"per_fold": per, "median_ms_per_pair": median, "all_valid": all(c["valid"] for c in per.values()),
            "funnel": [{"n": n, "ms_per_question": n * median} for n in ns(res)]}


def moved_questions(res: Mapping, held: str, stage: str, *, limit: int = 5) -> dict:
    """The questions whose nDCG@10 the second reading of the top 20 raised or lowered most."""
    pq = res["folds"][held]["first_stages"][stage]["per_query_nDCG@10"]
    before, after = pq[stage], pq[variant(stage, 20)]
    deltas = sorted(((after[q] - before[q], q) for q in before), key=lambda x: (x[0], x[1]))
    row = lambda d, q: {"query": q, "before": before[q], "after": after[q], "delta": d}  # noqa: E731
    return {"gained": [row(d, q) for d, q in reversed(deltas) if d > 0][:limit],
            "lost": [row(d, q) for d, q in deltas if d < 0][:limit],
            "unchanged": sum(1 for d, _ in deltas if d == 0)}
