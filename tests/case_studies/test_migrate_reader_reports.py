"""scripts/migrate_reader_reports.py: the readers' committed files as they were before the
migration (rebuilt here from the migrated ones) migrate back to exactly the committed files, and a
value the stored per-question values do not give stops it."""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from gabarito.errors import GabaritoError

from copies import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("migrate_reader_reports", ROOT / "scripts" / "migrate_reader_reports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _legacy_stage(block: dict) -> dict:
    """A migrated first stage in the shape the writers stored until the migration."""
    report = block["report"]
    rows = [{k: v for k, v in r.items() if k != "measure"} for r in report["tests"]]
    rest = {k: v for k, v in block.items() if k != "report"}
    head = {k: rest.pop(k) for k in ("method", "run_sha256") if k in rest}
    return {**head, "n_queries": report["n"], "means": report["metrics"], "ci": report["ci95"],
            "tests_nDCG@10": rows, **rest}


def _legacy_weak(data: dict) -> dict:
    folds = {}
    for name, fold in data["folds"].items():
        fold = {k: v for k, v in fold.items() if k != "collection"}
        folds[name] = {**fold, "first_stages": {s: _legacy_stage(b) for s, b in fold["first_stages"].items()}}
    return {**data, "folds": folds}


def _without_stamp(data: dict) -> dict:
    out = copy.deepcopy(data)
    out["provenance"]["migrations"] = [m for m in out["provenance"]["migrations"]
                                       if m["what"] != "first_stages_as_reports"]
    return out


def test_the_weak_readers_migrate_back_to_the_committed_file_and_a_wrong_value_stops_it():
    M = _script()
    committed = json.loads(M.WEAK.read_text(encoding="utf-8"))
    legacy = _legacy_weak(_without_stamp(committed))
    assert M.weak(legacy) == _without_stamp(committed)
    broken = copy.deepcopy(legacy)
    values = broken["folds"]["adi/weak"]["per_query_nDCG@10"]["bm25"]["rrf@20"]
    values[sorted(values)[0]] += 0.01  # a per-question value the stored mean does not come from
    with pytest.raises(GabaritoError, match="not reproduced: adi/weak/bm25/recomputed"):
        M.weak(broken)
    with pytest.raises(GabaritoError, match="already holds a Report"):
        M.weak(committed)


def test_the_concept_reader_and_the_ablation_migrate_back_to_the_committed_files():
    M = _script()
    concepts = _without_stamp(json.loads(M.CONCEPTS.read_text(encoding="utf-8")))
    legacy = copy.deepcopy(concepts)
    for regimes in legacy["sets"].values():
        for r in regimes.values():
            r["first_stages"] = {s: _legacy_stage(b) for s, b in r["first_stages"].items()}
    assert M.concepts(legacy) == concepts
    first = next(iter(legacy["sets"].values()))["gold"]["first_stages"]["bm25"]
    primary = next(r for r in first["tests_nDCG@10"] if r["a"] == "rrf@20")
    primary["p_sign"] = 0.5  # a stored row its per-question values do not give
    with pytest.raises(GabaritoError, match="not reproduced: main/gold/bm25/recomputed rrf@20/p_sign"):
        M.concepts(legacy)
    weak = json.loads(M.WEAK.read_text(encoding="utf-8"))
    ablation = _without_stamp(json.loads(M.ABLATION.read_text(encoding="utf-8")))
    old = copy.deepcopy(ablation)
    for cell in old["cells"].values():
        cell["bm25"] = _legacy_stage(cell["bm25"])
    assert M.ablation(old, weak) == ablation
