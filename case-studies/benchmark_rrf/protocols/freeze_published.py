"""Freeze the published 40 questions as an external gold set (``../questions_published.json``).

Reads the published gold (``../shared/spec/000_published_gold.json``: the page
``000_82bcc069f111b0d2.txt``, "Como o benchmark foi feito", section 4), checks that
every expected concept is in the corpus and that each question keeps the name rule,
writes the gold file with its provenance and the published figures kept verbatim as
data (per-question ranks, metrics, latency, top-1 overlap), and freezes it in
``../gold_protocols.lock.json``. Refuses when that manifest already holds the file.

    python case-studies/benchmark_rrf/protocols/freeze_published.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.corpus import load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import check_not_frozen, draw_sample, freeze_more, load_gold
from gabarito.paths import ROOT

HERE = Path(__file__).resolve().parent
STUDY = HERE.parent
SPEC = ROOT.parent / "shared" / "spec" / "000_published_gold.json"
PAGE = {"file": "000_82bcc069f111b0d2.txt", "title": "Como o benchmark foi feito", "section": 4}


def published_record(spec: dict, spec_sha: str, corpus_sha: str) -> dict:
    run = spec["published_run"]
    pairs = [{"id": f"p{q['n']:02d}", "n": q["n"], "question": q["question"], "gold": q["gold"],
              "published_rank": q["published_rank"]} for q in spec["questions"]]
    return {
        "corpus": "social_acceptance",
        "corpus_sha256": corpus_sha,
        "author": f"as named by the published page: {run['question_writer']}",
        "method": ("External gold: the 40 questions of the published page, copied verbatim with their "
                   "expected concepts; not written by this project. Ids p01..p40 follow the page's "
                   "numbering."),
        "language": "en",
        "relevance": "one relevant concept per question (the sampled one)",
        "sample": "sample.json",
        "source": {**PAGE, "data": "000_published_gold.json", "data_sha256": spec_sha,
                   "what": spec["what"], "published_run": run},
        "published": {"metrics": spec["published_metrics"],
                      "latency_ms": spec["published_latency_ms"],
                      "top1_overlap": spec["published_top1_overlap"]},
        "pairs": pairs,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", type=Path, default=SPEC, help="the published gold JSON")
    ap.add_argument("--mirror", help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--study", type=Path, default=STUDY, help="folder of the gold files and manifest")
    args = ap.parse_args(argv)
    out = args.study / "questions_published.json"
    manifest = args.study / "gold_protocols.lock.json"
    check_not_frozen(manifest, [out])
    try:
        spec = json.loads(args.spec.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"cannot read the published gold ({exc})", path=args.spec) from None
    path = dataset_file("social_acceptance", "social_acceptance.syno", mirror=args.mirror)
    concepts = load_synesis(path)
    names = [c.name for c in concepts]
    record = published_record(spec, sha256_file(args.spec), sha256_file(path))
    seed, n = record["source"]["published_run"]["sample_seed"], len(record["pairs"])
    if sorted(p["gold"] for p in record["pairs"]) != draw_sample(names, seed, n):
        raise GabaritoError(f"the published concepts are not the seed-{seed} draw", path=args.spec)
    atomic_write_json(out, record)
    load_gold(out, names)  # every gold concept in the corpus, the name rule kept
    freeze_more(manifest, [out], note="questions_published.json: the published page's 40 questions, "
                "frozen before any search of this project ran on them (see git history).")
    print(f"{out.name}: {n} questions frozen in {manifest.name}")
    return 0


if __name__ == "__main__":
    run_main(main)
