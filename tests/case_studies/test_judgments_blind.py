"""Issue 41 item 4b: the blind regrade of packets 01-20, prepared and imported through its command.

``blind_regrade.py prepare OUT`` (the frozen draw, the two assessors' folders) is driven on the
repository; ``blind_regrade.py import OUT`` and ``run_blind_regrade.py`` on a copy of the study
folder, with a tiny fake grading: the non-blind grades given back, three of B's changed.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from copies import FLAGSHIP, GOLD, ROOT, SETS, judgments_copy, load, studies_env
from copies import JUDGMENTS as BASE

from gabarito.inputs.gold import verify_frozen
from studies.judgments import findings


def run(args, mirror, case_studies=ROOT / "case-studies"):
    env = {**studies_env(case_studies), "GABARITO_DATA_MIRROR": str(mirror)}
    return subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True)


def one_line_error(done) -> bool:
    lines = [x for x in done.stderr.strip().splitlines() if not x.startswith("blind_regrade: ")]
    return done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ")


def test_the_frozen_draw_is_stratified_and_holds_every_overridden_pair():
    verify_frozen(BASE / "blind.lock.json")
    key = load(BASE / "packets" / "key_22.json")
    packet = load(BASE / "packets" / "packet_22.json")
    first = load(BASE / "judgments.json")["pairs"]
    known = load(BASE / "judgments_known.json")["pairs"]
    pairs = key["pairs"]
    assert list(pairs) == [p["pair"] for p in packet["pairs"]] and len(pairs) >= 500 + 9
    strata = Counter((k["set"], k["grade"]) for k in pairs.values() if k["round"] == "01-20")
    assert set(strata) == {(s, g) for s in SETS for g in (0, 1, 2)} and set(strata.values()) == {40}
    drawn = {k["judged_as"] for k in pairs.values()}
    assert len(drawn) == len(pairs)
    overridden = {pid for pid, p in first.items() if p["rule"] == "expected kept at 2"}
    overridden |= {pid for pid, p in known.items() if p["role"] == "known" and p["rule"] == "expected kept at 2"}
    assert len(overridden) == 14 + 9 and overridden <= drawn
    assert {k["judged_as"] for k in pairs.values() if k["overridden"]} == overridden
    for pid, k in pairs.items():
        old = first.get(k["judged_as"]) or known[k["judged_as"]]
        assert (old["question"], old["doc"], old["grade"]) == (k["question"], k["concept"], k["grade"])
    # an assessor sees the question's text and the concept, nothing that names a set, a method or a grade
    assert all(set(p) == {"pair", "question", "concept", "description"} for p in packet["pairs"])
    text = (BASE / "packets" / "packet_22.json").read_text(encoding="utf-8")
    for word in [*(f'"{s}"' for s in SETS), "bm25", "rrf@", "\"grade", "\"set", "judged_as", "overridden", "\"expected"]:
        assert word not in text, word
    assert not {k["question"] for k in pairs.values()} & {p["question"] for p in packet["pairs"]}  # no ids


def test_prepare_fills_two_folders_with_only_packet_guide_and_checker(tmp_path, mirror):
    out = tmp_path / "assess"
    done = run([BASE / "blind_regrade.py", "prepare", out], mirror)
    assert done.returncode == 0, done.stderr
    assert "609 pairs" in done.stderr and "already frozen; rebuilt identically" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["A", "B", "instructions_A.txt", "instructions_B.txt"]
    for aid in ("A", "B"):
        folder = out / aid
        assert sorted(p.name for p in folder.iterdir()) == ["check_grades.py", "guia_de_avaliacao.md", "packet_22.json"]
        assert (folder / "packet_22.json").read_bytes() == (BASE / "packets" / "packet_22.json").read_bytes()
        tree = ast.parse((folder / "check_grades.py").read_text())
        assert {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} == {"json", "sys"}
        told = (out / f"instructions_{aid}.txt").read_text(encoding="utf-8")
        assert str(folder.resolve()) in told and "ok: 609 pairs graded" in told and "{" + "DIR}" not in told
    (out / "B" / "notes.txt").write_text("x")
    again = run([BASE / "blind_regrade.py", "prepare", out], mirror)
    assert one_line_error(again) and "notes.txt" in again.stderr


def test_prepare_refuses_a_folder_inside_the_repository(mirror):
    done = run([BASE / "blind_regrade.py", "prepare", ROOT / "assess_here"], mirror)
    assert one_line_error(done) and "outside the repository" in done.stderr
    assert not (ROOT / "assess_here").exists()


@pytest.fixture()
def copy(tmp_path):
    """The judgments folder (results left out) and the flagship's gold, runs and results."""
    # the committed blind grades left out: each test imports its own fake grading (the packet is put back)
    here = judgments_copy(tmp_path, leave_out=("results.json", "assessor_keys.json", "__pycache__", "blind_regrade.json",
                                               "blind_grades.lock.json", "judgments_blind.json", "packet_22.json"),
                          flagship=[*GOLD, "results.json", *(f"runs/{p.name}" for p in (FLAGSHIP / "runs").glob("*.trec"))])
    shutil.copyfile(BASE / "packets" / "packet_22.json", here / "packets" / "packet_22.json")
    return here


def fake_grading(copy: Path, out: Path, changed: int = 3) -> None:
    """The assessors' folders as a grading leaves them: A gives the non-blind A's grades back, B the
    non-blind B's with the first ``changed`` pairs one grade off."""
    key = load(copy / "packets" / "key_22.json")["pairs"]
    old = {**load(copy / "judgments.json")["pairs"], **load(copy / "judgments_known.json")["pairs"]}
    for aid, letter in (("A", "a"), ("B", "b")):
        (out / aid).mkdir(parents=True, exist_ok=True)
        grades = [{"pair": pid, "grade": old[k["judged_as"]][letter]} for pid, k in key.items()]
        if aid == "B":
            for g in grades[:changed]:
                g["grade"] = 1 if g["grade"] != 1 else 2
        (out / aid / "grades_22.json").write_text(json.dumps(grades), encoding="utf-8")


WHO = ["--assessor-a", "Claude (Anthropic), a new sub-agent alone in OUT/A",
       "--assessor-b", "Claude (Anthropic), another new sub-agent alone in OUT/B"]


def test_import_freezes_the_blind_grades_and_the_variant_scores_them(copy, tmp_path, mirror):
    out = tmp_path / "assess"
    fake_grading(copy, out)
    script = copy / "blind_regrade.py"
    done = run([script, "import", out, *WHO], mirror, copy.parent)
    assert done.returncode == 0, done.stderr
    assert "609 pairs graded by A and B" in done.stderr and "frozen in blind_grades.lock.json" in done.stderr
    frozen = verify_frozen(copy / "blind_grades.lock.json")
    assert set(frozen) == {"grades/A/packet_22.json", "grades/B/packet_22.json", "judgments_blind.json"}
    doc = load(copy / "judgments_blind.json")
    assert doc["blindness"].startswith("isolated folders") and doc["n_pairs"] == 609
    assert sum(p["b"] != p["old_b"] for p in doc["pairs"].values()) == 3
    assert all(p["a"] == p["old_a"] for p in doc["pairs"].values())
    again = run([script, "import", out, *WHO], mirror, copy.parent)
    assert again.returncode == 0 and "already frozen; the same grades" in again.stderr
    fake_grading(copy, out, changed=4)
    other = run([script, "import", out, *WHO], mirror, copy.parent)
    assert one_line_error(other) and "frozen" in other.stderr

    scored = run([copy / "run_blind_regrade.py", "--out", tmp_path / "res", "--resamples", "100"], mirror, copy.parent)
    assert scored.returncode == 0, scored.stderr
    res = load(tmp_path / "res" / "blind_regrade.json")
    agree = res["agreement"]["all"]
    assert agree["a_old_a"]["observed_agreement"] == 1 and agree["a_old_a"]["linear"]["kappa"] == 1
    assert agree["b_old_b"]["observed_agreement"] == pytest.approx(606 / 609)
    assert agree["mean_old_mean"]["grades"] == [0, 1, 2, 3, 4]
    assert res["agreement"]["packets_01_20"]["blind_a_b"]["n_pairs"] == 600
    assert res["overridden"]["n"] == 23 and sum(res["overridden"]["min"].values()) == 23
    assert res["provenance"]["parameters"]["blind_grades_sha256"] == frozen
    h = findings.assessor_keys(res)  # the headline on the blind grades, read as the keys' is
    assert set(h["rows"]) == {"rule", "min", "mean"} and h["rows"]["rule"]["moved"] == 0
    said = findings.blind_regrade(res)
    assert said["agreement"]["a_old_a"]["kappa"] == 1 and said["agreement"]["a_old_a"]["band"] == "quase perfeita"
    assert said["overridden"]["n"] == 23 and 0 <= said["overridden"]["kept"] <= 23
    assert said["headline"] == h and said["n_pairs"] == 609


def test_a_bad_grades_file_is_one_line_and_nothing_is_written(copy, tmp_path, mirror):
    out = tmp_path / "assess"
    fake_grading(copy, out)
    grades = load(out / "B" / "grades_22.json")
    (out / "B" / "grades_22.json").write_text(json.dumps(grades[:-1]), encoding="utf-8")
    done = run([copy / "blind_regrade.py", "import", out, *WHO], mirror, copy.parent)
    assert one_line_error(done) and "grades_22.json" in done.stderr and "without a grade" in done.stderr
    for rel in ("judgments_blind.json", "blind_grades.lock.json", "grades/A/packet_22.json", "grades/B/packet_22.json"):
        assert not (copy / rel).exists(), rel
    nameless = run([copy / "blind_regrade.py", "import", out, "--assessor-a", "someone", "--assessor-b", "x"],
                   mirror, copy.parent)
    assert one_line_error(nameless) and "without its model first" in nameless.stderr
