"""The known answers of the judgments study: every expected concept pooled, blind, frozen, isolated.

Issue 22: 37 expected concepts never entered a pool, and the assessors worked inside the
repository. ``case-studies/judgments/pool_known_answers.py`` pools them among decoys in
``packets/packet_21.json`` (frozen in ``pools_known.lock.json``) and makes assessor folders that
hold only the packet, the guide and a standalone checker.
"""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from copies import studies_env

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import verify_frozen
from gabarito.inputs.pools import read_grades

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "case-studies" / "judgments"
FLAGSHIP = ROOT / "case-studies" / "benchmark_rrf"
SCRIPT = "pool_known_answers.py"
GOLD = ["questions.json", "questions_extended.json", "questions_published.json",
        "protocols/questions_name_only.json", "protocols/questions_disjoint.json"]


def load(rel: str):
    return json.loads((BASE / rel).read_text(encoding="utf-8"))


def run_script(args, env_mirror, cwd=ROOT):
    env = {**os.environ, "GABARITO_DATA_MIRROR": str(env_mirror), **studies_env(Path(args[0]).parent.parent, {})}
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)


def test_every_expected_concept_is_now_pooled_and_keyed():
    old = {(k["question"], k["concept"]) for k in load("packets/key.json").values()}
    new = {(k["question"], k["concept"]) for k in load("packets/key_known.json").values() if k["role"] == "known"}
    pooled = {(q["id"], c) for f in ("pools/pool.json", "pools/pool_known.json")
              for q in load(f)["questions"] for c in q["candidates"]}
    added, n = {}, 0
    for f in GOLD:
        for p in json.loads((FLAGSHIP / f).read_text(encoding="utf-8"))["pairs"]:
            pair, n = (p["id"], p["gold"]), n + 1
            assert (pair in old) != (pair in new) and pair in pooled, pair
            added[f] = added.get(f, 0) + (pair in new)
    assert n == 400 and len(new) == 37
    assert list(added.values()) == [0, 0, 2, 18, 17]  # main, extended, published, name_only, disjoint (issue 22)


def test_new_pool_and_packet_carry_no_run_rank_score_or_role():
    packet, pool = load("packets/packet_21.json"), load("pools/pool_known.json")
    assert set(packet) == {"packet", "guide", "n_pairs", "pairs"} and packet["n_pairs"] == len(packet["pairs"]) == 148
    assert all(set(p) == {"pair", "question", "concept", "description"} for p in packet["pairs"])
    assert set(pool) == {"meta", "questions"}
    assert all(set(q) == {"id", "question", "candidates"} for q in pool["questions"])
    assert all(isinstance(c, str) for q in pool["questions"] for c in q["candidates"])
    methods = load("pools/pool.json")["meta"]["methods_pooled"]
    for rel in ("packets/packet_21.json", "pools/pool_known.json"):
        text = (BASE / rel).read_text(encoding="utf-8")
        for word in [*methods, "rrf", "\"rank", "\"score", "\"role", "\"expected", "\"decoy", "\"known", "judged_as"]:
            assert word not in text, (rel, word)
    assert not {"decoy", "known", "expected"} & {str(v) for p in packet["pairs"] for v in p.values()}


def test_known_answers_hide_among_already_judged_decoys_in_varied_positions():
    key, old = load("packets/key_known.json"), load("packets/key.json")
    packet = load("packets/packet_21.json")
    assert list(key) == [p["pair"] for p in packet["pairs"]]
    last = max(int(p[1:]) for p in old)
    assert [int(p[1:]) for p in key] == list(range(last + 1, last + 1 + len(key)))  # the counter continues
    positions, questions = set(), []
    for pid, k in key.items():
        if not questions or questions[-1] != k["question"]:
            questions.append(k["question"])
            i = 0
        if k["role"] == "known":
            positions.add(i)
            assert k["judged_as"] is None
        else:
            assert k["role"] == "decoy" and old[k["judged_as"]] == {"question": k["question"], "concept": k["concept"]}
        i += 1
    assert len(questions) == len(set(questions)) == 37  # one question's pairs stay consecutive
    assert all(sum(k["question"] == q for k in key.values()) == 4 for q in questions)
    assert len(positions) > 2  # the known answer is not recognisable by its position


def test_known_answer_files_are_frozen_and_old_freezes_untouched():
    frozen = verify_frozen(BASE / "pools_known.lock.json")
    assert set(frozen) == {"pools/pool_known.json", "packets/packet_21.json", "packets/key_known.json"}
    assert "packets/packet_21.json" not in load("pools.lock.json")["files"]
    verify_frozen(BASE / "pools.lock.json")
    verify_frozen(BASE / "judgments.lock.json")


@pytest.fixture(scope="module")
def study_copy(tmp_path_factory):
    """The judgments folder and the gold files it reads, copied (grades and results left out)."""
    root = tmp_path_factory.mktemp("repo") / "case-studies"
    shutil.copytree(BASE, root / "judgments", ignore=shutil.ignore_patterns("grades", "adjudication", "results.json"))
    for f in GOLD:
        (root / "benchmark_rrf" / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FLAGSHIP / f, root / "benchmark_rrf" / f)
    return root / "judgments"


def test_command_rebuilds_the_frozen_files_identically_from_scratch(study_copy, mirror):
    (study_copy / "pools_known.lock.json").unlink()
    for rel in ("pools/pool_known.json", "packets/packet_21.json", "packets/key_known.json"):
        (study_copy / rel).unlink()
    done = run_script([study_copy / SCRIPT], mirror)
    assert done.returncode == 0, done.stderr
    assert "37 known answers (main 0, extended 0, published 2, name_only 18, disjoint 17), 148 pairs" in done.stderr
    rebuilt = json.loads((study_copy / "pools_known.lock.json").read_text())
    assert rebuilt["files"] == load("pools_known.lock.json")["files"]
    again = run_script([study_copy / SCRIPT], mirror)
    assert again.returncode == 0 and "rebuilt identically" in again.stderr


def test_command_refuses_a_changed_frozen_file_in_one_line(study_copy, mirror):
    packet = study_copy / "packets" / "packet_21.json"
    original = packet.read_bytes()
    packet.write_bytes(original.replace(b'"n_pairs": 148', b'"n_pairs": 147'))
    try:
        done = run_script([study_copy / SCRIPT], mirror)
    finally:
        packet.write_bytes(original)
    assert done.returncode == 2 and "packet_21.json" in done.stderr and "frozen" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_assessor_folders_hold_only_packet_guide_and_checker(tmp_path, mirror):
    done = run_script([BASE / SCRIPT, "--assess", tmp_path / "assess"], mirror)
    assert done.returncode == 0, done.stderr
    for aid in ("A", "B"):
        folder = tmp_path / "assess" / aid
        assert sorted(p.name for p in folder.iterdir()) == ["check_grades.py", "guia_de_avaliacao.md", "packet_21.json"]
        assert (folder / "packet_21.json").read_bytes() == (BASE / "packets" / "packet_21.json").read_bytes()
        tree = ast.parse((folder / "check_grades.py").read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert imported == {"json", "sys"} and not any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
    assert list((tmp_path / "assess" / "C").iterdir()) == []
    (tmp_path / "assess" / "A" / "grades_21.json").write_text("[]")
    again = run_script([BASE / SCRIPT, "--assess", tmp_path / "assess"], mirror)
    assert again.returncode == 2 and "grades_21.json" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 2  # the build line, then one error line


CHECKER = BASE / "standalone_check_grades.py"
BAD = [
    "not json",
    '{"pair": "P1"}',
    '[{"pair": "P1", "grade": 3}, {"pair": "P2", "grade": 0}]',
    '[{"pair": "P1", "grade": 1}, {"pair": "P1", "grade": 1}]',
    '[{"pair": "P9", "grade": 1}]',
    '[{"pair": "P1", "grade": true}, {"pair": "P2", "grade": 0}]',
    '[{"pair": "P1", "grade": 1}]',
    '[{"grade": 1}]',
]


@pytest.mark.parametrize("content", BAD)
def test_standalone_checker_refuses_what_read_grades_refuses(tmp_path, content):
    packet = tmp_path / "packet_21.json"
    packet.write_text(json.dumps({"packet": 21, "pairs": [{"pair": "P1"}, {"pair": "P2"}]}))
    grades = tmp_path / "grades_21.json"
    grades.write_text(content)
    with pytest.raises(GabaritoError):
        read_grades(grades, ["P1", "P2"])
    done = subprocess.run([sys.executable, "-I", CHECKER, packet, grades], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "grades_21.json" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_standalone_checker_accepts_the_packet_order_only(tmp_path):
    grades = tmp_path / "grades_21.json"
    pairs = [p["pair"] for p in load("packets/packet_21.json")["pairs"]]
    grades.write_text(json.dumps([{"pair": p, "grade": i % 3} for i, p in enumerate(pairs)]))
    done = subprocess.run([sys.executable, "-I", CHECKER, BASE / "packets" / "packet_21.json", grades],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok: 148 pairs graded"
    assert len(read_grades(grades, pairs)) == 148
    grades.write_text(json.dumps([{"pair": p, "grade": 0} for p in [pairs[1], pairs[0], *pairs[2:]]]))
    done = subprocess.run([sys.executable, "-I", CHECKER, BASE / "packets" / "packet_21.json", grades],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "record 1" in done.stderr and "out of order" in done.stderr
