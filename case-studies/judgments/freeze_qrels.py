"""Step 4 of the judgments: one grade per pair, graded qrels per gold set, frozen before any metric.

    python case-studies/judgments/freeze_qrels.py

Combines assessors A and B and the adjudicator C (:func:`gabarito.measure.judgments.combine`: the
expected concept keeps grade 2 unless every assessor gave it 0) in two rounds:

* packets 01-20: checked against the frozen ``judgments.json`` (every pair with each assessor's
  grade, the final grade, the rule that decided it and the assessors' identities), never rewritten;
* packet 21 (``pool_known_answers.py``, ``adjudicate.py --known``): the 37 expected concepts no pool
  held, hidden among decoys already graded in packets 01-20, graded by two new assessors in
  isolated folders. Written to ``judgments_known.json``: each pair with its role (``known`` or
  ``decoy``) and, for a decoy, its frozen grade of packets 01-20 (``old``), a consistency check
  only: the decoys' frozen grades stay in the qrels.

Then ``qrels/<set>.txt`` (TREC qrels: question, 0, concept, grade) hold the first round's pairs
and the known answers, and ``judgments.lock.json`` (the study's gold manifest) freezes the qrels,
``judgments.json`` and ``judgments_known.json``; the earlier freeze is kept under ``history``. Run
again once frozen, the script checks every frozen file is what the grades give and writes nothing;
when only ``judgments_known.json``'s description differs (how the assessors or the prompt are
described, never a pair), it rewrites that file, keeping the round's date and the sha256 of the
prompt as given, and freezes again with a note saying so.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.gold import freeze, verify_frozen
from gabarito.inputs.pools import read_grades
from gabarito.measure.judgments import combine, graded_qrels
from gabarito.study.records import now_iso
from studies.judgments.adjudicate import (HERE, KNOWN, KNOWN_LOCK, assessor_grades, known_grades, packet_pairs,
                                          record_grades)
from studies.judgments.build_pools import FLAGSHIP, GUIDE, SETS
from studies.judgments.pool_known_answers import LOCK as POOLS_KNOWN_LOCK

LOCK = HERE / "judgments.lock.json"
KNOWN_DOC = "judgments_known.json"
PROMPT_KNOWN = "assessor_prompt_known.txt"
KNOWN_ASSESSORS = {
    "A": "Claude (Anthropic), a new sub-agent (none of packets 01-20's), alone in a folder of its own, outside "
         "the repository, that held only packet_21.json, the guide and a standalone checker "
         "(prompt: assessor_prompt_known.txt)",
    "B": "Claude (Anthropic), another new sub-agent, same prompt, alone in another folder of its own, outside "
         "the repository",
    "C": "Claude (Anthropic), a new sub-agent that graded only packet 21's A/B disagreements, blind to both "
         "grades, alone in a third folder of its own, outside the repository (adjudication packet, guide and "
         "checker only)",
}
#: How the committed prompt differs from the one the assessors of packet 21 received, whose sha256
#: ``judgments_known.json`` keeps as ``prompt_sha256``.
PROMPT_FOLDERS = ("prompt_sha256 is the prompt as the assessors received it (the file at commit e35152b); the "
                  "committed file writes the folders it named by their absolute paths on the machine that ran the "
                  "assessors generically: {FOLDER} (the assessor's folder of its own, outside the repository: "
                  "pool_known_answers.py --assess DIR made DIR/<AID>), {REPO} (the repository's folder), the other "
                  "assessors' folders and the operator's notes; nothing else changed")
BLINDNESS = {
    "packets_01_20": "instructions only: the assessors worked inside the repository, where the gold files, "
                     "packets/key.json and pools/sources.json could be opened",
    "packet_21": "isolated folders outside the repository holding only the packet, the guide and a standalone "
                 "checker (the adjudicator: its packet of disagreements, the guide and the checker); still "
                 "enforced by instruction, not by the operating system",
}
RULES = "agreed grade; else the adjudicator's; the expected concept keeps 2 unless every assessor gave 0"
NOTE = "packets 01-20 (judgments.json) and packet 21's known answers (judgments_known.json)"
#: The note of a freeze that only rewrote ``judgments_known.json``'s description.
REDESCRIBED = "judgments_known.json's description rewritten (pairs, grades and qrels unchanged)"


def gold() -> tuple[dict[str, str], dict[str, list[str]]]:
    """Every gold set's expected concept per question, and the questions of each set."""
    expected, members = {}, {}
    for name, f in SETS.items():
        pairs = json.loads((FLAGSHIP / f).read_text(encoding="utf-8"))["pairs"]
        expected.update({p["id"]: p["gold"] for p in pairs})
        members[name] = [p["id"] for p in pairs]
    return expected, members


def adjudications() -> dict[str, int]:
    """The adjudicator's grades of packets 01-20 (the adjudication packets of adjudication.lock.json)."""
    out: dict[str, int] = {}
    frozen = json.loads((HERE / "adjudication.lock.json").read_text(encoding="utf-8"))["files"]
    for rel in sorted(frozen):
        packet = HERE / rel
        expected = [p["pair"] for p in packet_pairs(packet)]
        out.update(read_grades(HERE / "grades" / "C" / packet.name, expected))
    return out


def first_round(expected: dict[str, str]) -> dict:
    """The frozen ``judgments.json``, after checking the grades still combine into it."""
    key = json.loads((HERE / "packets" / "key.json").read_text(encoding="utf-8"))
    combined = combine(assessor_grades("A"), assessor_grades("B"), adjudications(), key, expected)
    doc = json.loads((HERE / "judgments.json").read_text(encoding="utf-8"))
    for field in ("pairs", "gold_rejected", "n_disagreements"):
        if combined[field] != doc[field]:
            raise GabaritoError(f"the grades of packets 01-20 no longer give its {field!r}", path=HERE / "judgments.json")
    return doc


def known_round(expected: dict[str, str], old: dict[str, dict]) -> dict:
    """Packet 21 combined: known answers and decoys, each decoy with its frozen grade as ``old``."""
    verify_frozen(POOLS_KNOWN_LOCK)
    lock = json.loads(KNOWN_LOCK.read_text(encoding="utf-8")) if KNOWN_LOCK.exists() else None
    if lock is None:
        raise GabaritoError("packet 21 has no frozen adjudication: run adjudicate.py --known", path=KNOWN_LOCK)
    a, b = known_grades("A"), known_grades("B")
    for x in ("A", "B"):
        if sha256_file(HERE / "grades" / x / KNOWN) != lock["grades_sha256"][f"grades/{x}/{KNOWN}"]:
            raise GabaritoError("grades changed after the adjudication packet was frozen", path=HERE / "grades" / x / KNOWN)
    c: dict[str, int] = {}
    if lock["files"]:
        verify_frozen(KNOWN_LOCK)
        wanted = [p["pair"] for p in packet_pairs(HERE / "adjudication" / KNOWN)]
        c = read_grades(HERE / "grades" / "C" / KNOWN, wanted)
    key = json.loads((HERE / "packets" / "key_known.json").read_text(encoding="utf-8"))
    combined = combine(a, b, c, key, expected)
    for pid, p in combined["pairs"].items():
        k = key[pid]
        p.update({"role": k["role"], "set": k["set"], "judged_as": k["judged_as"],
                  "old": old[k["judged_as"]]["grade"] if k["judged_as"] else None})
        if (k["role"] == "known") != p["expected"]:
            raise GabaritoError(f"pair {pid}: role {k['role']!r} but expected={p['expected']}",
                                path=HERE / "packets" / "key_known.json")
    judged = frozen_known() or {}  # once frozen, the round keeps its date and the prompt it was given
    prompt_sha256 = judged.get("prompt_sha256") or sha256_file(HERE / PROMPT_KNOWN)
    return {"date": judged.get("date") or now_iso(), "assessors": KNOWN_ASSESSORS, "blindness": BLINDNESS,
            "guide": GUIDE, "guide_sha256": sha256_file(HERE / GUIDE), "prompt": PROMPT_KNOWN,
            "prompt_sha256": prompt_sha256,
            **({"prompt_folders": PROMPT_FOLDERS} if prompt_sha256 != sha256_file(HERE / PROMPT_KNOWN) else {}),
            "rules": RULES + "; decoys keep their frozen grade of packets 01-20 in the qrels (new grades: a check)",
            "n_pairs": len(combined["pairs"]), "n_disagreements": combined["n_disagreements"],
            "gold_rejected": combined["gold_rejected"], "pairs": combined["pairs"]}


def write_outputs(out: Path, first: dict, known: dict, members: dict[str, list[str]]) -> list[Path]:
    """The qrels of every set (first round plus known answers) and ``judgments_known.json`` under ``out``."""
    pairs = {**first["pairs"], **{pid: p for pid, p in known["pairs"].items() if p["role"] == "known"}}
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    written = [graded_qrels(pairs, qids).write_trec(out / "qrels" / f"{name}.txt") for name, qids in members.items()]
    written.append(atomic_write_json(out / KNOWN_DOC, known))
    return written


def frozen_known() -> dict | None:
    """``judgments_known.json`` as written (``None`` before packet 21 is combined)."""
    path = HERE / KNOWN_DOC
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def frozen_state(first: dict, known: dict, members: dict[str, list[str]]) -> str:
    """``"new"`` before packet 21 is frozen; once frozen, the qrels rebuilt in a scratch folder must
    equal the frozen ones and so must the pairs: ``"same"`` when ``judgments_known.json`` is all as
    ``known``, ``"described"`` when only its description differs (the assessors, the prompt)."""
    frozen = verify_frozen(LOCK)
    if KNOWN_DOC not in frozen:
        return "new"
    with tempfile.TemporaryDirectory() as tmp:
        for path in write_outputs(Path(tmp), first, known, members)[:-1]:
            rel = path.relative_to(tmp).as_posix()
            if sha256_file(path) != frozen.get(rel):
                raise GabaritoError("rebuilt qrels differ from the frozen ones", path=HERE / rel)
    doc = json.loads((HERE / KNOWN_DOC).read_text(encoding="utf-8"))
    if doc["pairs"] != known["pairs"]:
        raise GabaritoError("the grades of packet 21 no longer give its pairs", path=HERE / KNOWN_DOC)
    return "same" if doc == json.loads(json.dumps(known)) else "described"


def main(argv: list[str] | None = None) -> int:
    expected, members = gold()
    first = first_round(expected)
    known = known_round(expected, first["pairs"])
    n_known = sum(p["role"] == "known" for p in known["pairs"].values())
    rejected = sum(known["pairs"][pid]["role"] == "known" for pid in known["gold_rejected"])
    found = frozen_state(first, known, members)
    if found == "same":
        state = "already frozen; reproduced identically"
    else:
        earlier = json.loads(LOCK.read_text(encoding="utf-8"))
        written = write_outputs(HERE, first, known, members)
        record = freeze(LOCK, [*written[:-1], HERE / "judgments.json", written[-1]],
                        note=NOTE if found == "new" else NOTE + "; " + REDESCRIBED)
        record["history"] = earlier.get("history", []) + [{k: earlier.get(k) for k in ("frozen_at", "note", "files")}]
        atomic_write_json(LOCK, record)
        if found == "new":
            record_grades(sorted((HERE / "grades" / "C").glob("packet_*.json")))  # the adjudicator's, taken in here
        state = f"frozen in {LOCK.name}" + (f"; {REDESCRIBED}" if found == "described" else "")
    print(f"freeze_qrels: {first['n_pairs']} pairs of packets 01-20 ({first['n_disagreements']} adjudicated) and "
          f"{n_known} known answers of packet 21 ({known['n_disagreements']} of {known['n_pairs']} pairs adjudicated); "
          f"{len(first['gold_rejected'])} + {rejected} expected concept(s) rejected by every assessor; {state}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main)
