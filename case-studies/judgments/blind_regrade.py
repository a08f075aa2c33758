"""Issue 41, item 4b: a blind regrade of packets 01-20 by two new assessors, each alone in a folder.

    python case-studies/judgments/blind_regrade.py prepare OUT
    python case-studies/judgments/blind_regrade.py import OUT --assessor-a TEXT --assessor-b TEXT

Packets 01-20 were graded where the gold could be opened (blind by instruction only). This
regrade draws ``PER_STRATUM`` pairs of packets 01-20 from every stratum (gold set x frozen grade;
15 strata), keeping in their strata every pair the gold override changed (rule ``expected kept
at 2``), and adds the pairs the override changed in packet 21. Drawn with a fixed seed and frozen
in ``blind.lock.json`` before anyone grades:

* ``packets/packet_22.json`` -- what an assessor receives, in the form of packets 01-21: pair id
  (the key's counter continued), question text, concept name and description; no question id, no
  set, no method, no grade; the pairs of one question together, questions in a drawn order;
* ``packets/key_22.json`` -- each pair's question, concept, gold set, round and pair id there
  (``judged_as``), frozen grade and whether the override changed it; never given to an assessor.

``prepare OUT`` (once frozen: rebuilt in a scratch folder and checked byte for byte) fills
``OUT/A`` and ``OUT/B`` with only the packet, the guide and the standalone checker
(:func:`studies.judgments.pool_known_answers.fill_folders`), and writes the instruction each
assessor is given, ``OUT/instructions_A.txt`` and ``OUT/instructions_B.txt`` (outside their
folders; from ``assessor_prompt_blind.txt``).

``import OUT`` reads ``OUT/A/grades_22.json`` and ``OUT/B/grades_22.json`` (checked against the
packet, both before anything is written), copies them to ``grades/A|B/packet_22.json``, writes
``judgments_blind.json`` (each pair with the blind grades ``a``, ``b`` and the non-blind ``old_a``,
``old_b``, ``old_grade``; the assessors as given, the blindness of the round) and freezes the
three in ``blind_grades.lock.json``. Run again, it checks the frozen files are what the grades
give and writes nothing. ``run_blind_regrade.py`` then scores them.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file, sha256_text
from gabarito.inputs.gold import freeze, verify_frozen
from gabarito.inputs.pools import read_grades
from gabarito.study.records import now_iso
from studies.judgments.build_pools import GUIDE
from studies.judgments.findings import model_of
from studies.judgments.freeze_qrels import gold
from studies.judgments.pool_known_answers import fill_folders
from studies.judgments.run_judgments import SETS

HERE = Path(__file__).resolve().parent
PACKET, PER_STRATUM, SEED = 22, 40, 20261207
OUTPUTS = (f"packets/packet_{PACKET}.json", f"packets/key_{PACKET}.json")
LOCK = HERE / "blind.lock.json"
GRADES_LOCK = HERE / "blind_grades.lock.json"
BLIND_DOC = "judgments_blind.json"
GRADES = f"grades_{PACKET}.json"
PROMPT = "assessor_prompt_blind.txt"
OVERRIDDEN = "expected kept at 2"
BLINDNESS = ("isolated folders outside the repository, one per assessor, holding only the packet (question texts, "
             "concept names and descriptions), the guide and a standalone checker; no gold, key, pool sources or "
             "earlier grades; enforced by instruction, not by the operating system")
NOTE = (f"blind regrade: {PER_STRATUM} pairs of packets 01-20 per stratum (gold set x frozen grade), every pair "
        f"the gold override changed (packets 01-20 and 21) included; seed {SEED}; frozen before any assessment")


def inputs() -> dict:
    """The frozen judgments (verified), the packets' items by pair id and each question's gold set."""
    verify_frozen(HERE / "judgments.lock.json")
    load = lambda rel: json.loads((HERE / rel).read_text(encoding="utf-8"))  # noqa: E731
    items = {p["pair"]: p for n in range(1, PACKET) for p in load(f"packets/packet_{n:02d}.json")["pairs"]}
    _, members = gold()
    set_of = {q: s for s, qs in members.items() for q in qs}
    return {"first": load("judgments.json")["pairs"], "known": load("judgments_known.json")["pairs"],
            "items": items, "set_of": set_of,
            "last": max(int(pid[1:]) for name in ("key.json", "key_known.json") for pid in load(f"packets/{name}"))}


def draw(data: dict) -> list[tuple[str, str]]:
    """``(pair id, round)`` of the sample: per stratum of packets 01-20 its overridden pairs and
    seeded draws up to ``PER_STRATUM``; then packet 21's overridden known answers."""
    rng = random.Random(SEED)
    strata: dict[tuple[str, int], list[str]] = {}
    for pid, p in sorted(data["first"].items()):
        strata.setdefault((data["set_of"][p["question"]], p["grade"]), []).append(pid)
    chosen = []
    for stratum in sorted(strata, key=lambda x: (SETS.index(x[0]), x[1])):
        forced = [pid for pid in strata[stratum] if data["first"][pid]["rule"] == OVERRIDDEN]
        rest = [pid for pid in strata[stratum] if pid not in forced]
        n = max(0, min(PER_STRATUM - len(forced), len(rest)))
        chosen += [(pid, "01-20") for pid in forced + rng.sample(rest, n)]
    chosen += [(pid, "21") for pid, p in sorted(data["known"].items())
               if p["role"] == "known" and p["rule"] == OVERRIDDEN]
    return chosen


def order(chosen: list[tuple[str, str]], data: dict) -> list[tuple[str, str]]:
    """The packet's order: questions in a seeded order, the pairs of one question together, shuffled."""
    rng = random.Random(SEED + 1)
    pairs = {**data["first"], **data["known"]}
    by_question: dict[str, list[tuple[str, str]]] = {}
    for pid, rnd in sorted(chosen):
        by_question.setdefault(pairs[pid]["question"], []).append((pid, rnd))
    questions = sorted(by_question)
    rng.shuffle(questions)
    out = []
    for q in questions:
        group = by_question[q]
        rng.shuffle(group)
        out += group
    return out


def build(out: Path, data: dict) -> dict:
    """Write the packet and its key under ``out``; return the key's meta."""
    pairs = {**data["first"], **data["known"]}
    ordered = order(draw(data), data)
    key, items = {}, []
    for i, (old, rnd) in enumerate(ordered, start=data["last"] + 1):
        pid, p = f"P{i:05d}", pairs[old]
        item = data["items"][old]
        items.append({"pair": pid, "question": item["question"], "concept": item["concept"],
                      "description": item["description"]})
        key[pid] = {"question": p["question"], "concept": p["doc"], "set": data["set_of"][p["question"]],
                    "round": rnd, "judged_as": old, "grade": p["grade"], "overridden": p["rule"] == OVERRIDDEN}
    strata: dict[str, int] = {}
    for k in key.values():
        if k["round"] == "01-20":
            strata[f"{k['set']}/{k['grade']}"] = strata.get(f"{k['set']}/{k['grade']}", 0) + 1
    meta = {"seed": SEED, "per_stratum": PER_STRATUM, "n_pairs": len(key), "strata": dict(sorted(strata.items())),
            "overridden": {r: sum(k["overridden"] and k["round"] == r for k in key.values()) for r in ("01-20", "21")},
            "built_from": {f"{rel} pairs": sha256_text(json.dumps(data[part], sort_keys=True))
                           for rel, part in (("judgments.json", "first"), ("judgments_known.json", "known"))}}
    (out / "packets").mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / OUTPUTS[0], {"packet": PACKET, "guide": GUIDE, "n_pairs": len(items), "pairs": items})
    atomic_write_json(out / OUTPUTS[1], {"meta": meta, "pairs": key})
    return meta


def frozen_sample(data: dict) -> tuple[dict, str]:
    """Build and freeze the sample once; later, rebuild it in a scratch folder and compare."""
    if not LOCK.exists():
        meta = build(HERE, data)
        freeze(LOCK, [HERE / rel for rel in OUTPUTS], note=NOTE)
        return meta, f"frozen in {LOCK.name}"
    frozen = verify_frozen(LOCK)
    with tempfile.TemporaryDirectory() as tmp:
        meta = build(Path(tmp), data)
        for rel in OUTPUTS:
            if sha256_file(Path(tmp) / rel) != frozen.get(rel):
                raise GabaritoError("rebuilt file differs from the frozen one", path=HERE / rel)
    return meta, "already frozen; rebuilt identically"


def instructions(root: Path, n: int) -> list[Path]:
    """``root/instructions_<A|B>.txt``: the prompt each assessor is given, its folder filled in."""
    text = (HERE / PROMPT).read_text(encoding="utf-8")
    out = []
    for aid in ("A", "B"):
        filled = (text.replace("{DIR}", str((root / aid).resolve())).replace("{AID}", aid)
                  .replace("{N}", str(n)).replace("{PACKET}", str(PACKET)))
        path = root / f"instructions_{aid}.txt"
        path.write_text(filled, encoding="utf-8")
        out.append(path)
    return out


def prepare(root: Path) -> int:
    meta, state = frozen_sample(inputs())
    print(f"blind_regrade: {meta['n_pairs']} pairs ({len(meta['strata'])} strata of packets 01-20, "
          f"{meta['overridden']['01-20']} + {meta['overridden']['21']} overridden pairs); {state}", file=sys.stderr)
    root = root.resolve()
    if root == HERE.parents[1] or HERE.parents[1] in root.parents:
        raise GabaritoError("the assessors' folders go outside the repository", path=root)
    for folder in fill_folders(root, HERE / OUTPUTS[0]):
        print(f"blind_regrade: {folder}: {', '.join(sorted(p.name for p in folder.iterdir()))}", file=sys.stderr)
    for path in instructions(root, meta["n_pairs"]):
        print(f"blind_regrade: {path}", file=sys.stderr)
    return 0


def blind_doc(key: dict, grades: dict, assessors: dict, old: dict) -> dict:
    """``judgments_blind.json``: each drawn pair with its blind and non-blind grades, and the round."""
    pairs = {}
    for pid, k in key.items():
        was = old[k["judged_as"]]
        pairs[pid] = {"question": k["question"], "doc": k["concept"], "set": k["set"], "round": k["round"],
                      "judged_as": k["judged_as"], "overridden": k["overridden"], "expected": was["expected"],
                      "a": grades["A"][pid], "b": grades["B"][pid], "old_a": was["a"], "old_b": was["b"],
                      "old_grade": was["grade"]}
    prompt = HERE / PROMPT
    return {"assessors": assessors, "blindness": BLINDNESS, "guide": GUIDE, "guide_sha256": sha256_file(HERE / GUIDE),
            "prompt": PROMPT, "prompt_sha256": sha256_file(prompt), "n_pairs": len(pairs), "pairs": pairs}


def import_grades(root: Path, assessors: dict) -> int:
    verify_frozen(LOCK)
    for text in assessors.values():
        model_of(text)  # the model and its maker first, as the earlier rounds recorded them
    packet = json.loads((HERE / OUTPUTS[0]).read_text(encoding="utf-8"))
    key = json.loads((HERE / OUTPUTS[1]).read_text(encoding="utf-8"))["pairs"]
    wanted = [p["pair"] for p in packet["pairs"]]
    grades = {x: read_grades(root / x / GRADES, wanted) for x in ("A", "B")}  # both checked before any write
    data = inputs()
    doc = blind_doc(key, grades, assessors, {**data["first"], **data["known"]})
    copies = {x: HERE / "grades" / x / f"packet_{PACKET}.json" for x in ("A", "B")}
    if GRADES_LOCK.exists():
        verify_frozen(GRADES_LOCK)
        frozen = json.loads((HERE / BLIND_DOC).read_text(encoding="utf-8"))
        same = all((root / x / GRADES).read_bytes() == copies[x].read_bytes() for x in copies)
        if not same or frozen["pairs"] != doc["pairs"]:
            raise GabaritoError("the blind grades are frozen and these differ from them", path=GRADES_LOCK)
        state = "already frozen; the same grades"
    else:
        for x, dest in copies.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / x / GRADES, dest)
        atomic_write_json(HERE / BLIND_DOC, {"date": now_iso(), **doc})
        freeze(GRADES_LOCK, [*copies.values(), HERE / BLIND_DOC], note="blind regrade (packet 22): both assessors' "
               "grades and judgments_blind.json, frozen before any metric")
        state = f"frozen in {GRADES_LOCK.name}"  # the lock records them: no folder manifest names them twice
    differ = sum(p["a"] != p["b"] for p in doc["pairs"].values())
    print(f"blind_regrade: {doc['n_pairs']} pairs graded by A and B ({differ} differ); {state}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare", help="draw and freeze the sample; fill OUT/A and OUT/B")
    p.add_argument("out", type=Path, help="a folder outside the repository")
    i = sub.add_parser("import", help="OUT/A|B/grades_22.json -> frozen judgments_blind.json")
    i.add_argument("out", type=Path)
    i.add_argument("--assessor-a", required=True, help='who graded in OUT/A: "Model (Maker), ..."')
    i.add_argument("--assessor-b", required=True, help='who graded in OUT/B: "Model (Maker), ..."')
    args = parser.parse_args(argv)
    if args.step == "prepare":
        return prepare(args.out)
    return import_grades(args.out, {"A": args.assessor_a, "B": args.assessor_b})


if __name__ == "__main__":
    run_main(main)
