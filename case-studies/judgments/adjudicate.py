"""Step 3 of the judgments: the pairs the two assessors graded differently, for a third assessor.

    python case-studies/judgments/adjudicate.py

Reads ``grades/A`` and ``grades/B`` (every packet, checked by
:func:`gabarito.inputs.pools.read_grades`) and writes ``adjudication/packet_NN.json`` with only the
pairs where A and B differ, in the same form as the assessors' packets: the third assessor sees
the question and the concept, never the two grades. ``adjudication.lock.json`` freezes the packets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.pools import read_grades, split_packets
from gabarito.study.records import now_iso

HERE = Path(__file__).resolve().parent
MAX_PAIRS = 450


def packets() -> list[Path]:
    return sorted((HERE / "packets").glob("packet_*.json"))


def assessor_grades(assessor: str) -> dict[str, int]:
    """Every grade of one assessor, each packet checked against its pair list."""
    out: dict[str, int] = {}
    for packet in packets():
        expected = [p["pair"] for p in json.loads(packet.read_text(encoding="utf-8"))["pairs"]]
        out.update(read_grades(HERE / "grades" / assessor / packet.name, expected))
    return out


def main() -> int:
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
    print(f"adjudicate: {len(differ)} of {len(by_pair)} pairs differ; {len(written)} packet(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
