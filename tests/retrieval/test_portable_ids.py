"""Readers are recorded under ids that do not name the machine, the checkout or the cache folder."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from gabarito.paths import ROOT
from gabarito.publish import labels
from gabarito.retrieval.models.sources import CACHE_ENV, portable_location
from gabarito.study.integrity import verify
from gabarito.study.records import write_measurement

REPO = Path(__file__).resolve().parents[2]


def test_a_folder_in_the_cache_is_named_relative_to_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "any-cache"))
    folder = tmp_path / "any-cache" / "cross-encoders" / "heldout-npl-0123abcd"
    assert portable_location(folder) == "cache:cross-encoders/heldout-npl-0123abcd"
    assert portable_location(str(folder) + "/") == "cache:cross-encoders/heldout-npl-0123abcd"
    assert labels.model(portable_location(folder)) == labels.model("trained:npl")
    # a reader read from the user's own cache during a check (another cache folder) has the same id
    monkeypatch.setenv("GABARITO_TRAINED_READERS", str(tmp_path / "user-cache" / "cross-encoders"))
    found = tmp_path / "user-cache" / "cross-encoders" / "heldout-npl-0123abcd"
    assert portable_location(found) == "cache:cross-encoders/heldout-npl-0123abcd"


def test_package_and_project_folders_are_relative_and_everything_else_stays(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    purelib = Path(sysconfig.get_paths()["purelib"])
    assert portable_location(purelib / "cognition" / "model") == "site-packages:cognition/model"
    assert portable_location(ROOT / "data" / "helpcenter") == "data/helpcenter"
    assert portable_location(tmp_path / "elsewhere" / "model") == str(tmp_path / "elsewhere" / "model")
    assert portable_location("cross-encoder/ms-marco-MiniLM-L-6-v2") == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    assert portable_location("./my-model") == "./my-model"  # a relative path as the user typed it


def _migration():
    spec = importlib.util.spec_from_file_location("migrate_ids", REPO / "scripts" / "migrate_portable_ids.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_rewrites_only_the_old_paths_and_keeps_every_number(tmp_path):
    study = tmp_path / "studies" / "reranking"
    study.mkdir(parents=True)
    old = "/old/checkout/.cache/cross-encoders/heldout-cranfield-39b7"
    data = {"provenance": {"model": {"splade": {"location": "/old/checkout/.venv/lib/python3.11/site-packages/cognition/model"}}},
            "setup": {"readers": [f"cross-encoder {old}", "splade-tiny"]},
            "per_question": {f"cross-encoder {old}": {"q1": 0.5}}, "elsewhere": "/other/.cache/x", "n": 3}
    write_measurement(study / "results.json", data)
    before = (study / "results.json").read_text()
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "migrate_portable_ids.py"), "--root", "/old/checkout",
                           "--studies", str(tmp_path / "studies")], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "reranking/results.json: 3 strings" in done.stdout
    new = json.loads((study / "results.json").read_text())
    assert new["per_question"] == {"cross-encoder cache:cross-encoders/heldout-cranfield-39b7": {"q1": 0.5}}
    assert new["setup"]["readers"][0] == "cross-encoder cache:cross-encoders/heldout-cranfield-39b7"
    assert new["provenance"]["model"]["splade"]["location"] == "site-packages:cognition/model"
    assert new["elsewhere"] == "/other/.cache/x" and new["n"] == 3
    assert [m["what"] for m in new["provenance"]["migrations"]] == ["portable_ids"]
    verify(study / "results.json")  # the manifest records the rewritten file
    assert "/old/checkout" in before and "/old/checkout" not in (study / "results.json").read_text()


def test_no_committed_result_names_the_checkout_it_ran_in():
    migration = _migration()
    for path in migration.recorded_results(REPO / "case-studies"):
        text = path.read_text(encoding="utf-8")
        assert "/.cache/cross-encoders/" not in text and "/site-packages/" not in text, path
