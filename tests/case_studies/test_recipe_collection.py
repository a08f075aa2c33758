"""Issue 40 item 5 (Y40-fixture-collection): a collection added the way ``docs/architecture.md``
("Adding a collection") says is known to the registry, the book's vocabulary and the
classic-collections study, and the study's numbers on it are the ones its judgments give.

The collection is :mod:`fixture_collection` (six documents, four questions), added at run time in
the recipe's four steps (dataset entry, reader, registry, frozen judgments) without touching the
repository's files: its files in a temporary mirror, the study run on a copy of its folder through
``gabarito study <folder>``, in a process that registered it first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fixture_collection as fx
from gabarito.errors import GabaritoError
from gabarito.inputs.collections import load_collection, registry
from gabarito.inputs.datasets import load_manifest
from gabarito.publish import labels

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "standard_collections"
HERE = Path(__file__).resolve().parent


@pytest.fixture()
def added(tmp_path, monkeypatch):
    """The fixture collection registered in this process (undone afterwards), its files in a
    mirror under ``tmp_path`` and fetched into ``tmp_path/data``."""
    monkeypatch.setenv("GABARITO_DATA_DIR", str(tmp_path / "data"))
    mirror = fx.write_mirror(tmp_path / "mirror")
    fx.register()
    yield mirror
    fx.unregister()


@pytest.fixture()
def study_copy(tmp_path):
    dst = tmp_path / "standard_collections"
    shutil.copytree(STUDY, dst, ignore=shutil.ignore_patterns("*.json", "runs", "__pycache__", "*.py"))
    for f in ("study.json", "gold.lock.json", "run_study.py", "__init__.py"):
        shutil.copyfile(STUDY / f, dst / f)
    return dst


def test_the_recipe_makes_the_collection_known_to_registry_vocabulary_and_loader(added, tmp_path, study_copy):
    assert registry.names()[-1] == fx.NAME and registry.names()[:5] == registry.ORDER
    assert registry.display(fx.NAME) == fx.DISPLAY
    assert labels.term("collection", fx.NAME) == fx.DISPLAY  # the book's name, read from the registry
    assert fx.NAME in load_manifest() and "adi" in load_manifest()
    c = load_collection(fx.NAME, mirror=added)
    assert [d.id for d in c.documents] == list(fx.DOCUMENTS) and c.unjudged == ("4",)
    assert c.qrels["3"] == {"16": 2, "12": 0}
    frozen = fx.freeze_into(study_copy, added)
    assert json.loads((study_copy / "gold.lock.json").read_text())["files"][f"qrels/{fx.NAME}.txt"]
    loaded, qrels = registry.load_frozen(fx.NAME, frozen, mirror=added)
    assert registry.content_sha256(loaded) == registry.content_sha256(c)
    # a dataset or a collection given twice is one line
    with pytest.raises(GabaritoError, match="already in the manifest"):
        fx.register()
    with pytest.raises(GabaritoError, match="already registered"):
        registry.register(registry.ClassicCollection(fx.NAME, "x", fx.read))


def test_unregistered_the_collection_is_unknown_again():
    assert fx.NAME not in registry.names() and fx.NAME not in load_manifest()
    with pytest.raises(GabaritoError, match="no Portuguese label for collection"):
        labels.term("collection", fx.NAME)


DRIVER = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import fixture_collection
fixture_collection.register()
from gabarito.cli import main
sys.exit(main(sys.argv[1:]))
"""


def gabarito_with_fixture(tmp_path, *args: str, timeout: int = 1500):
    """``gabarito ARGS`` in a process that registered the fixture collection first (the recipe's
    steps 1-3 at run time: a user's own collection is added the same way)."""
    env = {**os.environ, "GABARITO_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", DRIVER, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def study_error(done) -> str:
    """The study's own error line, the only one (``gabarito study`` adds none after it); no traceback."""
    lines = [x for x in done.stderr.strip().splitlines() if "error: " in x]  # progress lines left out
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1 and "exited with status" not in lines[0], lines
    return lines[0]


def test_a_collection_that_is_not_registered_or_not_frozen_is_one_line(added, tmp_path, study_copy):
    done = gabarito_with_fixture(tmp_path, "study", str(study_copy), "--collections", f"{fx.NAME},nope",
                                 "--mirror", str(added))
    assert study_error(done).startswith("error: unknown collection(s) ['nope']")
    done = gabarito_with_fixture(tmp_path, "study", str(study_copy), "--collections", fx.NAME,
                                 "--mirror", str(added), "--out", str(tmp_path / "out"))
    line = study_error(done)
    assert line.startswith("error: ") and f"qrels/{fx.NAME}.txt is not frozen in gold.lock.json" in line, line
    assert str(study_copy / "gold.lock.json") in line
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.integration
def test_the_classic_collections_study_runs_on_the_added_collection(added, tmp_path, study_copy):
    fx.freeze_into(study_copy, added)
    out = tmp_path / "out"
    done = gabarito_with_fixture(tmp_path, "study", str(study_copy), "--collections", fx.NAME, "--mirror", str(added),
                                 "--out", str(out), "--db-dir", str(tmp_path / "db"), "--resamples", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert list(res["collections"]) == [fx.NAME]
    col = res["collections"][fx.NAME]
    assert (col["n_documents"], col["n_queries"], col["n_judged"]) == (6, 4, 3)
    assert col["excluded"]["count"] == 1 and col["excluded"]["ids"] == ["4"]
    assert col["graded"] is True
    assert res["provenance"]["gold_sha256"] == {
        f"qrels/{fx.NAME}.txt": json.loads((study_copy / "gold.lock.json").read_text())["files"][f"qrels/{fx.NAME}.txt"]}
    # BM25, in memory (bm25s) and in ArcadeDB: the numbers the judgments give by hand
    for method in ("bm25s", "bm25_arcadedb_standard", "bm25_arcadedb_english"):
        assert col["per_query"][method]["RR@10"] == fx.RR_AT_10, method
        assert col["metrics"][method]["RR@10"] == pytest.approx(2 / 3, abs=1e-12)
        assert col["per_query"][method]["nDCG@10"] == fx.RR_AT_10  # one relevant document, found first or not at all
    # and the book names it by the registry's display name
    from studies.standard_collections import findings

    rows = findings.headline(res)["rows"]
    assert [labels.term("collection", r["collection"]) for r in rows] == [fx.DISPLAY]
