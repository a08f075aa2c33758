"""Freeze the protocol questions: a writer's checked draft becomes a gold file, hashed in the manifest.

For each protocol given, checks that the packet in the folder is exactly what
``sample.json`` and the instruction files produce, checks the draft with the same rules
as ``check_questions.py`` (and refuses, printing the report, when any question breaks
one or any id is missing), writes ``questions_<protocol>.json`` beside the packet (the
shape of the other gold files, with author, the protocol's instructions verbatim,
language, relevance and sample), and adds it to ``../gold_protocols.lock.json``, where
``questions_published.json`` must already be frozen. A file already frozen is never
written again.

    .venv/bin/python case-studies/benchmark_rrf/protocols/freeze_protocols.py \\
        --name-only DRAFT_N.json --name-only-author "..." --disjoint DRAFT_D.json --disjoint-author "..."
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.gold import check_not_frozen, freeze_more, load_gold, verify_frozen
from studies.benchmark_rrf.protocols.check_questions import report
from studies.benchmark_rrf.protocols.protocol_common import (HERE, PROTOCOLS, STUDY, THEME, check_draft,
                                                             load_draft, packets, read_json)

MANIFEST = "gold_protocols.lock.json"
PUBLISHED = "questions_published.json"
METHOD = {
    "name_only": ("One question per sampled concept, written by a writer who saw only the concept's "
                  "name and a paragraph on the corpus's theme, never its description or any search "
                  "result; no word of the name nor a word sharing its stem (checked by code)."),
    "disjoint": ("One question per sampled concept, written from the concept's description by a "
                 "writer who never saw a search result; no word of the name nor a word sharing its "
                 "stem, and at most one stemmed content word shared with the concept's indexed text "
                 "(all search fields), both checked by code before freezing."),
}


def gold_record(name: str, sample: dict, folder: Path, draft: list[dict], author: str) -> dict:
    spec = PROTOCOLS[name]
    by_id = {d["id"]: d["question"].strip() for d in draft}
    items = read_json(folder / spec["packet"], "packet")["concepts"]
    record = {
        "corpus": sample["corpus"],
        "corpus_sha256": sample["corpus_sha256"],
        "author": author,
        "protocol": name,
        "method": METHOD[name],
        "instructions": (folder / spec["instructions"]).read_text(encoding="utf-8"),
    }
    if spec["max_shared"] is None:
        record["theme"] = (folder / THEME).read_text(encoding="utf-8").strip()
    else:
        record["max_shared_stems"] = spec["max_shared"]
    return record | {
        "language": "en",
        "relevance": "one relevant concept per question (the sampled one)",
        "sample": "sample.json",
        "packet": spec["packet"],
        "packet_sha256": sha256_file(folder / spec["packet"]),
        "checked_by": "check_questions.py",
        "pairs": [{"id": it["id"], "question": by_id[it["id"]], "gold": c["name"]}
                  for it, c in zip(items, sample["concepts"])],
    }


def check_protocol(name: str, sample: dict, folder: Path, draft_path: Path) -> list[dict] | None:
    """The draft when it passes; ``None`` after printing the report when it does not."""
    packet_file = folder / PROTOCOLS[name]["packet"]
    if read_json(packet_file, "packet") != packets(sample, folder)[packet_file.name]:
        raise GabaritoError("packet differs from what sample.json and the instructions give", path=packet_file)
    draft = load_draft(draft_path)
    lines, bad = report(check_draft(name, read_json(packet_file, "packet"), draft))
    if bad:
        print("\n".join(lines))
        print(f"refusing to freeze {name}: {draft_path} breaks the protocol")
        return None
    return draft


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in PROTOCOLS:
        flag = name.replace("_", "-")
        ap.add_argument(f"--{flag}", type=Path, metavar="DRAFT", help=f"the {name} writer's draft")
        ap.add_argument(f"--{flag}-author", metavar="TEXT", help=f"who wrote the {name} questions")
    ap.add_argument("--folder", type=Path, default=HERE, help="the protocols folder")
    ap.add_argument("--manifest", type=Path, default=STUDY / MANIFEST)
    args = ap.parse_args(argv)
    given = {n: (getattr(args, n), getattr(args, f"{n}_author")) for n in PROTOCOLS if getattr(args, n)}
    if not given:
        raise GabaritoError("give at least one draft (--name-only and/or --disjoint)")
    if PUBLISHED not in verify_frozen(args.manifest):
        raise GabaritoError(f"{PUBLISHED} is not frozen in it: freeze the published gold first", path=args.manifest)
    outs = {n: args.folder / PROTOCOLS[n]["out"] for n in given}
    check_not_frozen(args.manifest, list(outs.values()))
    sample = read_json(args.folder / "sample.json", "sample")
    drafts = {}
    for name, (path, author) in given.items():
        if not author or not author.strip():
            raise GabaritoError(f"--{name.replace('_', '-')}-author is required: name the writer")
        drafts[name] = check_protocol(name, sample, args.folder, path)
    if any(d is None for d in drafts.values()):
        return 1
    names = [c["name"] for c in sample["concepts"]]
    for name, draft in drafts.items():
        atomic_write_json(outs[name], gold_record(name, sample, args.folder, draft, given[name][1].strip()))
        load_gold(outs[name], names)
    files = ", ".join(p.name for p in outs.values())
    freeze_more(args.manifest, list(outs.values()),
                note=f"{files}: frozen after check_questions.py passed and before any search ran on them.")
    print(f"frozen in {args.manifest.name}: {files}")
    return 0


if __name__ == "__main__":
    run_main(main)
