"""Step 1 of the judgments: pools and assessor packets, written (and frozen) before anyone grades.

    python case-studies/judgments/build_pools.py

For every flagship gold set, the pool of a question is the union of the top ``DEPTH`` concepts
of every method that searched it: the flagship's four (``case-studies/benchmark_rrf/runs``) and
the fusion study's variants (``case-studies/fusion/runs/social_acceptance.*``), deduplicated and
shuffled by a seeded generator (:func:`gabarito.inputs.pools.build_pool`). The questions of all
sets are then shuffled together and cut into packets of at most ``MAX_PAIRS`` pairs; a pair id is
a counter, so a packet shows an assessor only the question, the concept's name and description.

Written: ``pools/pool.json`` (blind pools), ``pools/sources.json`` (which methods found each
candidate: analysis only, never given to an assessor), ``packets/packet_NN.json`` (what an
assessor receives), ``packets/key.json`` (pair id -> question and concept), and
``pools.lock.json``, the sha256 of each, before any grade exists.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.inputs.corpus import load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.pools import assessment_pairs, build_pool, pool_sources, split_packets, write_pool
from gabarito.core.runs import Run
from gabarito.study.records import git_state, now_iso

HERE = Path(__file__).resolve().parent
FLAGSHIP = HERE.parent / "benchmark_rrf"
FUSION_RUNS = HERE.parent / "fusion" / "runs"
SETS = {"main": "questions.json", "extended": "questions_extended.json", "published": "questions_published.json",
        "name_only": "protocols/questions_name_only.json", "disjoint": "protocols/questions_disjoint.json"}
FLAGSHIP_RUNS = {"bm25": "bm25.trec", "vector": "vector.trec", "rrf@10": "rrf_at_10.trec",
                 "rrf@100": "rrf_at_100.trec"}
DEPTH, SEED, MAX_PAIRS = 10, 20261204, 450
GUIDE = "guia_de_avaliacao.md"


def load_runs() -> dict[str, Run]:
    runs = {name: Run.from_trec(FLAGSHIP / "runs" / f, name=name) for name, f in FLAGSHIP_RUNS.items()}
    for path in sorted(FUSION_RUNS.glob("social_acceptance.*.trec")):
        name = "fusion:" + path.name.split(".")[1]
        runs[name] = Run.from_trec(path, name=name)
    return runs


def main() -> int:
    corpus_path = dataset_file("social_acceptance", "social_acceptance.syno")
    concepts = {c.name: c for c in load_synesis(corpus_path)}
    runs = load_runs()
    questions, set_of = {}, {}
    for key, f in SETS.items():
        for p in json.loads((FLAGSHIP / f).read_text(encoding="utf-8"))["pairs"]:
            questions[p["id"]] = p["question"]
            set_of[p["id"]] = key
    missing = [(m, q) for m, r in runs.items() for q in questions if not r.get(q)]
    if missing:
        sys.exit(f"build_pools: run {missing[0][0]} has no list for question {missing[0][1]}")
    order = sorted(questions)
    random.Random(SEED).shuffle(order)
    pool = build_pool(runs, order, depth=DEPTH, seed=SEED)
    meta = {"depth": DEPTH, "seed": SEED, "methods_pooled": sorted(runs), "n_questions": len(pool),
            "n_pairs": sum(len(v) for v in pool.values()), "sets": {k: sum(v == k for v in set_of.values()) for k in SETS},
            "date": now_iso(), "git": git_state(), "corpus_sha256": sha256_file(corpus_path),
            "runs_sha256": {**{m: sha256_file(FLAGSHIP / "runs" / f) for m, f in FLAGSHIP_RUNS.items()},
                            **{p.name: sha256_file(p) for p in sorted(FUSION_RUNS.glob("social_acceptance.*.trec"))}}}
    (HERE / "pools").mkdir(exist_ok=True)
    (HERE / "packets").mkdir(exist_ok=True)
    written = [write_pool(HERE / "pools" / "pool.json", pool, questions, meta=meta)]
    sources = pool_sources(runs, pool, depth=DEPTH)
    written.append(atomic_write_json(HERE / "pools" / "sources.json", {"set": set_of, "sources": sources}))
    pairs = assessment_pairs(pool, prefix="P")
    key = {pid: {"question": q, "concept": d} for pid, q, d in pairs}
    written.append(atomic_write_json(HERE / "packets" / "key.json", key))
    for i, packet in enumerate(split_packets(pairs, MAX_PAIRS), start=1):
        items = [{"pair": pid, "question": questions[q], "concept": d, "description": concepts[d].description}
                 for pid, q, d in packet]
        written.append(atomic_write_json(HERE / "packets" / f"packet_{i:02d}.json",
                                         {"packet": i, "guide": GUIDE, "n_pairs": len(items), "pairs": items}))
    lock = {"frozen_at": now_iso(), "note": "pools and packets frozen before any assessment",
            "files": {str(p.relative_to(HERE)): sha256_file(p) for p in written}}
    atomic_write_json(HERE / "pools.lock.json", lock)
    print(f"build_pools: {meta['n_questions']} questions, {meta['n_pairs']} pairs, "
          f"{len(written) - 3} packets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
