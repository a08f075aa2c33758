"""Step 1: draw the concepts that the gold questions will be written for.

Writes ``sample.json`` (the 40 of the specification, seed 20260817) and
``sample_extended.json`` (160 more, another seed, the first 40 excluded), each
with the concepts' descriptions so that question writers need nothing else.
Re-running gives byte-identical files: names are sorted before drawing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gabarito.inputs.corpus import load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import draw_sample
from gabarito.hashing import atomic_write_json, sha256_file

HERE = Path(__file__).resolve().parent
MAIN_SEED, MAIN_N = 20260817, 40
EXTENDED_SEED, EXTENDED_N = 20261202, 160


def sample_record(concepts, names, seed, n, corpus_sha, excluded=0):
    by_name = {c.name: c for c in concepts}
    return {
        "corpus": "social_acceptance",
        "corpus_sha256": corpus_sha,
        "seed": seed,
        "n": n,
        "excluded_before_drawing": excluded,
        "method": "names sorted, random.Random(seed).sample(names, n), result sorted",
        "concepts": [{"name": nm, "description": by_name[nm].description} for nm in names],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mirror", help="local dataset mirror directory")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    path = dataset_file("social_acceptance", "social_acceptance.syno", mirror=args.mirror)
    concepts = load_synesis(path)
    corpus_sha = sha256_file(path)
    names = [c.name for c in concepts]
    main_names = draw_sample(names, MAIN_SEED, MAIN_N)
    ext_names = draw_sample(names, EXTENDED_SEED, EXTENDED_N, exclude=main_names)
    atomic_write_json(args.out / "sample.json",
                      sample_record(concepts, main_names, MAIN_SEED, MAIN_N, corpus_sha))
    atomic_write_json(args.out / "sample_extended.json",
                      sample_record(concepts, ext_names, EXTENDED_SEED, EXTENDED_N, corpus_sha,
                                    excluded=len(main_names)))
    print(f"sample.json: {len(main_names)} concepts; sample_extended.json: {len(ext_names)} concepts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
