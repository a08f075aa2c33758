"""Issue 39 (F2): ``report --check`` sets aside only the timings each results file declares, by
path from its root (:data:`gabarito.study.volatile.DECLARED`), never a key for its name alone.

Before: any key named by a unit (``*_s``, ``*_ms``, ``qps``, ``latency``, ``load``, ...) was skipped
at any depth of any file, so a result that happened to carry such a name was never compared. Now a
timing is skipped only where its file's declaration names it; this test walks every committed
results file (JSON and JSON lines, every one a manifest records) and requires every key named by a
unit to lie under a declared path, so the declarations cannot fall behind the files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from test_guard_check import make_study

from gabarito.study.check import compare_json
from gabarito.study.integrity import MANIFEST, read_manifest
from gabarito.study.volatile import DECLARED, UNIT_KEY, declared, volatile

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"
RUN_FOLDER = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8}(?:-\d+)?")


def undeclared_timings(data, paths) -> list[str]:
    """The paths of keys named by a unit that :func:`volatile` would compare (nothing above them
    set aside)."""
    out = []

    def walk(x, seg):
        if isinstance(x, dict):
            for k, v in x.items():
                here = (*seg, str(k))
                if volatile(here, paths):
                    continue
                if UNIT_KEY.search(str(k)):
                    out.append("/" + "/".join(here))
                walk(v, here)
        elif isinstance(x, list):
            for v in x:
                walk(v, (*seg, "[]"))

    walk(data, ())
    return out


def committed_results() -> list[Path]:
    """Every JSON or JSON-lines file a manifest under case-studies/ records."""
    return sorted(m.parent / name for m in STUDIES.rglob(MANIFEST) for name in read_manifest(m)
                  if name.endswith((".json", ".jsonl")))


def records(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    return [json.loads(x) for x in text.splitlines() if x.strip()] if path.suffix == ".jsonl" else [json.loads(text)]


def test_every_timing_of_every_committed_results_file_is_declared_by_path():
    files = committed_results()
    assert len(files) > 50 and any(p.name == "scaling.json" for p in files)
    missing = {}
    for path in files:
        paths = declared(path.relative_to(STUDIES).as_posix())
        found = sorted({p for r in records(path) for p in undeclared_timings(r, paths)})
        if found:
            missing[path.relative_to(STUDIES).as_posix()] = found[:5]
    assert missing == {}, f"declare these timings in gabarito.study.volatile.DECLARED: {missing}"


def test_every_declaration_names_a_committed_file_and_matches_a_value_in_it():
    """A declaration left behind by a renamed file or key is as wrong as one missing."""
    files = {p.relative_to(STUDIES).as_posix(): p for p in committed_results()}
    for name, patterns in DECLARED.items():
        hits = [rel for rel in files if re.fullmatch(name.replace("*", "[^/]*"), rel)]
        assert hits, f"{name}: no committed results file"
        for pattern in patterns:
            segs = tuple(pattern.split("/"))
            assert any(_has(r, segs) for rel in hits for r in records(files[rel])), f"{name}: {pattern} matches nothing"


def _has(data, segs) -> bool:
    if not segs:
        return True
    if isinstance(data, dict):
        keys = data if segs[0] == "*" else ([segs[0]] if segs[0] in data else [])
        return any(_has(data[k], segs[1:]) for k in keys)
    if isinstance(data, list) and segs[0] == "*":
        return any(_has(v, segs[1:]) for v in data)
    return False


def test_a_timing_no_declaration_names_is_found_and_compared(tmp_path):
    """The walk finds an undeclared timing, and the check compares it: a value named latency_ms
    that no declaration names is a result like any other."""
    perf = declared("helpcenter/perf.json")
    row = {"tuning": {"latency_ms": 3.0, "mrr": 0.5}, "load_s": 1.0}
    assert undeclared_timings({"rows": [row]}, perf) == ["/rows/[]/tuning/latency_ms"]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"rows": [row]}))
    b.write_text(json.dumps({"rows": [{**row, "load_s": 2.0}]}))
    assert compare_json(a, b, perf)[0] == "same numbers"  # a declared timing: set aside
    b.write_text(json.dumps({"rows": [{**row, "tuning": {"latency_ms": 4.0, "mrr": 0.5}}]}))
    assert compare_json(a, b, perf) == ("differs", "1 values differ: /rows[0]/tuning/latency_ms")


def test_an_index_built_or_reused_is_the_record_of_the_run_and_its_name_nothing_else(tmp_path):
    """A cold rerun builds the index the committed run reused: that alone is not a difference; a
    changed mean beside it still is."""
    run = {"engine": {"name": "arcadedb", "index": "reused"}, "summary": {"mrr": 0.5}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"groups": {"lexical": [{"tuning": run}]}}))
    b.write_text(json.dumps({"groups": {"lexical": [{"tuning": {**run, "engine": {"name": "arcadedb", "index": "built"}}}]}}))
    assert compare_json(a, b)[0] == "same numbers"
    b.write_text(json.dumps({"groups": {"lexical": [{"tuning": {**run, "summary": {"mrr": 0.6}}}]}}))
    assert compare_json(a, b)[0] == "differs"



def test_the_onnx_check_s_largest_delta_is_the_record_of_the_run_and_its_verdict_is_not(tmp_path):
    """A cold rerun exports the encoder's ONNX copy again: the check's largest |delta| moves in its
    last bits, in a results file and in a run log; whether the copy is equivalent still counts."""
    def run(delta, equivalent=True):
        return {"model": {"equivalence": {"max_abs_delta": delta, "top10_identical": True, "equivalent": equivalent}},
                "summary": {"mrr": 0.5}}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"groups": {"model": [{"tuning": run(8.1e-07)}]}}))
    b.write_text(json.dumps({"groups": {"model": [{"tuning": run(7.7e-07)}]}}))
    assert compare_json(a, b)[0] == "same numbers"
    b.write_text(json.dumps({"groups": {"model": [{"tuning": run(7.7e-07, equivalent=False)}]}}))
    assert compare_json(a, b)[0] == "differs"

SCRIPT = '''"""A study that measures its latency (declared for benchmark_rrf/results.json) and holds a
per-set latency no declaration names."""
import os

from gabarito.study.runner import study_main


def run(ctx):
    return {"provenance": ctx.provenance(corpus={}, model=None, engine={}, parameters={}),
            "latency_ms": {"p50": os.getpid() % 997},  # declared: measured, never repeated
            "sets": {"main": {"latency_ms": int(os.environ.get("GUARD_SET_LATENCY", "3"))}}}


if __name__ == "__main__":
    study_main(__file__, run)
'''


def test_report_check_sets_aside_only_the_declared_timing(tmp_path):
    """Through `gabarito report --check`: a study folder named benchmark_rrf (whose results.json
    declares only its root `latency_ms`) reruns to the same numbers although its measured latency
    differs; a `latency_ms` elsewhere in the file that differs is named, exit 1 (before: skipped
    for its name, "same numbers", exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "GABARITO_CACHE_DIR": str(tmp_path / "cache")}
    d = make_study(tmp_path / "benchmark_rrf", SCRIPT, env)

    def check(**extra) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "gabarito.cli", "report", "--check", str(d)],
                              env={**env, **extra}, capture_output=True, text=True, timeout=300)

    same = check()
    assert same.returncode == 0, same.stdout + same.stderr
    assert "guard/results.json: same numbers" in same.stdout  # named by the study
    moved = check(GUARD_SET_LATENCY="4")
    assert moved.returncode == 1 and "Traceback" not in moved.stderr, moved.stderr
    assert "1 values differ: /sets/main/latency_ms" in moved.stdout, moved.stdout
