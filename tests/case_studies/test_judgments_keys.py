"""Issue 41 item 4 (a, c): the judgments' headline under the assessors' own grades, and who graded.

The keys (studies.judgments.keys) on hand-made pairs; findings.assessor_keys on hand-made
results whose answer is known; ``run_assessor_keys.py`` driven as a command (it writes
``assessor_keys.json``), its rule checked against the study's own results; findings.assessors on
the committed results (the models and how blind each round was, read from the recorded fields).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from studies.judgments import findings
from studies.judgments.keys import full, grade, key_qrels, keyed, moved

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "judgments"

PAIRS = {  # q1's expected concept d1 kept at 2 by the rule although A and B gave 1; d2 adjudicated up
    "P1": {"question": "q1", "doc": "d1", "a": 1, "b": 1, "grade": 2, "expected": True},
    "P2": {"question": "q1", "doc": "d2", "a": 0, "b": 2, "grade": 2, "expected": False},
    "P3": {"question": "q1", "doc": "d3", "a": 0, "b": 0, "grade": 0, "expected": False},
    "P4": {"question": "q2", "doc": "d4", "a": 1, "b": 2, "grade": 1, "expected": False},
}


def test_keys_take_no_adjudicator_and_no_gold_override():
    assert {pid: grade(p, "rule") for pid, p in PAIRS.items()} == {"P1": 2, "P2": 2, "P3": 0, "P4": 1}
    assert {pid: grade(p, "min") for pid, p in PAIRS.items()} == {"P1": 1, "P2": 0, "P3": 0, "P4": 1}
    assert {pid: grade(p, "mean") for pid, p in PAIRS.items()} == {"P1": 2, "P2": 2, "P3": 0, "P4": 3}  # doubled
    assert keyed(PAIRS, "min")["P1"]["grade"] == 1 and PAIRS["P1"]["grade"] == 2  # a copy, not the pairs
    q = key_qrels(PAIRS, "mean", ["q1", "q2"])
    assert q == {"q1": {"d1": 2, "d2": 2, "d3": 0}, "q2": {"d4": 3}}
    assert full(q, "mean") == {"q1": {}, "q2": {}}  # both gave 2: none here
    assert full(key_qrels(PAIRS, "rule", ["q1"]), "rule") == {"q1": {"d1": 1, "d2": 1}}
    assert moved(PAIRS, "rule") == {"n": 0, "lower": 0, "higher": 0, "expected": 0}
    assert moved(PAIRS, "min") == {"n": 2, "lower": 2, "higher": 0, "expected": 1}
    assert moved(PAIRS, "mean") == {"n": 3, "lower": 2, "higher": 1, "expected": 1}
    with pytest.raises(GabaritoError, match="unknown judgment key 'max'"):
        grade(PAIRS["P1"], "max")


def _block(order, means):
    return {"graded": {"order": {"nDCG@10": order}, "metrics": {m: {"nDCG@10": v} for m, v in means.items()}}}


def _keys(per_set: dict) -> dict:
    """``per_set``: {set: (single order, {key: (graded order, bm25's mean)})}."""
    return {"moved": {"rule": {"n": 0}, "min": {"n": 5}, "mean": {"n": 7}},
            "sets": {s: {"single": {"order": {"nDCG@10": single}},
                         "keys": {k: _block(o, {m: (v if m == "bm25" else 0.5) for m in o}) for k, (o, v) in keys.items()}}
                     for s, (single, keys) in per_set.items()}}


def test_assessor_keys_finds_whether_the_headline_moves_and_by_how_much():
    up, down = ["bm25", "vector"], ["vector", "bm25"]
    keys = _keys({"main": (up, {"rule": (down, 0.40), "min": (down, 0.35), "mean": (down, 0.42)}),
                  "other": (up, {"rule": (up, 0.60), "min": (up, 0.61), "mean": (down, 0.45)})})
    h = findings.assessor_keys(keys)
    assert h["first_set"] == "main" and h["sets"] == ["main", "other"]
    assert h["rows"]["rule"]["order_changed"] == ["main"] and h["rows"]["mean"]["order_changed"] == ["main", "other"]
    assert (h["rows"]["min"]["single"], h["rows"]["min"]["graded"], h["rows"]["min"]["best_graded"]) == (1, 2, "vector")
    assert h["same"] == ["min"] and h["differ"] == ["mean"] and not h["holds"]
    assert h["largest"][0] == pytest.approx(0.15) and h["largest"][1:] == ("other", "bm25")
    assert h["rows"]["mean"]["moved"] == 7
    same = _keys({"main": (up, {"rule": (down, 0.4), "min": (down, 0.4), "mean": (down, 0.4)})})
    h = findings.assessor_keys(same)
    assert h["holds"] and h["same"] == ["min", "mean"] and h["largest"][0] == 0


def test_assessors_and_blindness_come_from_the_recorded_fields():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    who = findings.assessors(res)
    assert who["models"] == [("Claude", "Anthropic")] and who["same_models"]
    first, second = who["rounds"]["packets_01_20"], who["rounds"]["packet_21"]
    assert first["blindness"] == "instruction" and first["exposed"] == ["gold", "key", "sources"]
    assert second["blindness"] == "isolated" and second["exposed"] == []
    assert first["roles"] == second["roles"] == ["A", "B", "C"]
    changed = {**res, "blindness": {**res["blindness"], "packet_21": "a shared folder"}}
    with pytest.raises(GabaritoError, match="packet_21: blindness of no known kind"):
        findings.assessors(changed)
    unnamed = {**res, "assessors_packet_21": {"A": "a sub-agent"}}
    with pytest.raises(GabaritoError, match="without its model first"):
        findings.assessors(unnamed)


def run_keys(out: Path, mirror: Path, *extra) -> subprocess.CompletedProcess:
    env = {**os.environ, "GABARITO_DATA_MIRROR": str(mirror)}
    return subprocess.run([sys.executable, str(STUDY / "run_assessor_keys.py"), "--out", str(out), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def test_the_keys_command_scores_every_set_under_the_three_keys(tmp_path, mirror):
    done = run_keys(tmp_path, mirror, "--resamples", "100")
    assert done.returncode == 0, done.stderr
    keys = json.loads((tmp_path / "assessor_keys.json").read_text(encoding="utf-8"))
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    assert list(keys["sets"]) == list(res["sets"])
    for s, x in keys["sets"].items():
        assert set(x["keys"]) == {"rule", "min", "mean"}
        # the rule in use is the study's graded regime: the same means, the same order
        assert x["keys"]["rule"]["graded"]["metrics"] == res["sets"][s]["regimes"]["graded"]["metrics"]
        assert x["single"]["order"] == res["sets"][s]["regimes"]["single"]["order"]
        assert x["keys"]["mean"]["graded"]["measures"] == ["nDCG@10"]
        assert x["keys"]["rule"]["moved"]["n"] == 0
    # min(A, B) drops every grade the adjudicator or the override raised: the 14 + 9 agreed-1 or
    # adjudicated-1 expected concepts among them
    assert keys["moved"]["min"]["higher"] == 0 and keys["moved"]["min"]["expected"] >= 14 + 9
    assert keys["moved"]["min"]["n"] >= res["adjudication"]["higher"]
    h = findings.assessor_keys(keys)
    assert h["rows"]["rule"]["order_changed"] == findings.headline(res)["order_changed"]


def test_the_committed_keys_are_the_studys_rule_and_state_the_essential():
    keys = json.loads((STUDY / "assessor_keys.json").read_text(encoding="utf-8"))
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    h, e = findings.assessor_keys(keys), findings.essential(res)
    assert h["rows"]["rule"]["order_changed"] == e["order_changed"]
    assert (h["rows"]["rule"]["single"], h["rows"]["rule"]["graded"]) == (e["first_set"]["bm25_single"],
                                                                         e["first_set"]["bm25_graded"])
    assert set(keys["provenance"]["gold_sha256"]) == set(res["provenance"]["gold_sha256"])
