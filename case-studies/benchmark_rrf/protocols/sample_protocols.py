"""Step 1 of the protocol study: draw the concepts and write what each writer receives.

Draws 80 concepts (seed 20261203) from the sorted names, excluding every concept already
in ``../sample.json``, ``../sample_extended.json`` and the published gold, and writes

* ``sample.json``: seed, method, excluded count, corpus sha256 and, per concept, its name,
  search_name, description and every indexed field;
* ``packet_name_only.json``: instructions, theme, and ``{id, name}`` per concept (the name
  as its search_name), nothing else;
* ``packet_disjoint.json``: instructions and ``{id, name, description, indexed_text}``.

Ids are n01..n80 and d01..d80, the same concepts in the same (sorted) order. Re-running
gives byte-identical files; each is recorded in the folder's ``results.sha256.json``.

    python case-studies/benchmark_rrf/protocols/sample_protocols.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gabarito.errors import run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.corpus import load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import draw_sample
from gabarito.study.integrity import record
from gabarito.study.records import now_iso
from studies.benchmark_rrf.protocols.protocol_common import HERE, STUDY, packets, read_json

SEED, N = 20261203, 80
EXCLUDED_SAMPLES = ("sample.json", "sample_extended.json")
PUBLISHED = "questions_published.json"


def excluded_names(study: Path) -> set[str]:
    names = {c["name"] for f in EXCLUDED_SAMPLES for c in read_json(study / f, "sample")["concepts"]}
    return names | {p["gold"] for p in read_json(study / PUBLISHED, "published gold")["pairs"]}


def sample_record(concepts, names, excluded: int, corpus_sha: str) -> dict:
    by_name = {c.name: c for c in concepts}
    return {
        "corpus": "social_acceptance",
        "corpus_sha256": corpus_sha,
        "seed": SEED,
        "n": len(names),
        "excluded_before_drawing": excluded,
        "excluded_from": [*EXCLUDED_SAMPLES, PUBLISHED],
        "method": "names sorted, excluded names removed, random.Random(seed).sample(pool, n), result sorted",
        "concepts": [{"name": nm, "search_name": by_name[nm].search_name,
                      "description": by_name[nm].description, "fields": by_name[nm].search_fields()}
                     for nm in names],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    path = dataset_file("social_acceptance", "social_acceptance.syno", mirror=args.mirror)
    concepts = load_synesis(path)
    excluded = excluded_names(STUDY)
    names = draw_sample([c.name for c in concepts], SEED, N, exclude=excluded)
    sample = sample_record(concepts, names, len(excluded), sha256_file(path))
    written = [atomic_write_json(args.out / "sample.json", sample)]
    for filename, packet in packets(sample, HERE).items():
        written.append(atomic_write_json(args.out / filename, packet))
    for path in written:  # what each writer received, as drawn: an edit is refused by site and report
        record(path, when=now_iso())
    print(f"sample.json: {len(names)} concepts ({len(excluded)} excluded); packets written")
    return 0


if __name__ == "__main__":
    run_main(main)
