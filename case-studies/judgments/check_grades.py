"""Check one assessor's grades file against its packet (what an assessor may run on its own work).

    python case-studies/judgments/check_grades.py packets/packet_01.json grades/A/packet_01.json

Prints ``ok: N pairs graded`` or one line naming the file and the record that is wrong; reads
nothing but the two files given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.inputs.pools import read_grades


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_grades.py PACKET GRADES", file=sys.stderr)
        return 2
    packet = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    try:
        grades = read_grades(argv[1], [p["pair"] for p in packet["pairs"]])
    except GabaritoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"ok: {len(grades)} pairs graded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
