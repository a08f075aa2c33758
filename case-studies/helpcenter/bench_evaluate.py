"""Performance of ``gabarito evaluate`` on the help-center corpus: cold vs warm vector cache.

For each encoder, the full evaluation (all queries) runs twice in this process: first with an
empty vector cache (every chunk encoded), then again with the cache just filled. Writes
``perf.json`` (medians are not needed here: each figure is one run, both in the same run of
this script, on the same machine; the ratio is what to read).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.errors import run_main
from gabarito.evaluation import EvalConfig, run_evaluation
from gabarito.inputs.gold import verify_frozen
from gabarito.notes import note
from gabarito.retrieval.models import EmbeddingCache, load_encoder
from gabarito.study.records import git_state, machine, now_iso, write_measurement

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "data" / "helpcenter"
MODELS = ("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2",
          "intfloat/multilingual-e5-small")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=HERE / "perf.json")
    args = ap.parse_args(argv)
    verify_frozen(DATA / "gold.lock.json")
    docs = load_documents(DATA / "docs")
    queries = load_evaluation(DATA / "evaluation.json", docs)
    rows = []
    for model_id in MODELS:
        t0 = time.perf_counter()
        encoder = load_encoder(model_id)
        load_s = time.perf_counter() - t0
        cfg = replace(EvalConfig(), segmentation="section", method="dense", model=model_id, engine="memory")
        with tempfile.TemporaryDirectory() as tmp:
            cache = EmbeddingCache(tmp)
            timed = {}
            for state in ("cold", "warm"):
                t0 = time.perf_counter()
                rec = run_evaluation(docs, queries, cfg, encoder=encoder, cache=cache)
                timed[state] = {"wall_s": time.perf_counter() - t0, "cache": rec["cache"],
                                "timings": rec["timings"]}
        search_s = timed["warm"]["timings"]["search_s"]
        rows.append({"model": model_id, "origin": encoder.provenance()["origin"], "load_s": load_s,
                     "n_chunks": rec["n_chunks"], "n_queries": len(queries), **timed,
                     "speedup_warm": timed["cold"]["wall_s"] / timed["warm"]["wall_s"],
                     "qps_search_only": len(queries) / search_s if search_s > 0 else None})
        print(f"{model_id}: cold {timed['cold']['wall_s']:.2f} s, warm {timed['warm']['wall_s']:.2f} s")
    write_measurement(args.out, {"date": now_iso(), "git": git_state(), "machine": machine(),
                                 "segmentation": "section", "engine": note("engine.exact_cosine"),
                                 "rows": rows})
    return 0


if __name__ == "__main__":
    run_main(main)
