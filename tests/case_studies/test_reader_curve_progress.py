"""The reader-curve study's progress ledger: the training records outlive the machine's cache."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gabarito.errors import GabaritoError
from gabarito.study.integrity import read_manifest


def _ctx():
    return SimpleNamespace(git={"commit": "abc"}, gold_sha256={"qrels/adi.txt": "f" * 64},
                           args=SimpleNamespace(device=None, threads=2))


def _record(pairs: int) -> dict:
    return {"status": "training", "pairs_seen": pairs, "curve": [{"pairs": 0, "select": 0.3}, {"pairs": pairs, "select": 0.4}]}


def test_each_checkpoint_rewrites_the_ledger_and_a_later_run_extends_it(tmp_path):
    from studies.standard_collections.train_reader_curve import ProgressLedger

    path = tmp_path / "rerankers_curve_progress.json"
    first = ProgressLedger(_ctx(), path)
    first.update("cranfield", "bce", "cpu", {"pairs": {"pairs_per_epoch": 10}}, _record(8000))
    first.update("cranfield", "bce", "cpu", {"pairs": {"pairs_per_epoch": 10}}, _record(16000))
    saved = json.loads(path.read_text())
    assert saved["folds"]["cranfield/bce"]["training"]["pairs_seen"] == 16000
    assert "not a result" in saved["what"] and saved["folds"]["cranfield/bce"]["device"] == "cpu"
    assert saved["provenance"]["gold_sha256"] == {"qrels/adi.txt": "f" * 64}
    assert path.name in read_manifest(tmp_path / "results.sha256.json")

    later = ProgressLedger(_ctx(), path)  # another session: keeps what the first wrote
    later.update("cisi", "bce", "cpu", {}, _record(8000))
    later.update("cisi", "bce", "cuda", {}, _record(24000))  # the same fold on a GPU: beside it, not over it
    folds = json.loads(path.read_text())["folds"]
    assert sorted(folds) == ["cisi/bce", "cisi/bce/cuda", "cranfield/bce"]
    assert folds["cisi/bce/cuda"]["device"] == "cuda" and folds["cisi/bce"]["training"]["pairs_seen"] == 8000


def test_a_ledger_edited_by_hand_is_refused_not_extended(tmp_path):
    from studies.standard_collections.train_reader_curve import ProgressLedger

    path = tmp_path / "rerankers_curve_progress.json"
    ProgressLedger(_ctx(), path).update("adi", "bce", "cpu", {}, _record(8000))
    path.write_text(path.read_text().replace("8000", "9000"))
    with pytest.raises(GabaritoError, match="rerankers_curve_progress.json"):
        ProgressLedger(_ctx(), path)


def test_a_fold_trained_again_on_another_machine_keeps_what_the_first_run_reached(tmp_path):
    """A new machine has no cache: the fold trains again from zero. The ledger follows the run whose
    weights will be measured, and keeps the earlier run's sessions, pairs and chosen checkpoint."""
    from studies.standard_collections.train_reader_curve import ProgressLedger

    def run(started: str, pairs: int, sha: str) -> dict:
        return {**_record(pairs), "sessions": [{"started": started, "from_pairs": 0}],
                "best": {"pairs": pairs, "weights_sha256": sha}}

    path = tmp_path / "rerankers_curve_progress.json"
    ProgressLedger(_ctx(), path).update("cranfield", "bce", "cpu", {}, run("2026-12-07T21:05", 60000, "aaa"))
    again = ProgressLedger(_ctx(), path)
    again.update("cranfield", "bce", "cpu", {}, run("2026-12-09T10:00", 8000, "bbb"))
    again.update("cranfield", "bce", "cpu", {}, run("2026-12-09T10:00", 16000, "ccc"))  # the same new run goes on
    entry = json.loads(path.read_text())["folds"]["cranfield/bce"]
    assert entry["training"]["pairs_seen"] == 16000
    assert entry["replaced"] == [{"sessions": [{"started": "2026-12-07T21:05", "from_pairs": 0}], "pairs_seen": 60000,
                                  "best": {"pairs": 60000, "weights_sha256": "aaa"}}]
