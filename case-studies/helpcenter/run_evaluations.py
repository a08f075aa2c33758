"""The 'evaluate your own search' chapter: one variable at a time on the help-center corpus.

Every configuration runs on the tuning queries and, separately, on the held-out queries; the
configuration to recommend is picked on tuning MRR only. Each run is a record appended to
``runs/log.jsonl`` (the same records ``gabarito evaluate`` writes), whose sha256 is recorded in
``runs/results.sha256.json`` once every run is in it (the chapter reads the log: an edit is
refused); ``results.json`` gathers the summaries the chapter draws, with provenance and the frozen
gold hashes.
"""

from __future__ import annotations

from dataclasses import replace

from gabarito.evaluation import EvalConfig, run_evaluation, write_run
from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.notes import note
from gabarito.paths import ROOT
from gabarito.study.integrity import record
from gabarito.study.records import now_iso
from gabarito.study.runner import study_main
from studies.helpcenter.findings import compute_dense_against_fusion, compute_rivals

DATA = ROOT / "data" / "helpcenter"
SPLITS = {"tuning": "evaluation.tuning.json", "heldout": "evaluation.heldout.json"}
E5 = "intfloat/multilingual-e5-small"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
BASE = EvalConfig(segmentation="section", method="dense", model=E5, engine="memory", k=10)
#: what each configuration's record keeps in results.json
KEPT = ("run_id", "config", "segmentation", "model", "engine", "n_chunks", "cache", "timings", "summary",
        "per_query")


def experiments() -> dict[str, list[tuple[str, EvalConfig]]]:
    """Named groups of configurations; inside a group exactly one variable changes."""
    return {
        "segmentation": [(s, replace(BASE, segmentation=s, label=f"seg={s}"))
                         for s in ("document", "paragraph", "section", "recursive:120:20")],
        "model": [(m, replace(BASE, model=m, label=f"model={m}")) for m in (MINILM, MPNET, E5)],
        "lexical": [(a, replace(BASE, method="bm25", model=None, engine="arcadedb", analyzer=a,
                                label=f"bm25 {a}")) for a in ("standard", "portuguese")],
    }


def tuning_mrr(entry: dict) -> float:
    return entry["tuning"]["summary"]["mrr"]["value"]


def hybrid_config(groups: dict) -> EvalConfig:
    """RRF of the best dense model and the best BM25 analyzer, both chosen on tuning MRR."""
    best_dense = max(groups["model"], key=tuning_mrr)
    best_lex = max(groups["lexical"], key=tuning_mrr)
    return replace(BASE, method="hybrid", model=best_dense["tuning"]["config"]["model"], engine="arcadedb",
                   analyzer=best_lex["tuning"]["config"]["analyzer"], label="hybrid")


def devices(groups: dict) -> list[str]:
    """The devices the runs' models ran on (each record's model block says; BM25 has none)."""
    return sorted({rec["model"]["device"] for rs in groups.values() for r in rs for split in SPLITS
                   for rec in [r[split]] if (rec.get("model") or {}).get("device")})


def run(ctx) -> dict:
    with ctx.phase("load"):
        docs = load_documents(DATA / "docs")
        queries = {s: load_evaluation(DATA / f, docs) for s, f in SPLITS.items()}
    log = ctx.out / "runs" / "log.jsonl"

    def evaluate(cfg: EvalConfig) -> dict:
        out = {}
        for split, qs in queries.items():
            rec = run_evaluation(docs, qs, cfg, arcadedb_url=ctx.args.arcadedb_url, db_dir=ctx.db_dir("evaluate"),
                                 documents_path="data/helpcenter/docs",
                                 evaluation_path=f"data/helpcenter/{SPLITS[split]}", device=ctx.device)
            write_run(rec, ctx.out / "runs" / rec["run_id"], log)
            out[split] = rec
        return out

    groups: dict[str, list[dict]] = {}
    with ctx.phase("evaluations"):
        for group, configs in experiments().items():
            groups[group] = [{"variant": name, **evaluate(cfg)} for name, cfg in configs]
        groups["hybrid"] = [{"variant": "rrf", **evaluate(hybrid_config(groups))}]
    record(log, when=now_iso())  # the log the chapter reads, as these runs left it
    chosen = max((r for g in groups.values() for r in g), key=tuning_mrr)
    first = groups["model"][0]["tuning"]
    out = {
        "provenance": ctx.provenance(
            corpus={"name": "helpcenter", "path": "data/helpcenter/docs", "sha256": first["corpus_sha256"],
                    "n_docs": len(docs)},
            model=None, engine={"dense": note("engine.exact_cosine"), "bm25": note("engine.arcadedb_full_text"),
                                "device": devices(groups)},
            parameters={"base": BASE.__dict__, "splits": SPLITS, "selection": "highest tuning MRR"}),
        "groups": {g: [{"variant": r["variant"], **{s: {k: r[s][k] for k in KEPT} for s in SPLITS}}
                       for r in rs] for g, rs in groups.items()},
        "chosen": {"tuning_run": chosen["tuning"]["run_id"], "heldout_run": chosen["heldout"]["run_id"],
                   "label": chosen["tuning"]["config"]["label"]},
    }
    return out


def statistics(results, ctx) -> dict:
    """What the study stores beside its measurements (``--statistics-only`` recomputes it from the
    written file and its run log), so that the chapter computes no statistic: the chosen
    configuration against its rivals, and the best dense model against the fusion."""
    log = ctx.out / "runs" / "log.jsonl"
    return {"rivals": compute_rivals(results, log), "dense_against_fusion": compute_dense_against_fusion(results, log)}


if __name__ == "__main__":
    study_main(__file__, run, statistics=statistics)
