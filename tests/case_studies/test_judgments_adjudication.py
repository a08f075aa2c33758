"""Issue 22, judgments: packet 21 adjudicated in an isolated folder, the known answers in the qrels,
and the study reporting kappa without the shared zeros and three adjudication regimes.

The commands are driven as a user runs them: ``adjudicate.py --known [--assess DIR]`` and
``freeze_qrels.py`` on a copy of the study folder, ``gabarito study judgments`` on the repository.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from copies import FLAGSHIP, GOLD, ROOT, SETS, judgments_copy, load, studies_env
from copies import JUDGMENTS as BASE

from gabarito.inputs.gold import verify_frozen
from gabarito.core.runs import Qrels


def run_script(args, mirror):
    env = {**os.environ, "GABARITO_DATA_MIRROR": str(mirror), **studies_env(Path(args[0]).parent.parent, {})}
    return subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True)


def one_line_error(done) -> bool:
    return done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: ")


@pytest.fixture()
def copy(tmp_path):
    """The study folder as it stood before packet 21 was adjudicated and the qrels re-frozen."""
    here = judgments_copy(tmp_path)
    for rel in ("adjudication_known.lock.json", "adjudication/packet_21.json", "grades/C/packet_21.json",
                "judgments_known.json"):
        (here / rel).unlink(missing_ok=True)
    lock = load(here / "judgments.lock.json")
    if lock.get("history"):  # back to the first freeze: qrels of packets 01-20 only
        first = lock["history"][0]
        old_qrels = {s: {q: {d: g for d, g in row.items() if (q, d) not in known_pairs()} for q, row in
                         Qrels.from_trec(here / "qrels" / f"{s}.txt").items()} for s in SETS}
        for s in SETS:
            Qrels(old_qrels[s]).write_trec(here / "qrels" / f"{s}.txt")
        (here / "judgments.lock.json").write_text(json.dumps({**first, "history": []}))
    verify_frozen(here / "judgments.lock.json")
    return here


def known_pairs() -> set:
    return {(k["question"], k["concept"]) for k in load(BASE / "packets" / "key_known.json").values()
            if k["role"] == "known"}


def differing(here: Path) -> list[str]:
    a, b = (load(here / "grades" / x / "packet_21.json") for x in ("A", "B"))
    return [x["pair"] for x, y in zip(a, b) if x["grade"] != y["grade"]]


def test_known_adjudication_packet_holds_exactly_the_disagreements_and_is_frozen(copy, mirror, tmp_path):
    done = run_script([copy / "adjudicate.py", "--known", "--assess", tmp_path / "assess"], mirror)
    assert done.returncode == 0, done.stderr
    packet = load(copy / "adjudication" / "packet_21.json")
    assert [p["pair"] for p in packet["pairs"]] == differing(copy) and packet["n_pairs"] == len(differing(copy))
    assert all(set(p) == {"pair", "question", "concept", "description"} for p in packet["pairs"])
    assert set(verify_frozen(copy / "adjudication_known.lock.json")) == {"adjudication/packet_21.json"}
    folder = tmp_path / "assess" / "C"
    assert sorted(p.name for p in folder.iterdir()) == ["READY", "check_grades.py", "guia_de_avaliacao.md",
                                                        "packet_adj_21.json"]
    assert (folder / "packet_adj_21.json").read_bytes() == (copy / "adjudication" / "packet_21.json").read_bytes()
    again = run_script([copy / "adjudicate.py", "--known"], mirror)  # frozen: verified, not rewritten
    assert again.returncode == 0 and f"{len(differing(copy))} of 148 pairs differ" in again.stderr
    (folder / "grades_adj_21.json").write_text("[]")  # the adjudicator's folder is filled only once
    done = run_script([copy / "adjudicate.py", "--known", "--assess", tmp_path / "assess"], mirror)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 2 and lines[1].startswith("error: ") and "grades_adj_21" in lines[1]
    grades = copy / "grades" / "A" / "packet_21.json"
    rows = load(grades)
    rows[0]["grade"] = (rows[0]["grade"] + 1) % 3
    grades.write_text(json.dumps(rows))
    done = run_script([copy / "adjudicate.py", "--known"], mirror)
    assert one_line_error(done) and "grades changed" in done.stderr and "packet_21.json" in done.stderr


def test_no_disagreement_leaves_no_packet_and_says_none(copy, mirror, tmp_path):
    shutil.copyfile(copy / "grades" / "A" / "packet_21.json", copy / "grades" / "B" / "packet_21.json")
    done = run_script([copy / "adjudicate.py", "--known", "--assess", tmp_path / "assess"], mirror)
    assert done.returncode == 0, done.stderr
    assert not (copy / "adjudication" / "packet_21.json").exists()
    assert [p.name for p in (tmp_path / "assess" / "C").iterdir()] == ["NONE"]


def test_freeze_adds_only_the_known_answers_to_the_qrels(copy, mirror, tmp_path):
    before = {s: (copy / "qrels" / f"{s}.txt").read_text().splitlines() for s in SETS}
    judgments = (copy / "judgments.json").read_bytes()
    earlier = load(copy / "judgments.lock.json")
    done = run_script([copy / "freeze_qrels.py"], mirror)
    assert one_line_error(done) and "adjudicate.py --known" in done.stderr  # nothing frozen for packet 21 yet
    assert run_script([copy / "adjudicate.py", "--known"], mirror).returncode == 0
    adj = [p["pair"] for p in load(copy / "adjudication" / "packet_21.json")["pairs"]]
    (copy / "grades" / "C" / "packet_21.json").write_text(json.dumps([{"pair": p, "grade": 1} for p in adj[1:]]))
    done = run_script([copy / "freeze_qrels.py"], mirror)
    assert one_line_error(done) and "grades/C/packet_21.json" in done.stderr  # one adjudication missing
    (copy / "grades" / "C" / "packet_21.json").write_text(json.dumps([{"pair": p, "grade": 1} for p in adj]))
    done = run_script([copy / "freeze_qrels.py"], mirror)
    assert done.returncode == 0, done.stderr
    assert (copy / "judgments.json").read_bytes() == judgments  # the first round's frozen file is untouched
    key = load(copy / "packets" / "key_known.json")
    doc = load(copy / "judgments_known.json")
    added = []
    for s in SETS:
        after = (copy / "qrels" / f"{s}.txt").read_text().splitlines()
        assert set(before[s]) <= set(after)
        added += [line.split() for line in set(after) - set(before[s])]
    assert len(added) == 37 and {(q, d) for q, _, d, _ in added} == known_pairs()
    for q, _, d, g in added:
        pid = next(pid for pid, k in key.items() if (k["question"], k["concept"]) == (q, d))
        p = doc["pairs"][pid]
        assert int(g) == (0 if p["a"] == p["b"] == 0 else 2)
    decoys = [p for p in doc["pairs"].values() if p["role"] == "decoy"]
    frozen = load(copy / "judgments.json")["pairs"]
    assert len(decoys) == 111 and all(p["old"] == frozen[p["judged_as"]]["grade"] for p in decoys)
    lock = verify_frozen(copy / "judgments.lock.json")
    assert "judgments_known.json" in lock and "judgments.json" in lock
    assert load(copy / "judgments.lock.json")["history"][-1]["files"] == earlier["files"]  # the old freeze is kept
    again = run_script([copy / "freeze_qrels.py"], mirror)
    assert again.returncode == 0 and "reproduced identically" in again.stderr


def test_committed_qrels_judge_all_400_expected_concepts():
    verify_frozen(BASE / "judgments.lock.json")
    qrels = {s: Qrels.from_trec(BASE / "qrels" / f"{s}.txt") for s in SETS}
    doc = load(BASE / "judgments_known.json")
    rejected = {(doc["pairs"][p]["question"], doc["pairs"][p]["doc"]) for p in doc["gold_rejected"]}
    n = 0
    for s, f in zip(SETS, GOLD):
        for p in load(FLAGSHIP / f)["pairs"]:
            n += 1
            assert qrels[s][p["id"]][p["gold"]] == (0 if (p["id"], p["gold"]) in rejected else 2), p["id"]
    assert n == 400


def test_study_command_reports_nonzero_kappa_resolutions_and_three_adjudication_regimes(tmp_path, mirror):
    env = {**os.environ, "GABARITO_DATA_MIRROR": str(mirror)}
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "study", "judgments", "--resamples", "100",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    res = load(tmp_path / "results.json")
    assert res["n_expected"] == res["expected_judged"] == 400 and res["n_known_answers"] == 37
    assert set(res["blindness"]) == {"packets_01_20", "packet_21"}
    adj = res["adjudication"]
    assert adj["n"] == res["n_disagreements"] == adj["higher"] + adj["lower"] + adj["between"] + adj["outside"]
    for s, x in res["sets"].items():
        a = x["agreement"]
        nz = a["either_nonzero"]
        assert nz["n_pairs"] == a["n_pairs"] - a["confusion"][0][0]
        assert nz["linear"]["kappa"] < a["linear"]["kappa"]  # the shared zeros inflate kappa
        regimes = x["adjudication_regimes"]
        assert set(regimes) == {"adjudicated", "min", "max"}
        assert regimes["adjudicated"]["graded"] == x["regimes"]["graded"]
        g = {r: regimes[r]["final_grades"] for r in regimes}
        assert int(g["min"]["0"]) >= int(g["adjudicated"]["0"]) >= int(g["max"]["0"])
        assert sum(map(int, g["min"].values())) == x["pool"]["pairs"]
    p21 = res["packet_21"]
    assert p21["n_pairs"] == 148 and p21["n_known"] == 37 and p21["decoys_vs_frozen"]["n"] == 111
    assert p21["adjudication"]["n"] == p21["n_disagreements"]
