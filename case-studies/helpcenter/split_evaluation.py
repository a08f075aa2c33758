"""Split the help-center gold into a tuning part and a held-out part, then freeze all three files.

Stratified by query type, fixed seed; run once, before any search on the corpus. Writes
``data/helpcenter/evaluation.tuning.json``, ``evaluation.heldout.json`` and ``gold.lock.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.inputs.gold import freeze, stratified_split
from gabarito.hashing import atomic_write_text

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "helpcenter"
SEED, HELD_OUT = 20261202, 0.3


def main() -> int:
    docs = load_documents(DATA / "docs")
    load_evaluation(DATA / "evaluation.json", docs)  # every check passes before anything is written
    items = json.loads((DATA / "evaluation.json").read_text(encoding="utf-8"))
    tuning, held = stratified_split(items, lambda q: q.get("type", ""), HELD_OUT, SEED)
    for name, part in (("evaluation.tuning.json", tuning), ("evaluation.heldout.json", held)):
        atomic_write_text(DATA / name, json.dumps(part, ensure_ascii=False, indent=2) + "\n")
    freeze(DATA / "gold.lock.json",
           [DATA / "evaluation.json", DATA / "evaluation.tuning.json", DATA / "evaluation.heldout.json"],
           note=f"Frozen before any search on the help-center corpus; split seed {SEED}, "
                f"held-out fraction {HELD_OUT}, stratified by query type.")
    print(f"tuning: {len(tuning)} queries, held-out: {len(held)} queries; frozen in gold.lock.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
