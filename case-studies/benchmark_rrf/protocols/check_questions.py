"""Check a writer's draft against its protocol's rules, before anything is frozen.

A draft is a JSON list of ``{"id", "question"}`` for the ids of the protocol's packet.
Prints every question with the rules it breaks (name words or their stems; under the
disjoint protocol also the stems it shares with the concept's indexed text when more
than one) and exits 1 while any question breaks a rule or any id is missing (2 on
unreadable input). The rules are the library's:
:func:`gabarito.measure.leakage.question_problems`.

    .venv/bin/python case-studies/benchmark_rrf/protocols/check_questions.py --protocol name_only DRAFT.json
    .venv/bin/python case-studies/benchmark_rrf/protocols/check_questions.py --protocol disjoint DRAFT.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gabarito.errors import run_main
from studies.benchmark_rrf.protocols.protocol_common import (HERE, PROTOCOLS, check_draft, load_draft,
                                                             protocol, read_json)


def report(rows: list[dict]) -> tuple[list[str], int]:
    """Printable lines and the number of rows with a problem."""
    lines, bad = [], 0
    for r in rows:
        status = "FAIL" if r["problems"] else "ok"
        bad += bool(r["problems"])
        lines.append(f"{r['id']:<5} {status:<4}  {r['question']}")
        lines += [f"{'':11} - {p}" for p in r["problems"]]
    verdict = (f"all {len(rows)} questions pass" if not bad
               else f"{bad} of {len(rows)} questions break a rule: rewrite them and check again")
    return lines + [verdict], bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS))
    ap.add_argument("draft", type=Path, help="JSON list of {id, question}")
    ap.add_argument("--packet", type=Path, help="the protocol's packet (default: the one in this folder)")
    ap.add_argument("--partial", action="store_true", help="do not report ids missing from the draft")
    args = ap.parse_args(argv)
    packet = read_json(args.packet or HERE / protocol(args.protocol)["packet"], "packet")
    rows = check_draft(args.protocol, packet, load_draft(args.draft), partial=args.partial)
    lines, bad = report(rows)
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
