"""Step 1b of the judgments: the expected concepts that no pool held, hidden among decoys, frozen.

    python case-studies/judgments/pool_known_answers.py [--assess DIR]

TREC adds the known answers to the pool. ``build_pools.py`` pooled only what the methods found,
so the expected concept of some questions (those no method put in its top ``DEPTH``) was never
graded. This script finds every (question, expected concept) of every gold set that has no pair
in ``packets/key.json`` (:func:`gabarito.inputs.pools.unpooled_answers`) and pools each with
``DECOYS`` candidates of the same question that were already graded
(:func:`gabarito.inputs.pools.hide_known_answers`), so the packet does not say which candidate
is the known answer and the decoys' frozen grades check the new assessors against the old ones.

Written, and frozen in ``pools_known.lock.json`` before anyone grades (the frozen files of
``pools.lock.json`` and ``judgments.lock.json`` are read, verified and never changed):
``pools/pool_known.json`` (blind pool), ``packets/packet_21.json`` (what an assessor receives;
pair ids continue key.json's counter) and ``packets/key_known.json`` (pair -> question, concept,
role ``known`` or ``decoy``, and for a decoy its pair id in key.json). Run again once frozen, the
script rebuilds the files in a scratch folder and checks they are byte-identical to the frozen ones.

``--assess DIR`` then makes the isolated assessors' folders ``DIR/A`` and ``DIR/B`` (the packet,
the guide and ``check_grades.py``, a copy of ``standalone_check_grades.py`` that imports nothing
of gabarito) and an empty ``DIR/C``; nothing else of the repository is put there.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.corpus import load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import freeze, verify_frozen
from gabarito.inputs.pools import assessment_pairs, hide_known_answers, unpooled_answers, write_pool
from studies.judgments.build_pools import FLAGSHIP, GUIDE, SEED, SETS

HERE = Path(__file__).resolve().parent
DECOYS, PACKET = 3, 21
LOCK = HERE / "pools_known.lock.json"
OUTPUTS = ("pools/pool_known.json", f"packets/packet_{PACKET:02d}.json", "packets/key_known.json")
CHECKER = HERE / "standalone_check_grades.py"
NOTE = (f"known answers (expected concepts absent from pools/pool.json), each pooled with {DECOYS} decoys "
        "already graded in packets 01-20 (the first drawn from the question's highest final grade); "
        f"seed {SEED}; frozen before any assessment")


def load_inputs() -> dict:
    """The frozen pools, key and judgments (verified first) and every gold set's expected concepts."""
    verify_frozen(HERE / "pools.lock.json")
    verify_frozen(HERE / "judgments.lock.json")
    key = json.loads((HERE / "packets" / "key.json").read_text(encoding="utf-8"))
    pool = {q["id"]: q["candidates"] for q in
            json.loads((HERE / "pools" / "pool.json").read_text(encoding="utf-8"))["questions"]}
    judged: dict[str, list[str]] = {}
    for k in key.values():
        judged.setdefault(k["question"], []).append(k["concept"])
    grades: dict[str, dict[str, int]] = {}
    for p in json.loads((HERE / "judgments.json").read_text(encoding="utf-8"))["pairs"].values():
        grades.setdefault(p["question"], {})[p["doc"]] = p["grade"]
    expected, texts, set_of = {}, {}, {}
    for name, f in SETS.items():
        for p in json.loads((FLAGSHIP / f).read_text(encoding="utf-8"))["pairs"]:
            expected[p["id"]], texts[p["id"]], set_of[p["id"]] = p["gold"], p["question"], name
    pair_of = {(k["question"], k["concept"]): pid for pid, k in key.items()}
    return {"key": key, "pool": pool, "judged": judged, "grades": grades, "expected": expected,
            "texts": texts, "set_of": set_of, "pair_of": pair_of}


def build(out: Path, data: dict, corpus_path: Path) -> dict[str, int]:
    """Write the three files under ``out``; return the number of known answers per gold set."""
    answers = unpooled_answers(data["expected"], data["judged"])
    if answers != unpooled_answers(data["expected"], data["pool"]):
        raise GabaritoError("packets/key.json and pools/pool.json disagree on what was pooled")
    hidden, decoys = hide_known_answers(answers, data["pool"], data["grades"], decoys=DECOYS, seed=SEED)
    last = max(int(pid[1:]) for pid in data["key"])
    pairs = assessment_pairs(hidden, prefix="P", start=last)
    concepts = {c.name: c for c in load_synesis(corpus_path)}
    unknown = [d for _, _, d in pairs if d not in concepts]
    if unknown:
        raise GabaritoError(f"concept {unknown[0]!r} is not in the corpus", path=corpus_path)
    meta = {"seed": SEED, "n_questions": len(hidden), "n_pairs": len(pairs), "first_pair": pairs[0][0],
            "corpus_sha256": sha256_file(corpus_path),
            "built_from": {rel: sha256_file(HERE / rel) for rel in
                           ("pools/pool.json", "packets/key.json", "judgments.json")}}
    (out / "pools").mkdir(parents=True, exist_ok=True)
    (out / "packets").mkdir(parents=True, exist_ok=True)
    write_pool(out / OUTPUTS[0], hidden, data["texts"], meta=meta)
    items = [{"pair": pid, "question": data["texts"][q], "concept": d, "description": concepts[d].description}
             for pid, q, d in pairs]
    atomic_write_json(out / OUTPUTS[1], {"packet": PACKET, "guide": GUIDE, "n_pairs": len(items), "pairs": items})
    key = {pid: {"question": q, "concept": d, "role": "decoy" if d in decoys[q] else "known",
                 "set": data["set_of"][q], "judged_as": data["pair_of"].get((q, d))} for pid, q, d in pairs}
    atomic_write_json(out / OUTPUTS[2], key)
    counts = {name: 0 for name in SETS}
    for q in answers:
        counts[data["set_of"][q]] += 1
    return counts


def check_reproduced(data: dict, corpus_path: Path) -> dict[str, int]:
    """Once frozen: rebuild in a scratch folder; every file must equal its frozen sha256."""
    frozen = verify_frozen(LOCK)
    with tempfile.TemporaryDirectory() as tmp:
        counts = build(Path(tmp), data, corpus_path)
        for rel in OUTPUTS:
            if sha256_file(Path(tmp) / rel) != frozen.get(rel):
                raise GabaritoError("rebuilt file differs from the frozen one", path=HERE / rel)
    return counts


def fill_folders(root: Path, packet: Path, roles: tuple[str, ...] = ("A", "B"),
                 empty: tuple[str, ...] = ()) -> list[Path]:
    """``root/<role>`` for each of ``roles`` holding only ``packet``, the guide and the standalone
    checker (``check_grades.py``), and an empty ``root/<role>`` for each of ``empty``; a folder
    holding anything else is refused (an assessor's folder is made once, before grading)."""
    files = {packet: packet.name, HERE / GUIDE: GUIDE, CHECKER: "check_grades.py"}
    made = []
    for aid in (*roles, *empty):
        folder = root / aid
        folder.mkdir(parents=True, exist_ok=True)
        mine = files if aid in roles else {}
        extra = sorted(p.name for p in folder.iterdir() if p.name not in set(mine.values()))
        if extra:
            raise GabaritoError(f"holds {extra[0]!r}: an assessor's folder is made only once, before grading",
                                path=folder)
        for src, name in mine.items():
            shutil.copyfile(src, folder / name)
        made.append(folder)
    return made


def make_assessor_folders(root: Path) -> list[Path]:
    """``root/A``, ``root/B`` (packet, guide, standalone checker only) and an empty ``root/C``."""
    verify_frozen(LOCK)
    return fill_folders(root, HERE / OUTPUTS[1], ("A", "B"), ("C",))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assess", type=Path, help="make the isolated assessor folders A, B, C under this folder")
    args = parser.parse_args(argv)
    data = load_inputs()
    corpus_path = dataset_file("social_acceptance", "social_acceptance.syno")
    if LOCK.exists():
        counts = check_reproduced(data, corpus_path)
        state = "already frozen; rebuilt identically"
    else:
        counts = build(HERE, data, corpus_path)
        freeze(LOCK, [HERE / rel for rel in OUTPUTS], note=NOTE)
        state = f"frozen in {LOCK.name}"
    n = json.loads((HERE / OUTPUTS[1]).read_text(encoding="utf-8"))["n_pairs"]
    per_set = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"pool_known_answers: {sum(counts.values())} known answers ({per_set}), {n} pairs in {OUTPUTS[1]}; {state}",
          file=sys.stderr)
    if args.assess:
        for folder in make_assessor_folders(args.assess):
            print(f"pool_known_answers: {folder}: {', '.join(sorted(p.name for p in folder.iterdir())) or 'empty'}",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main)
