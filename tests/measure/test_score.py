import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.core.runs import Qrels, Run
from gabarito.measure.score import interval, score_runs

QRELS = Qrels.single({"q1": "A", "q2": "B", "q3": "C"})
BM25 = Run({"q1": [("A", 3.0), ("X", 2.0)], "q2": [("X", 5.0), ("Y", 4.0)], "q3": [("Z", 1.0)]})
VEC = Run({"q1": [("X", 0.9), ("A", 0.8)], "q2": [("B", 0.9)], "q3": [("C", 0.5)]})


def test_score_runs_shapes_and_hand_computed_means():
    out = score_runs({"bm25": BM25, "vector": VEC}, QRELS, ["R@1", "RR@10", "hit@1"], resamples=200, seed=7)
    assert out.n == 3 and out.queries == ("q1", "q2", "q3")
    assert out.seed == 7 and out.resamples == 200
    assert out.mean("bm25", "R@1") == 1 / 3
    assert out.mean("vector", "RR@10") == (0.5 + 1 + 1) / 3
    assert out.mean("vector", "hit@1") == 2 / 3
    lo, hi = out.interval("vector", "RR@10")
    assert lo <= out.mean("vector", "RR@10") <= hi
    assert {t["measure"] for t in out.tests} == {"R@1", "RR@10", "hit@1"}
    assert [(c.a, c.b) for c in out.comparisons("R@1")] == [("bm25", "vector")]


def test_intervals_are_the_stats_bootstrap_in_the_given_order():
    values = [1.0, 0.0, 0.5, 1.0, 0.25]
    got = interval(values, resamples=500, seed=3)
    assert got["value"] == pytest.approx(sum(values) / 5)
    assert got["ci95"] == list(stats.bootstrap_ci(values, n_resamples=500, seed=3))
    assert interval([]) is None


def test_order_changes_resampling_but_not_means_and_must_cover_the_queries():
    a = score_runs({"v": VEC}, QRELS, ["RR@10"], resamples=300, seed=1)
    b = score_runs({"v": VEC}, QRELS, ["RR@10"], resamples=300, seed=1, order=["q3", "q1", "q2"])
    assert a.metrics == b.metrics
    assert a.tests == () and b.queries == ("q3", "q1", "q2")
    with pytest.raises(GabaritoError):
        score_runs({"v": VEC}, QRELS, ["RR@10"], order=["q1"])


def test_tested_limits_the_paired_tests():
    out = score_runs({"bm25": BM25, "vector": VEC}, QRELS, ["R@1", "RR@10"], tested=["RR@10"], resamples=100)
    assert {t["measure"] for t in out.tests} == {"RR@10"}


# --- Shared draws (issue 22, item 9): the numbers of the committed results files and of
# ``gabarito evaluate`` are those of resampling each series alone, as before. ---

import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from gabarito.measure.score import intervals  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _old_interval(values, seed, resamples=10000):
    """The interval before the shared draw, written out plainly (chunks of 2,000,000 cells)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return None
    rng = np.random.default_rng(seed)
    rows = max(1, 2_000_000 // x.size)
    means = np.concatenate([x[rng.integers(0, x.size, size=(min(rows, resamples - start), x.size))].mean(axis=1)
                            for start in range(0, resamples, rows)])
    return {"value": float(x.mean()), "ci95": [float(v) for v in np.percentile(means, [2.5, 97.5])]}


def _largest_difference(a, b, where=""):
    """Largest |a - b| over the numbers of two JSON values; anything else must be equal."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        return max([_largest_difference(a[k], b[k], f"{where}/{k}") for k in a] or [0.0])
    if isinstance(a, list):
        assert len(a) == len(b), where
        return max([_largest_difference(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))] or [0.0])
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), where
            return 0.0
        return abs(a - b)
    assert a == b, (where, a, b)
    return 0.0


def test_intervals_of_several_series_are_each_series_alone():
    rng = np.random.default_rng(4)
    series = [list(rng.uniform(size=30)), [], list(rng.binomial(1, 0.3, size=30).astype(float)),
              list(rng.uniform(size=11)), [0.5]]
    got = intervals(series, resamples=700, seed=9)
    assert got[1] is None
    for values, result in zip(series, got, strict=True):
        if values:
            assert _largest_difference(result, _old_interval(values, 9, 700)) <= 1e-12
            assert result["value"] == pytest.approx(np.mean(values), abs=1e-15)


def test_committed_helpcenter_summaries_are_reproduced():
    """Every summary of the help-center study (written by ``summarize`` before the shared draw)
    comes out again from its per-query rows, to 1e-12."""
    from gabarito.evaluation.rows import summarize

    results = json.loads((ROOT / "case-studies" / "helpcenter" / "results.json").read_text(encoding="utf-8"))
    seed = results["provenance"]["parameters"]["seed"]
    runs = [entry[split] for entries in results["groups"].values() for entry in entries
            for split in ("tuning", "heldout")]
    assert len(runs) >= 10
    for run in runs:
        summary = run["summary"]
        again = summarize(run["per_query"], run["config"]["k"], seed=seed, measures=list(summary.get("measures", {})))
        assert _largest_difference(summary, again) <= 1e-12


def test_committed_fusion_intervals_and_tests_are_reproduced():
    """The fusion study's intervals (score_runs) and paired tests (compare_methods through
    against_baseline), written before the shared draw, come out again to 1e-12 on two corpora."""
    from gabarito.measure.tuning import against_baseline

    results = json.loads((ROOT / "case-studies" / "fusion" / "results.json").read_text(encoding="utf-8"))
    seed, resamples = (results["provenance"]["parameters"][k] for k in ("seed", "bootstrap_resamples"))
    for corpus in ("adi", "cranfield"):
        for record in results["corpora"][corpus]["sets"].values():
            per_query = record["per_query"]
            cells = [(m, meas) for m, by_measure in per_query.items() for meas in by_measure]
            qids = sorted(per_query[cells[0][0]][cells[0][1]])
            cis = stats.bootstrap_ci_many([[per_query[m][meas][q] for q in qids] for m, meas in cells],
                                          n_resamples=resamples, seed=seed)
            for (m, meas), ci in zip(cells, cis):
                assert _largest_difference(record["ci95"][m][meas], list(ci)) <= 1e-12
            measure = record["tests"][0]["measure"]  # the report's rows, each naming its measure
            rows = [{k: v for k, v in r.items() if k != "measure"} for r in record["tests"] if r["measure"] == measure]
            baseline = rows[0]["b"]
            again = against_baseline({m: per_query[m][measure] for m in [baseline, *(r["a"] for r in rows)]},
                                     baseline, resamples=resamples, seed=seed)
            assert _largest_difference(rows, again) <= 1e-12


def test_gabarito_evaluate_summary_intervals_are_the_old_ones(tmp_path):
    """``gabarito evaluate`` (memory BM25) writes the intervals that resampling each series alone
    gives: overall, per type and per severity, accuracy and graded measures."""
    rng = np.random.default_rng(3)
    words = np.array([f"w{i}" for i in range(400)])
    docs = [{"id": f"d{i}", "title": f"doc {i}", "text": " ".join(rng.choice(words, 30))} for i in range(40)]
    questions = []
    for i in range(150):
        doc = docs[int(rng.integers(len(docs)))]
        relevant = [] if i % 10 == 9 else sorted({doc["id"], docs[(i * 7) % len(docs)]["id"]})
        questions.append({"id": f"q{i}", "query": " ".join(rng.choice(doc["text"].split(), 2)),
                          "relevantIds": relevant, "type": ("exact", "vague")[i % 2],
                          "severity": ("low", "high", "medium")[i % 3]})
    (tmp_path / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (tmp_path / "evaluation.json").write_text(json.dumps(questions), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(tmp_path / "docs.json"),
                           "--evaluation", str(tmp_path / "evaluation.json"), "--method", "bm25", "--engine", "memory",
                           "--k", "5", "--measures", "nDCG@10,AP@100", "--out", str(tmp_path / "run"),
                           "--log", str(tmp_path / "log.jsonl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "GABARITO_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    summary, rows, seed = record["summary"], record["per_query"], stats.DEFAULT_SEED

    def old_group(group):
        answerable = [r for r in group if r["answerable"]]
        out = {f"top{n}": _old_interval([float(r[f"hit@{n}"]) for r in answerable], seed) for n in (1, 3, 5)}
        out["mrr"] = _old_interval([r["rr"] for r in answerable], seed)
        out["measures"] = {m: _old_interval([r["measures"][m] for r in answerable], seed)
                           for m in ("nDCG@10", "AP@100")}
        return out

    def intervals_of(group_summary):
        return {key: group_summary[key] for key in ("top1", "top3", "top5", "mrr", "measures")}

    assert _largest_difference(intervals_of(summary), old_group(rows)) <= 1e-12
    for key in ("type", "severity"):
        names = sorted({r[key] for r in rows})
        assert sorted(summary[f"by_{key}"]) == names and len(names) >= 2
        for name in names:
            assert _largest_difference(intervals_of(summary[f"by_{key}"][name]),
                                       old_group([r for r in rows if r[key] == name])) <= 1e-12
