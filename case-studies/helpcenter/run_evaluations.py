"""The 'evaluate your own search' chapter: one variable at a time on the help-center corpus.

Every configuration runs on the tuning queries and, separately, on the held-out queries; the
configuration to recommend is picked on tuning MRR only. Each run is a record appended to
``runs/log.jsonl`` (the same records ``gabarito evaluate`` writes); ``results.json`` gathers
the summaries the chapter draws, with provenance and the frozen gold hashes.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.errors import run_main
from gabarito.evaluation.run import EvalConfig, run_evaluation, write_run
from gabarito.inputs.gold import verify_frozen
from gabarito.retrieval.models import cache_dir
from gabarito.study.records import provenance, write_results

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "data" / "helpcenter"
SPLITS = {"tuning": "evaluation.tuning.json", "heldout": "evaluation.heldout.json"}
E5 = "intfloat/multilingual-e5-small"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
BASE = EvalConfig(segmentation="section", method="dense", model=E5, engine="memory", k=10)


def experiments() -> dict[str, list[tuple[str, EvalConfig]]]:
    """Named groups of configurations; inside a group exactly one variable changes."""
    return {
        "segmentation": [(s, replace(BASE, segmentation=s, label=f"seg={s}"))
                         for s in ("document", "paragraph", "section", "recursive:120:20")],
        "model": [(m, replace(BASE, model=m, label=f"model={m}")) for m in (MINILM, MPNET, E5)],
        "lexical": [(a, replace(BASE, method="bm25", model=None, engine="arcadedb", analyzer=a,
                                label=f"bm25 {a}")) for a in ("standard", "portuguese")],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--arcadedb-url", default=os.environ.get("GABARITO_ARCADEDB_URL"))
    ap.add_argument("--db-dir", type=Path, default=cache_dir() / "arcadedb-evaluate")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    gold = verify_frozen(DATA / "gold.lock.json")
    docs = load_documents(DATA / "docs")
    queries = {s: load_evaluation(DATA / f, docs) for s, f in SPLITS.items()}
    log = args.out / "runs" / "log.jsonl"

    def run(cfg: EvalConfig) -> dict:
        out = {}
        for split, qs in queries.items():
            rec = run_evaluation(docs, qs, cfg, arcadedb_url=args.arcadedb_url, db_dir=args.db_dir,
                                 documents_path=str((DATA / "docs").relative_to(HERE.parents[1])),
                                 evaluation_path=f"data/helpcenter/{SPLITS[split]}")
            write_run(rec, args.out / "runs" / rec["run_id"], log)
            out[split] = rec
        return out

    groups: dict[str, list[dict]] = {}
    for group, configs in experiments().items():
        groups[group] = [{"variant": name, **run(cfg)} for name, cfg in configs]
    dense = [r for r in groups["model"]]
    best_dense = max(dense, key=lambda r: r["tuning"]["summary"]["mrr"]["value"])
    best_lex = max(groups["lexical"], key=lambda r: r["tuning"]["summary"]["mrr"]["value"])
    hybrid_cfg = replace(BASE, method="hybrid", model=best_dense["tuning"]["config"]["model"], engine="arcadedb",
                         analyzer=best_lex["tuning"]["config"]["analyzer"], label="hybrid")
    groups["hybrid"] = [{"variant": "rrf", **run(hybrid_cfg)}]
    candidates = [r for g in groups.values() for r in g]
    chosen = max(candidates, key=lambda r: r["tuning"]["summary"]["mrr"]["value"])

    def slim(rec: dict) -> dict:
        return {k: rec[k] for k in ("run_id", "config", "segmentation", "model", "engine", "n_chunks",
                                    "cache", "timings", "summary", "per_query")}

    results = {
        "study": "helpcenter",
        "provenance": provenance(
            corpus={"name": "helpcenter", "path": "data/helpcenter/docs",
                    "sha256": best_dense["tuning"]["corpus_sha256"], "n_docs": len(docs)},
            gold_sha256={f"../../data/helpcenter/{f}": h for f, h in gold.items()},
            model=None, engine={"dense": "exact cosine in memory", "bm25": "ArcadeDB FULL_TEXT"},
            parameters={"base": BASE.__dict__, "splits": SPLITS, "selection": "highest tuning MRR"}),
        "groups": {g: [{"variant": r["variant"], "tuning": slim(r["tuning"]), "heldout": slim(r["heldout"])}
                       for r in rs] for g, rs in groups.items()},
        "chosen": {"tuning_run": chosen["tuning"]["run_id"], "heldout_run": chosen["heldout"]["run_id"],
                   "label": chosen["tuning"]["config"]["label"]},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    write_results(args.out / "results.json", results)
    print(f"results.json written; chosen: {results['chosen']['label']}")
    return 0


if __name__ == "__main__":
    run_main(main)
