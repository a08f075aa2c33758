"""What a rerun never repeats: the values of a results file that record the run, not its result.

``gabarito report --check`` (:mod:`gabarito.study.check`) compares every value of a rerun's JSON
with the committed one except those named here, by their path from the file's root (or from a log
record's root): ``*`` is one key or list item (a key that holds a ``/``, like ``adi/weak``, is
one key), ``**`` any number of them.

* :data:`RUN_RECORD_KEYS` -- keys at the root that record the run: its provenance (date, commit,
  machine), phase timings and wall time;
* :data:`VOLATILE_PATHS` -- places any file may hold that record the run: a vector cache's hits and
  misses, an evaluation's phase timings;
* :data:`DECLARED` -- per results file (its path under ``case-studies/``), the measured times and
  rates, and ratios of them, it holds: latencies, build and ingest seconds, queries per second,
  load averages. Declared here, once, for every study, rather than in each ``study.json``: the
  files of one study's ``writes`` and variants have different shapes, run folders and logs are
  written by the library itself, and the test that walks every committed results file
  (``tests/study/test_guard_volatile.py``) checks one table against all of them.

A key is never skipped for its name: a ``misses`` or a ``time`` elsewhere (a document frequency
``df/time``), or a timing a declaration does not name, is compared. :data:`UNIT_KEY` says which keys
are named by a unit of time or rate; it skips nothing, it is what the test requires every
declaration to cover, so the declarations cannot fall behind the files.
"""

from __future__ import annotations

import fnmatch
import re

from gabarito.study.integrity import path_matches

#: Keys at the root of a results file (or of a record of a JSON-lines log) that record the run,
#: not its result: its provenance (date, commit, machine), phase timings and wall time.
RUN_RECORD_KEYS = frozenset({"provenance", "phases_s", "wall_s", "timings", "machine", "date", "git", "migrations"})
#: Places any file may hold that record the run. Only these: a ``misses`` or a ``time`` elsewhere
#: (``acceptable_misses/<method>/misses``, a document frequency ``df/time``) is a result.
VOLATILE_PATHS = tuple(tuple(p.split("/")) for p in (
    "**/cache/hits", "**/cache/misses",  # what an evaluation's vector cache found (help center, perf, logs)
    "embedding_cache/**/hits", "embedding_cache/**/misses",  # the same, per collection (fusion)
    "**/timings", "**/timings_s",  # phase timings of one evaluation or collection
    "not_run_committed/*/date",  # when the committed results a budget did not rerun were computed
    "**/engine/index",  # whether an evaluation built its ArcadeDB index or reused one (its content is fingerprinted)
    # the load-time agreement check of an encoder's ONNX copy with torch: its largest |delta| (about
    # 1e-7) moves with the copy a cold cache exports again; its verdict (equivalent, top-10 identical)
    # and the rankings it guards (run.trec) are compared
    "**/model/equivalence/max_abs_delta",
))
#: Keys named by a unit of time or rate, or a ratio of such measures (``query_s``, ``latency_ms``,
#: ``qps_ratio_to_arcadedb``, ``bm25_over_floor``); a bare ``time`` is no unit. Skips nothing.
UNIT_KEY = re.compile(r"(?:^|_)(?:s|ms|qps|seconds|latency|load|load_average|rss_kib|per_s)$"
                      r"|^(?:seconds|times)$|(?:^|_)qps_|_over_floor$")
#: Per results file (a shell pattern on its path under ``case-studies/``): the paths, anchored at
#: its root, of the measured times and rates it holds.
DECLARED: dict[str, tuple[str, ...]] = {
    "benchmark_rrf/reader_concepts.json": (
        "cost/seconds", "training/config/time_limit_s", "training/train_seconds",
    ),
    "benchmark_rrf/results.json": (
        "latency_ms",
    ),
    "benchmark_rrf/version_sensitivity.json": (
        "runs/*/engine/build_s",
    ),
    "fusion/results.json": (
        "corpora/*/latency_ms", "embedding_cache/*/seconds",
    ),
    "helpcenter/bench_intervals.json": (
        "load_average", "paired_tests/new_median_cpu_s", "paired_tests/new_median_s", "paired_tests/new_runs_s",
        "paired_tests/old_median_cpu_s", "paired_tests/old_median_s", "paired_tests/old_runs_s",
        "summary/new_median_cpu_s", "summary/new_median_s", "summary/new_runs_s", "summary/old_median_cpu_s",
        "summary/old_median_s", "summary/old_runs_s",
    ),
    "helpcenter/perf.json": (
        "rows/*/*/wall_s", "rows/*/load_s", "rows/*/qps_search_only",
    ),
    "peers/bm25.json": (
        "collections/*/engines/*/build_s", "collections/*/engines/*/latency_ms", "collections/*/engines/*/qps",
        "collections/*/engines/*/qps_ratio_to_arcadedb", "collections/*/load_average",
        "collections/*/stages/bm25_over_floor", "collections/*/stages/http_floor_ms",
        "collections/*/stages/match_only_over_floor",
    ),
    "peers/budget.json": (
        "measured/*/*/phases_s", "measured/*/*/process_wall_s", "measured/*/*/wall_s",
        "not_run_committed/*/phases_s", "not_run_committed/*/wall_s", "site/first_s", "site/load_average",
        "site/no_change_s",
    ),
    "peers/cold_report.json": (
        "not_run/*/phases_s", "not_run/*/wall_s", "studies/*/phases_s", "studies/*/process_wall_s",
        "studies/*/wall_s",
    ),
    "peers/device.json": (
        "encoding/*/seconds", "reading/seconds", "training/pairs_per_s", "training/train_seconds",
    ),
    "peers/encoders.json": (
        "models/*/settings/*/seconds",
    ),
    "peers/install.json": (
        "installs/*/load_average_after", "installs/*/load_average_before", "installs/*/seconds",
        "installs/*/steps_s", "wheel_s",
    ),
    "peers/measures.json": (
        "collections/*/files/*/median_s", "collections/*/files/*/min_s", "collections/*/files/*/seconds",
        "collections/*/prebuilt/*/build_s", "collections/*/prebuilt/*/first_call_s",
        "collections/*/prebuilt/*/median_s", "collections/*/prebuilt/*/min_s", "collections/*/prebuilt/*/seconds",
        "collections/*/oneshot/*/median_s", "collections/*/oneshot/*/min_s", "collections/*/oneshot/*/seconds",
        "collections/*/oneshot/*/peak_rss_kib", "collections/*/ratios/*/*", "collections/*/load_average_per_round",
    ),
    "peers/vectors.json": (
        "large_plan/budget_s", "large_plan/estimates/*/estimated_s", "large_plan/total_estimated_s",
        "sizes/*/arcadedb/build_s", "sizes/*/arcadedb/ingest_s", "sizes/*/engines/*/build_s",
        "sizes/*/http_floor_ms", "sizes/*/load_average", "sizes/*/searches/*/latency_ms", "sizes/*/searches/*/qps",
    ),
    "reranking/reader_pt.json": (
        "cost/seconds", "training/config/time_limit_s", "training/train_seconds",
    ),
    "reranking/results.json": (
        "latency_ms",
    ),
    "standard_collections/rerankers.json": (
        "folds/*/cost/seconds", "folds/*/latency", "folds/*/training/config/time_limit_s",
        "folds/*/training/train_seconds",
    ),
    "standard_collections/rerankers_budget.json": (
        "folds/*/cost/seconds", "folds/*/training/config/time_limit_s", "folds/*/training/train_seconds",
    ),
    "standard_collections/rerankers_curve_progress.json": (
        "folds/*/training/curve/*/validation_seconds", "folds/*/training/sessions/*/seconds",
        "folds/*/training/train_seconds",
    ),
    "standard_collections/rerankers_weak.json": (
        "folds/*/cost/seconds", "folds/*/training/config/time_limit_s", "folds/*/training/train_seconds",
    ),
    "standard_collections/rerankers_weak_ablation.json": (
        "cells/*/cost/seconds", "cells/*/training/config/time_limit_s", "cells/*/training/train_seconds",
    ),
    "standard_collections/scaling.json": (
        "fits/bm25_median_ms", "fits/bm25s_median_ms", "fits/ingest_s", "fits/knn_median_ms",
        "fits/numpy_exact_median_ms", "fits/synthetic_ingest_s", "fits/vector_build_s", "real/*/bm25s_index_s",
        "real/*/ingest_docs_per_s", "real/*/ingest_s", "real/*/latency_ms", "real/*/load_average",
        "real/*/reference_latency_ms", "real/*/side_by_side/*/arcadedb_http_qps",
        "real/*/side_by_side/bm25/bm25s_in_process_qps", "real/*/side_by_side/knn/numpy_exact_qps",
        "real/*/vector_build_s", "skipped/*/estimated_build_s", "skipped/*/estimated_ingest_s",
        "skipped/*/reason/build_s", "skipped/*/reason/first_build_s", "skipped/*/reason/first_ingest_s",
        "skipped/*/reason/ingest_s", "synthetic/*/ingest_s", "synthetic/*/ingest_vectors_per_s",
        "synthetic/*/latency_ms", "synthetic/*/load_average", "synthetic/*/reference_latency_ms",
        "synthetic/*/side_by_side/*/arcadedb_http_qps", "synthetic/*/side_by_side/*/numpy_exact_qps",
        "synthetic/*/vector_build_s",
    ),
}


def declared(rel: str) -> tuple[tuple[str, ...], ...]:
    """The declared paths of the results file at ``rel`` (its path under ``case-studies/``)."""
    return tuple(tuple(p.split("/")) for name, paths in DECLARED.items() if fnmatch.fnmatchcase(rel, name)
                 for p in paths)


def volatile(segments: tuple[str, ...], paths: tuple[tuple[str, ...], ...] = ()) -> bool:
    """Whether the value at ``segments`` (keys from the file's root, ``[]`` for a list item) records
    the run rather than its result: :data:`RUN_RECORD_KEYS` at the root, :data:`VOLATILE_PATHS`, or
    one of ``paths`` (the file's :func:`declared` paths)."""
    if len(segments) == 1 and segments[0] in RUN_RECORD_KEYS:
        return True
    return any(path_matches(p, segments) for p in (*VOLATILE_PATHS, *paths))
