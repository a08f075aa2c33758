"""Step 3 of the judgments: the pairs the two assessors graded differently, for a third assessor.

    python case-studies/judgments/adjudicate.py                       # packets 01-20 (frozen)
    python case-studies/judgments/adjudicate.py --known [--assess DIR]  # packet 21 (known answers)

Reads ``grades/A`` and ``grades/B`` (every packet, checked by
:func:`gabarito.inputs.pools.read_grades`) and writes ``adjudication/packet_NN.json`` with only the
pairs where A and B differ, in the same form as the assessors' packets: the third assessor sees
the question and the concept, never the two grades. ``adjudication.lock.json`` freezes the packets.

``--known``: the same for packet 21 (``pool_known_answers.py``: the known answers hidden among
decoys, graded by two new assessors in isolated folders), read from ``grades/A|B/packet_21.json``;
writes ``adjudication/packet_21.json`` (every disagreement, known answers and decoys alike, so the
packet does not say which is which) and freezes it with the two grades files in
``adjudication_known.lock.json``. Run again, it checks the frozen packet is what the grades give.
``--assess DIR`` then fills the adjudicator's isolated folder ``DIR/C`` with only
``packet_adj_21.json``, the guide and the standalone checker, and creates ``DIR/C/READY`` (or
``DIR/C/NONE`` when A and B agreed on every pair).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.gold import verify_frozen
from gabarito.inputs.pools import read_grades, split_packets
from gabarito.study.integrity import record
from gabarito.study.records import now_iso
from studies.judgments.build_pools import GUIDE
from studies.judgments.pool_known_answers import CHECKER, PACKET
from studies.judgments.pool_known_answers import LOCK as POOLS_KNOWN_LOCK

HERE = Path(__file__).resolve().parent
MAX_PAIRS = 450
KNOWN = f"packet_{PACKET:02d}.json"
KNOWN_LOCK = HERE / "adjudication_known.lock.json"


def packets() -> list[Path]:
    """The packets of the first round (01-20), those ``pools.lock.json`` froze; packet 21 is
    adjudicated apart (``--known``), and the blind regrade's packet 22 has no adjudicator."""
    frozen = json.loads((HERE / "pools.lock.json").read_text(encoding="utf-8"))["files"]
    return sorted(HERE / rel for rel in frozen if rel.startswith("packets/packet_"))


def packet_pairs(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["pairs"]


def known_grades(assessor: str) -> dict[str, int]:
    """One assessor's grades of packet 21, checked against its pair list."""
    expected = [p["pair"] for p in packet_pairs(HERE / "packets" / KNOWN)]
    return read_grades(HERE / "grades" / assessor / KNOWN, expected)


def assessor_grades(assessor: str) -> dict[str, int]:
    """Every grade of one assessor, each packet checked against its pair list."""
    out: dict[str, int] = {}
    for packet in packets():
        expected = [p["pair"] for p in json.loads(packet.read_text(encoding="utf-8"))["pairs"]]
        out.update(read_grades(HERE / "grades" / assessor / packet.name, expected))
    return out


def first_round() -> int:
    a, b = assessor_grades("A"), assessor_grades("B")
    by_pair = {}
    for packet in packets():
        for p in json.loads(packet.read_text(encoding="utf-8"))["pairs"]:
            by_pair[p["pair"]] = p
    differ = [pid for pid in by_pair if a[pid] != b[pid]]
    triples = [(pid, by_pair[pid]["question"], by_pair[pid]["concept"]) for pid in differ]
    out = HERE / "adjudication"
    out.mkdir(exist_ok=True)
    written = []
    for i, group in enumerate(split_packets(triples, MAX_PAIRS), start=1):
        items = [by_pair[pid] for pid, _, _ in group]
        written.append(atomic_write_json(out / f"packet_{i:02d}.json",
                                         {"packet": i, "guide": "guia_de_avaliacao.md", "n_pairs": len(items),
                                          "pairs": items}))
    atomic_write_json(HERE / "adjudication.lock.json", {
        "frozen_at": now_iso(), "n_pairs": len(by_pair), "n_disagreements": len(differ),
        "files": {str(p.relative_to(HERE)): sha256_file(p) for p in written},
        "grades_sha256": {f"grades/{x}/{p.name}": sha256_file(HERE / "grades" / x / p.name)
                          for x in ("A", "B") for p in packets()}})
    record_grades(HERE / "grades" / x / p.name for x in ("A", "B") for p in packets())
    print(f"adjudicate: {len(differ)} of {len(by_pair)} pairs differ; {len(written)} packet(s)", file=sys.stderr)
    return 0


def known_round() -> dict:
    """Packet 21's disagreements: written and frozen once, verified on every later run."""
    verify_frozen(POOLS_KNOWN_LOCK)
    a, b = known_grades("A"), known_grades("B")
    items = [p for p in packet_pairs(HERE / "packets" / KNOWN) if a[p["pair"]] != b[p["pair"]]]
    doc = {"packet": PACKET, "guide": GUIDE, "n_pairs": len(items), "pairs": items}
    out = HERE / "adjudication" / KNOWN
    grades = {f"grades/{x}/{KNOWN}": HERE / "grades" / x / KNOWN for x in ("A", "B")}
    if KNOWN_LOCK.exists():
        lock = json.loads(KNOWN_LOCK.read_text(encoding="utf-8"))
        for rel, path in grades.items():
            if sha256_file(path) != lock["grades_sha256"][rel]:
                raise GabaritoError("grades changed after the adjudication packet was frozen", path=path)
        if items:
            verify_frozen(KNOWN_LOCK)
        return doc
    files = {}
    if items:
        out.parent.mkdir(exist_ok=True)
        atomic_write_json(out, doc)
        files = {f"adjudication/{KNOWN}": sha256_file(out)}
    atomic_write_json(KNOWN_LOCK, {"frozen_at": now_iso(), "n_pairs": len(a), "n_disagreements": len(items),
                                   "files": files,
                                   "grades_sha256": {rel: sha256_file(p) for rel, p in grades.items()}})
    record_grades(grades.values())
    return doc


def record_grades(paths) -> None:
    """Record the grades files a freeze took in, each in its folder's ``results.sha256.json``
    (:func:`gabarito.study.integrity.record`): site and report refuse one edited afterwards."""
    when = now_iso()
    for path in paths:
        record(path, when=when)


def fill_adjudicator_folder(folder: Path, doc: dict) -> list[str]:
    """``folder`` (made empty by ``pool_known_answers.py --assess``) gets only the adjudication
    packet, the guide and the checker, then ``READY``; or only ``NONE`` with no disagreement."""
    name = f"packet_adj_{PACKET:02d}.json"
    files = {name: HERE / "adjudication" / KNOWN, GUIDE: HERE / GUIDE, "check_grades.py": CHECKER}
    if not doc["pairs"]:
        files = {}
    signal = "READY" if files else "NONE"
    folder.mkdir(parents=True, exist_ok=True)
    extra = sorted(p.name for p in folder.iterdir() if p.name not in {*files, signal})
    if extra:
        raise GabaritoError(f"holds {extra[0]!r}: the adjudicator's folder is filled only once, before grading",
                            path=folder)
    for dest, src in files.items():
        shutil.copyfile(src, folder / dest)
    (folder / signal).touch()
    return sorted(p.name for p in folder.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--known", action="store_true", help="adjudicate packet 21 (the known answers)")
    parser.add_argument("--assess", type=Path, help="with --known: fill the adjudicator's folder DIR/C")
    args = parser.parse_args(argv)
    if not args.known:
        if args.assess:
            raise GabaritoError("--assess goes with --known")
        return first_round()
    doc = known_round()
    print(f"adjudicate: packet {PACKET}: {doc['n_pairs']} of "
          f"{len(packet_pairs(HERE / 'packets' / KNOWN))} pairs differ; frozen in {KNOWN_LOCK.name}", file=sys.stderr)
    if args.assess:
        held = fill_adjudicator_folder(args.assess / "C", doc)
        print(f"adjudicate: {args.assess / 'C'}: {', '.join(held)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main)
