"""What the cost page (notebooks/custo.ipynb) derives from the peers results; no prose here.

``bm25.json`` (BM25 engines and ArcadeDB's stages), ``vectors.json`` (vector engines),
``encoders.json`` (torch vs ONNX Runtime) and ``budget.json`` (cold and warm runs). Every
function returns numbers and keys; the page writes the sentences.
"""

from __future__ import annotations

import math
import re
from typing import Mapping

BM25_PEERS = ("lucene", "bm25s", "tantivy")
#: How a study's phase names fall into the page's categories (first rule that matches wins).
PHASE_RULES = [
    ("model", r"model"), ("encode", r"encod|embed|dense first|vectors?$"), ("latency", r"latenc|bench"),
    ("statistics", r"statist|score table|headline|calibration|scor"),
    ("index", r"index|ingest|server|warm_up|build"), ("queries", r"search|bm25|knn|rrf|splade|mmr|sweep|first stage"),
    ("load", r"load|gold|fetch"),
]


def geomean(values) -> float | None:
    xs = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in xs) / len(xs)) if xs else None


# -- BM25 ------------------------------------------------------------------------------------

def bm25_rows(bm25: Mapping) -> list[dict]:
    """Per collection and engine (ArcadeDB first): nDCG@10, qps, ratio to ArcadeDB, agreement."""
    out = []
    for name, c in bm25["collections"].items():
        for engine in ("arcadedb", *BM25_PEERS):
            e = c["engines"][engine]
            agree = e.get("agreement_with_arcadedb") or {}
            out.append({"collection": name, "engine": engine, "n_docs": c["n_docs"], "n_queries": c["n_queries"],
                        "ndcg": e["ndcg@10"], "qps": e["qps"], "ratio": e["qps_ratio_to_arcadedb"],
                        "median_ms": e["latency_ms"]["median"], "build_s": e.get("build_s"),
                        "identical_share": agree.get("identical_topk_share"), "jaccard": agree.get("mean_jaccard"),
                        "ndcg_diff": agree.get("ndcg_diff")})
    return out


def bm25_summary(bm25: Mapping) -> dict:
    """Per peer: the qps ratio to ArcadeDB (geometric mean, min, max over the collections), the
    share of identical top-10 lists and the largest |nDCG@10 difference|."""
    rows = bm25_rows(bm25)
    out = {}
    for engine in BM25_PEERS:
        mine = [r for r in rows if r["engine"] == engine]
        out[engine] = {"ratio_geomean": geomean(r["ratio"] for r in mine),
                       "ratio_min": min(r["ratio"] for r in mine), "ratio_max": max(r["ratio"] for r in mine),
                       "identical_share_min": min(r["identical_share"] for r in mine),
                       "identical_share_mean": sum(r["identical_share"] for r in mine) / len(mine),
                       "max_abs_ndcg_diff": max(abs(r["ndcg_diff"]) for r in mine)}
    return out


def stage_rows(bm25: Mapping) -> list[dict]:
    """Per collection: the HTTP floor, BM25 over the floor, the match alone over the floor, the
    documents a query matches, and the two options (English analyzer, no stop words) against
    the standard query: speed-up and nDCG@10 change."""
    out = []
    for name, c in bm25["collections"].items():
        e, s = c["engines"], c["stages"]
        base = e["arcadedb"]
        row = {"collection": name, "n_docs": c["n_docs"], "floor_ms": s["http_floor_ms"]["median"],
               "bm25_ms": base["latency_ms"]["median"], "bm25_over_floor": s["bm25_over_floor"],
               "match_only_over_floor": s["match_only_over_floor"],
               "matched_median": s["matched_docs"]["median"], "matched_share": s["matched_docs"]["share_of_collection_median"]}
        for option in ("english_analyzer", "no_stop_words"):
            row[option] = {"speedup": e[option]["qps"] / base["qps"], "ndcg": e[option]["ndcg@10"],
                           "ndcg_change": e[option]["ndcg@10"] - base["ndcg@10"],
                           "over_floor": e[option]["latency_ms"]["median"] / row["floor_ms"]}
        out.append(row)
    return out


# -- vectors ---------------------------------------------------------------------------------

def split_search(name: str) -> tuple[str, int | None]:
    """``"hnswlib@100"`` -> ``("hnswlib", 100)``; ``"arcadedb@20"`` -> ``("arcadedb_vector", 20)``."""
    engine, _, width = name.partition("@")
    return ("arcadedb_vector" if engine == "arcadedb" else engine), (int(width) if width else None)


def vector_rows(vectors: Mapping) -> list[dict]:
    """Per size, engine and width: recall@10, qps, ratio to ArcadeDB at the same width (or at its
    widest, for the exact engines), build seconds and memory."""
    out = []
    for size, st in vectors["sizes"].items():
        searches = st["searches"]
        arcade = {split_search(k)[1]: v for k, v in searches.items() if k.startswith("arcadedb@")}
        widest = arcade[max(arcade)] if arcade else None
        arc = st.get("arcadedb") or {}
        for name, v in searches.items():
            engine, width = split_search(name)
            ref = arcade.get(width, widest) if engine != "arcadedb_vector" else v
            built = st["engines"].get(engine) or {}
            build_s = (arc.get("ingest_s", 0) + arc.get("build_s", 0)) if engine == "arcadedb_vector" else built.get("build_s")
            memory = ((arc.get("memory_mb") or {}).get("after_build") or {}).get("rss_mb") \
                if engine == "arcadedb_vector" else built.get("rss_growth_mb")
            out.append({"n": int(size), "engine": engine, "width": width, "recall": v["recall@10"]["mean"],
                        "qps": v["qps"], "median_ms": v["latency_ms"]["median"],
                        "ratio": (v["qps"] / ref["qps"]) if ref else None, "build_s": build_s, "memory_mb": memory})
    return out


def vector_floor(vectors: Mapping) -> list[dict]:
    """Per size: the HTTP floor and ArcadeDB's kNN median over it, per width."""
    out = []
    for size, st in vectors["sizes"].items():
        floor = (st.get("http_floor_ms") or {}).get("median")
        if not floor:
            continue
        for name, v in st["searches"].items():
            if name.startswith("arcadedb@"):
                out.append({"n": int(size), "width": split_search(name)[1], "floor_ms": floor,
                            "knn_ms": v["latency_ms"]["median"], "over_floor": v["latency_ms"]["median"] / floor})
    return out


# -- encoders ----------------------------------------------------------------------------------

def encoder_rows(encoders: Mapping) -> list[dict]:
    out = []
    for model, m in encoders["models"].items():
        for setting, s in m["settings"].items():
            vs = s.get("vs_torch") or {}
            out.append({"model": model, "setting": setting, "best": s["passages_per_s_best"],
                        "median": s["passages_per_s_median"], "ratio_best": s["ratio_to_torch_best"],
                        "ratio_median": s["ratio_to_torch_median"], "max_abs_delta": vs.get("max_abs_delta"),
                        "top10_identical": vs.get("top10_identical"), "fastest": setting == m["fastest_onnx_setting"]})
    return out


# -- the budget -------------------------------------------------------------------------------

def phase_category(name: str) -> str:
    low = name.lower()
    for category, pattern in PHASE_RULES:
        if re.search(pattern, low):
            return category
    return "other"


def by_category(phases: Mapping[str, float] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, seconds in (phases or {}).items():
        key = phase_category(name)
        out[key] = out.get(key, 0.0) + float(seconds)
    return out


def budget_rows(budget: Mapping) -> list[dict]:
    """Per measured study and run (cold per backend, warm): wall time and seconds by category."""
    out = []
    for study, runs in budget["measured"].items():
        for run, r in runs.items():
            if "failed" in r:
                out.append({"study": study, "run": run, "failed": r["failed"]})
                continue
            out.append({"study": study, "run": run, "wall_s": r["wall_s"], "process_wall_s": r["process_wall_s"],
                        "categories": by_category(r["phases_s"]), "runs_vs_committed": r.get("runs_vs_committed")})
    return out


def committed_rows(budget: Mapping) -> list[dict]:
    """Studies not run here: the committed (warm) run's wall time and categories."""
    return [{"study": s, "wall_s": r.get("wall_s"), "categories": by_category(r.get("phases_s"))}
            for s, r in budget["not_run_committed"].items() if r.get("wall_s") is not None]


def encode_estimate_s(n_texts: int, encoders: Mapping, model: str) -> float:
    """Seconds to encode ``n_texts`` passages with ``model`` at the fastest measured ONNX setting
    (median round): the basis of the cold estimate for a study that was not run cold here."""
    m = encoders["models"][model]
    return n_texts / m["settings"][m["fastest_onnx_setting"]]["passages_per_s_median"]


#: The targets of the cost page (issue 14): the whole report cold, warm, and a site rebuild with no change.
TARGETS = {"cold_total_s": 45 * 60, "warm_total_s": 3 * 60, "site_no_change_s": 15}


def classic_encode_estimate_s(bm25: Mapping, encoders: Mapping) -> float:
    """The classic-collections study encodes every document and query with both models; at the
    fastest measured ONNX rate (CISI passages), that many texts take this many seconds."""
    texts = sum(c["n_docs"] + c["n_queries"] for c in bm25["collections"].values())
    return sum(encode_estimate_s(texts, encoders, model) for model in encoders["models"])


def budget_summary(budget: Mapping, encoders: Mapping, bm25: Mapping, backend: str = "auto") -> dict:
    """Per study, cold and warm seconds and how each is known: ``measured`` here, or from the
    committed (warm) run, with the classic collections' cold run estimated from the encoding
    rate (:func:`classic_encode_estimate_s`); the totals and the targets beside them."""
    rows = []
    for study, runs in budget["measured"].items():
        cold, warm = runs.get(f"cold_{backend}") or {}, runs.get(f"warm_{backend}") or {}
        torch = runs.get("cold_torch") or {}
        rows.append({"study": study, "cold_s": cold.get("wall_s"), "warm_s": warm.get("wall_s"),
                     "cold_torch_s": torch.get("wall_s"), "cold_basis": "measured", "warm_basis": "measured"})
    for r in committed_rows(budget):
        extra = classic_encode_estimate_s(bm25, encoders) if r["study"] == "standard_collections" else None
        rows.append({"study": r["study"], "warm_s": r["wall_s"], "warm_basis": "committed",
                     "cold_s": r["wall_s"] + (extra or 0.0), "cold_torch_s": None,
                     "cold_basis": "estimated_encoding" if extra else "committed_no_encoding"})
    cold = sum(r["cold_s"] or 0.0 for r in rows)
    warm = sum(r["warm_s"] or 0.0 for r in rows)
    site = budget.get("site") or {}
    return {"rows": rows, "cold_total_s": cold, "warm_total_s": warm, "site_no_change_s": site.get("no_change_s"),
            "site_first_s": site.get("first_s"), "targets": TARGETS,
            "met": {"cold": cold <= TARGETS["cold_total_s"], "warm": warm <= TARGETS["warm_total_s"],
                    "site": site.get("no_change_s") is not None and site["no_change_s"] <= TARGETS["site_no_change_s"]},
            "slowest_warm": max(rows, key=lambda r: r["warm_s"] or 0.0)["study"] if rows else None}


def slowest_categories(budget: Mapping, study: str, n: int = 3) -> list[tuple[str, float]]:
    """The ``n`` costliest phase categories of a study's committed run (what holds its warm time)."""
    phases = (budget["not_run_committed"].get(study) or {}).get("phases_s")
    return sorted(by_category(phases).items(), key=lambda kv: -kv[1])[:n]


def vector_summary(vectors: Mapping, width: int = 100) -> dict:
    """At the largest size ArcadeDB ran and the given width: each engine's qps ratio to ArcadeDB
    and recall@10, ArcadeDB's own recall and qps."""
    rows = [r for r in vector_rows(vectors) if r["ratio"] is not None]
    n = max(r["n"] for r in rows if r["engine"] == "arcadedb_vector")
    at = [r for r in rows if r["n"] == n and (r["width"] in (width, None))]
    arcade = next(r for r in at if r["engine"] == "arcadedb_vector")
    return {"n": n, "width": width, "arcadedb": {"recall": arcade["recall"], "qps": arcade["qps"]},
            "engines": {r["engine"]: {"ratio": r["ratio"], "recall": r["recall"]} for r in at
                        if r["engine"] != "arcadedb_vector"}}
