"""Time of the bootstrap intervals and paired tests for 50,000 synthetic questions: before/after.

Before (issue 22, item 9) every series was resampled alone: each ``bootstrap_ci`` call drew its own
index matrix and gathered ``x[idx]``, and ``gabarito evaluate`` spent most of its time there. Now
the series of one length share one draw (:func:`gabarito.measure.stats.bootstrap_ci_many`). This
script keeps a verbatim copy of the old algorithm (``_old_*`` below) to time it against the library
on the same synthetic data, checks that both give the same numbers, and writes
``bench_intervals.json``: the median wall and CPU seconds of each (``--repeats`` runs of the new
code, ``--old-repeats`` of the old one, which is slow), the largest difference between their
numbers, and the load average (the machine may be shared: read the CPU seconds beside the wall).

Two workloads: the summary of ``gabarito evaluate`` (:func:`gabarito.evaluation.rows.summarize`:
top-1/3/5, MRR and three graded measures, overall, per type and per severity) and the paired
tests of :func:`gabarito.measure.stats.compare_methods` between three methods.

``--write-cli-set DIR`` writes instead a synthetic documents + evaluation pair of the same size
for timing ``gabarito evaluate --method bm25 --engine memory`` by hand.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import statistics
import time
from pathlib import Path

import numpy as np

from gabarito.errors import run_main
from gabarito.evaluation.config import HIT_AT
from gabarito.evaluation.rows import summarize
from gabarito.measure import metrics
from gabarito.core.signtest import sign_test
from gabarito.measure.stats import DEFAULT_SEED, compare_methods, effect_size, holm
from gabarito.measure.timing import load_average
from gabarito.study.records import git_state, machine, now_iso, write_measurement

HERE = Path(__file__).resolve().parent
MEASURES = ("nDCG@10", "AP@100", "R@100")
TYPES = ("exact", "paraphrase", "vague", "unanswerable")
SEVERITIES = ("low", "medium", "high")
_OLD_CHUNK_CELLS = 2_000_000


# --- the old algorithm, verbatim (gabarito/measure/stats.py and evaluation/rows.py before) ---
def _old_chunks(n_resamples: int, n: int):
    rows = max(1, _OLD_CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        yield min(rows, n_resamples - start)


def _old_bootstrap_ci(values, n_resamples=10000, alpha=0.05, seed=DEFAULT_SEED):
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.concatenate([x[rng.integers(0, x.size, size=(rows, x.size))].mean(axis=1)
                            for rows in _old_chunks(n_resamples, x.size)])
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def _old_randomization(a, b, n_resamples=10000, seed=DEFAULT_SEED):
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    observed = abs(diff.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(diff).max()))
    rng = np.random.default_rng(seed)
    count = 0
    for rows in _old_chunks(n_resamples, diff.size):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, diff.size))
        count += int(np.sum(np.abs((signs * diff).mean(axis=1)) >= observed - tolerance))
    return (count + 1) / (n_resamples + 1)


def _old_interval(values, seed):
    values = [float(v) for v in values]
    if not values:
        return None
    low, high = _old_bootstrap_ci(values, seed=seed)
    return {"value": metrics.mean(values), "ci95": [low, high]}


def _old_group(rows, k, seed, measures):
    answerable = [r for r in rows if r["answerable"]]
    out = {"n_queries": len(rows), "n_answerable": len(answerable), "n_unanswerable": len(rows) - len(answerable)}
    for n in HIT_AT:
        out[f"top{n}"] = _old_interval([float(r[f"hit@{n}"]) for r in answerable], seed) if n <= k else None
    out["mrr"] = _old_interval([float(r["rr"]) for r in answerable], seed)
    out["measures"] = {m: _old_interval([r["measures"][m] for r in answerable
                                         if r["measures"].get(m) is not None], seed) for m in measures}
    return out


def _old_summary(rows, k, seed=DEFAULT_SEED, measures=MEASURES):
    """The intervals of the old ``summarize`` (overall, per type, per severity)."""
    out = {"k": k, **_old_group(rows, k, seed, measures)}
    for key in ("type", "severity"):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r[key], []).append(r)
        out[f"by_{key}"] = {name: _old_group(group, k, seed, measures) for name, group in groups.items()}
    return out


def _old_compare(per_query, seed=DEFAULT_SEED):
    """The old compare_methods, but with today's sign_test (same numbers): the old sum of
    math.comb took more than ten minutes per pair at this size."""
    rows = []
    for name_a, name_b in itertools.combinations(per_query, 2):
        a, b = np.asarray(per_query[name_a], dtype=float), np.asarray(per_query[name_b], dtype=float)
        low, high = _old_bootstrap_ci(a - b, seed=seed)
        sign = sign_test(a, b)
        rows.append({"a": name_a, "b": name_b, "mean_a": float(a.mean()), "mean_b": float(b.mean()),
                     "mean_diff": float((a - b).mean()), "ci_low": low, "ci_high": high,
                     "dz": effect_size(a, b)["dz"], "p_randomization": _old_randomization(a, b, seed=seed),
                     "wins": sign["wins"], "losses": sign["losses"], "ties": sign["ties"], "p_sign": sign["p"]})
    adjusted = holm({str(i): row["p_randomization"] for i, row in enumerate(rows)})
    for i, row in enumerate(rows):
        row["p_holm"] = adjusted[str(i)]
    return rows
# --- end of the old algorithm ---


def synthetic_rows(n: int, seed: int) -> list[dict]:
    """``n`` per-query rows shaped like ``gabarito evaluate``'s (about 10% unanswerable)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        qtype = TYPES[int(rng.integers(len(TYPES)))]
        row = {"id": f"q{i:06d}", "type": qtype, "severity": SEVERITIES[int(rng.integers(3))],
               "answerable": qtype != "unanswerable", "returned": [{"id": f"d{int(rng.integers(2000))}"}],
               "top_score": float(rng.random())}
        rank = int(rng.geometric(0.45))
        if row["answerable"]:
            row.update({f"hit@{n_}": rank <= n_ for n_ in HIT_AT})
            row["rr"] = 1.0 / rank if rank <= 10 else 0.0
            row["measures"] = {"nDCG@10": float(rng.random()) if rank <= 10 else 0.0,
                               "AP@100": float(rng.random()) / rank, "R@100": float(rank <= 100)}
        rows.append(row)
    return rows


def largest_difference(a, b) -> float:
    """Largest |a - b| over the numbers of two equally shaped JSON values (keys must match)."""
    if isinstance(a, dict):
        assert a.keys() <= b.keys(), sorted(set(a) ^ set(b))
        return max([largest_difference(a[key], b[key]) for key in a] or [0.0])
    if isinstance(a, list):
        return max([largest_difference(x, y) for x, y in zip(a, b, strict=True)] or [0.0])
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b)
    assert a == b, (a, b)
    return 0.0


def timed(function, repeats: int) -> dict:
    """Median wall and CPU seconds of ``repeats`` calls (CPU time: this process, all threads; less
    sensitive than the wall clock to other work on a shared machine), and the last result."""
    wall, cpu, result = [], [], None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return {"median_s": statistics.median(wall), "median_cpu_s": statistics.median(cpu),
            "runs_s": wall, "runs_cpu_s": cpu, "result": result}


def before_after(old: dict, new: dict, what: str) -> dict:
    return {"what": what, "old_median_s": old["median_s"], "new_median_s": new["median_s"],
            "speedup": old["median_s"] / new["median_s"], "old_median_cpu_s": old["median_cpu_s"],
            "new_median_cpu_s": new["median_cpu_s"], "speedup_cpu": old["median_cpu_s"] / new["median_cpu_s"],
            "old_runs_s": old["runs_s"], "new_runs_s": new["runs_s"],
            "max_abs_difference": largest_difference(old["result"], new["result"])}


def write_cli_set(folder: Path, n: int, seed: int) -> None:
    """Documents (2,000 of 60 random words) and ``n`` distinct questions: two words of a document and
    two random words (every tenth question: four random words, unanswerable)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(20000)])
    docs = [{"id": f"d{i}", "title": f"doc {i}", "text": " ".join(rng.choice(words, 60))} for i in range(2000)]
    questions, seen = [], set()
    while len(questions) < n:
        i = len(questions)
        doc = docs[int(rng.integers(len(docs)))]
        answerable = i % 10 != 9
        mine = rng.choice(np.array(doc["text"].split()), 2) if answerable else []
        query = " ".join([*mine, *rng.choice(words, 4 - len(mine))])
        if query in seen:
            continue
        seen.add(query)
        questions.append({"id": f"q{i}", "query": query, "relevantIds": [doc["id"]] if answerable else [],
                          "type": TYPES[i % 3] if answerable else "unanswerable", "severity": SEVERITIES[i % 3]})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (folder / "evaluation.json").write_text(json.dumps(questions), encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--questions", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--old-repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", type=Path, default=HERE / "bench_intervals.json")
    ap.add_argument("--write-cli-set", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.write_cli_set is not None:
        write_cli_set(args.write_cli_set, args.questions, args.seed)
        return 0
    rows = synthetic_rows(args.questions, args.seed)
    answerable = [r for r in rows if r["answerable"]]
    rng = np.random.default_rng(args.seed + 1)
    per_query = {"a": [r["rr"] for r in answerable],
                 "b": [min(1.0, r["rr"] + float(rng.normal(0.01, 0.2))) for r in answerable],
                 "c": [r["measures"]["nDCG@10"] for r in answerable]}
    load_before = load_average()
    new_summary = timed(lambda: summarize(rows, 10, seed=args.seed, measures=MEASURES), args.repeats)
    old_summary = timed(lambda: _old_summary(rows, 10, seed=args.seed), args.old_repeats)
    new_tests = timed(lambda: compare_methods(per_query, seed=args.seed), args.repeats)
    old_tests = timed(lambda: _old_compare(per_query, seed=args.seed), args.old_repeats)
    groups = {key: sorted(collections.Counter(r[key] for r in answerable).values()) for key in ("type", "severity")}
    record = {
        "date": now_iso(), "git": git_state(), "machine": machine(),
        "questions": args.questions, "answerable": len(answerable), "answerable_per_group": groups,
        "resamples": 10000, "seed": args.seed,
        "summary": before_after(old_summary, new_summary, "evaluation.rows.summarize: top-1/3/5, MRR and 3 graded "
                                "measures, overall, per type and per severity"),
        "paired_tests": before_after(old_tests, new_tests, "stats.compare_methods, 3 methods (3 pairs): bootstrap "
                                     "interval of each difference and sign-flip randomization p (the old "
                                     "side with today's sign_test)"),
        "load_average": {"before": load_before, "after": load_average()},
    }
    write_measurement(args.out, record)
    print(json.dumps({k: record[k] for k in ("summary", "paired_tests", "load_average")}, indent=1))
    return 0


if __name__ == "__main__":
    run_main(main)
