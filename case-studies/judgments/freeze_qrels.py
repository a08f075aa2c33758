"""Step 4 of the judgments: one grade per pair, graded qrels per gold set, frozen before any metric.

    python case-studies/judgments/freeze_qrels.py

Combines assessors A and B and the adjudicator C (:func:`gabarito.measure.judgments.combine`: the
expected concept keeps grade 2 unless every assessor gave it 0) and writes, before anything is
scored on them: ``qrels/<set>.txt`` (TREC qrels: question, 0, concept, grade), ``judgments.json``
(every pair with each assessor's grade, the final grade and the rule that decided it, and the
assessors' identities) and ``judgments.lock.json`` (sha256 of each; the study's gold manifest).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from adjudicate import HERE, assessor_grades
from build_pools import FLAGSHIP, SETS

from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.gold import freeze
from gabarito.inputs.pools import read_grades
from gabarito.measure.judgments import combine, graded_qrels
from gabarito.study.records import now_iso

ASSESSORS = {
    "A": "Claude (Anthropic), one sub-agent per group of packets (four, or two for packets 17-20), given only "
         "the guide and its packets (prompt: assessor_prompt.md)",
    "B": "Claude (Anthropic), separate sub-agents from A's (groups of four or two packets), same prompt and "
         "guide, same packets",
    "C": "Claude (Anthropic), third sub-agents (one per adjudication packet) that graded only the A/B "
         "disagreements, blind to both grades",
}


def adjudications() -> dict[str, int]:
    out: dict[str, int] = {}
    for packet in sorted((HERE / "adjudication").glob("packet_*.json")):
        expected = [p["pair"] for p in json.loads(packet.read_text(encoding="utf-8"))["pairs"]]
        out.update(read_grades(HERE / "grades" / "C" / packet.name, expected))
    return out


def main() -> int:
    key = json.loads((HERE / "packets" / "key.json").read_text(encoding="utf-8"))
    expected, members = {}, {}
    for name, f in SETS.items():
        pairs = json.loads((FLAGSHIP / f).read_text(encoding="utf-8"))["pairs"]
        expected.update({p["id"]: p["gold"] for p in pairs})
        members[name] = [p["id"] for p in pairs]
    combined = combine(assessor_grades("A"), assessor_grades("B"), adjudications(), key, expected)
    (HERE / "qrels").mkdir(exist_ok=True)
    written = []
    for name, qids in members.items():
        written.append(graded_qrels(combined["pairs"], qids).write_trec(HERE / "qrels" / f"{name}.txt"))
    prompt = (HERE / "assessor_prompt.md")
    doc = {"date": now_iso(), "assessors": ASSESSORS, "guide": "guia_de_avaliacao.md",
           "guide_sha256": sha256_file(HERE / "guia_de_avaliacao.md"),
           "prompt_sha256": sha256_file(prompt) if prompt.exists() else None,
           "rules": "agreed grade; else the adjudicator's; the expected concept keeps 2 unless every assessor gave 0",
           "n_pairs": len(combined["pairs"]), "n_disagreements": combined["n_disagreements"],
           "gold_rejected": combined["gold_rejected"], "pairs": combined["pairs"]}
    written.append(atomic_write_json(HERE / "judgments.json", doc))
    freeze(HERE / "judgments.lock.json", written)
    print(f"freeze_qrels: {len(combined['pairs'])} pairs, {combined['n_disagreements']} adjudicated, "
          f"{len(combined['gold_rejected'])} expected concept(s) rejected by every assessor", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
