import json

import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.core.runs import Run
from gabarito.study.records import append_jsonl, check_results_gold, provenance, write_results


def _prov(gold):
    return provenance(corpus={"sha256": "c"}, gold_sha256=gold, model={"model_id": "m"},
                      engine={"name": "x"}, parameters={"k": 10})


def test_provenance_has_what_an_auditor_needs():
    p = _prov({"q.json": "abc"})
    for key in ("corpus", "gold_sha256", "model", "engine", "parameters", "git", "date", "machine"):
        assert key in p
    assert p["machine"]["cpu_count"] >= 1
    assert set(p["machine"]["cpu"]) == {"model", "simd"}


def test_processor_reads_the_model_and_the_simd_extensions(tmp_path):
    from gabarito.study.records import processor

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
                    "flags\t\t: fpu sse4_2 avx avx2 fma avx512f amx_tile\n\n"
                    "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu\n")
    assert processor(info) == {"model": "Intel(R) Xeon(R) Platinum 8480+",
                               "simd": ["sse4_2", "avx", "avx2", "fma", "avx512f", "amx_tile"]}
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx fma\n")
    assert processor(info)["simd"] == ["sse4_2", "avx", "fma"]  # no avx2: another code path
    assert processor(tmp_path / "absent")["simd"] is None


def test_results_refused_when_gold_changes(tmp_path):
    gold = tmp_path / "q.json"
    gold.write_text('{"pairs": []}')
    write_results(tmp_path / "results.json", {"provenance": _prov({"q.json": sha256_file(gold)})})
    assert check_results_gold(tmp_path / "results.json")
    gold.write_text('{"pairs": [1]}')
    with pytest.raises(GabaritoError, match="computed against another gold"):
        check_results_gold(tmp_path / "results.json")


def test_results_without_gold_hash_are_not_written(tmp_path):
    with pytest.raises(GabaritoError):
        write_results(tmp_path / "r.json", {"provenance": {}})
    assert not (tmp_path / "r.json").exists()


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "r.json"
    atomic_write_json(target, {"a": 1})
    with pytest.raises(TypeError):
        atomic_write_json(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_trec_run_format(tmp_path):
    Run({"q1": [("d2", 1.0), ("d1", 2.0)]}).write_trec(tmp_path / "r.trec", tag="t")
    assert (tmp_path / "r.trec").read_text().splitlines() == ["q1 Q0 d1 1 2.000000 t", "q1 Q0 d2 2 1.000000 t"]


def test_append_jsonl(tmp_path):
    append_jsonl(tmp_path / "log.jsonl", {"a": 1})
    append_jsonl(tmp_path / "log.jsonl", {"a": 2})
    assert [json.loads(x)["a"] for x in (tmp_path / "log.jsonl").read_text().splitlines()] == [1, 2]
