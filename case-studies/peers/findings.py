"""What the cost page (notebooks/custo.ipynb) states, from the peers results; numbers, keys and
verdicts, no sentences.

``bm25.json`` (BM25 engines and ArcadeDB's stages), ``vectors.json`` (vector engines),
``encoders.json`` (torch vs ONNX Runtime), ``budget.json`` (cold and warm runs) and
``measures.json`` (evaluation speed). Every function returns numbers and keys; the page writes the
sentences. :func:`essential` is the page's first screen (per thousand documents, per question);
:func:`headline`, the home page's. The choices (which load makes timings invalid, which engines
store lengths lossily) are constants below. The rebuild budget is ``scripts/rebuild_budget.py``'s.
"""

from __future__ import annotations

import math
from typing import Mapping

from gabarito.measure.timing import MAX_LOAD  # timings above this one-minute load are not a clean measure
from gabarito.publish.verdicts import span
from gabarito.retrieval.models.equivalence import TOP_K as EQUIVALENCE_TOP  # the top-k the check compares
from studies.peers.findings_budget import (  # noqa: F401  (the cost page reads them here)
    FLAGSHIP, PHASE_RULES, RUN_STATES, budget_rows, by_category, phase_category, rerun_agreement, run_state)
from studies.peers.findings_measures import evaluation_cost  # noqa: F401  (the cost page reads it here)
from studies.peers.findings_vectors import (  # noqa: F401  (the cost page reads them here)
    arcadedb_rows, split_search, vector_floor, vector_identity, vector_rows)

BM25_PEERS = ("lucene", "bm25s", "tantivy")
#: The BM25 engines that store a document's length in one byte (lossy), unlike ArcadeDB.
LOSSY_LENGTHS = ("lucene", "tantivy")
#: The peer whose lists must equal ArcadeDB's (same analyzer, exact lengths).
EXACT_PEER = "bm25s"
#: The vector engines the headline sets beside ArcadeDB.
HEADLINE_VECTOR_PEERS = ("faiss_hnsw", "hnswlib", "usearch")
#: The model and study the headline speaks of.
HEADLINE_MODEL = "mpnet"
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


# -- the budget (findings_budget) -------------------------------------------------------------

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


# -- what the page states ---------------------------------------------------------------------------

def load(results: Mapping) -> dict | None:
    """The one-minute load average at the start and the end of a benchmark, and whether its
    timings count (at most :data:`MAX_LOAD` at both ends; the recorded ``latency_valid`` when the
    benchmark recorded one). None when the load was not recorded."""
    m = results["provenance"]["machine"]
    start, end = m.get("load_average_start"), m.get("load_average_end")
    if not start or not end:
        return None
    valid = m.get("latency_valid")
    if valid is None:
        valid = max(start[0], end[0]) <= MAX_LOAD
    return {"start": start[0], "end": end[0], "valid": bool(valid), "max_load": MAX_LOAD}


def bm25_agreement(bm25: Mapping) -> dict:
    """Agreement with ArcadeDB over the rows of the BM25 table: the lowest share of identical
    top-10 lists of :data:`EXACT_PEER`, the lowest and highest share of the lossy engines
    (:data:`LOSSY_LENGTHS`, every collection), and the largest |nDCG@10 difference| of any peer."""
    rows = bm25_rows(bm25)
    lossy = [r["identical_share"] for r in rows if r["engine"] in LOSSY_LENGTHS]
    return {"exact_peer": EXACT_PEER, "lossy": list(LOSSY_LENGTHS),
            "exact_min": min(r["identical_share"] for r in rows if r["engine"] == EXACT_PEER),
            "lossy_span": span(lossy),
            "max_abs_ndcg_diff": max(abs(r["ndcg_diff"]) for r in rows if r["engine"] in BM25_PEERS)}


def largest_collection(bm25: Mapping) -> dict:
    """The stage row (:func:`stage_rows`) of the collection with the most documents."""
    return max(stage_rows(bm25), key=lambda r: r["n_docs"])


def vector_setup(vectors: Mapping, bm25: Mapping) -> dict:
    """How the synthetic vectors were made: the collection whose document vectors seed them,
    how many vectors and judged queries it has, the model and its dimension, the sample the
    ONNX Runtime was checked on, the graph parameters and the search widths. The seed collection
    is named in the corpus description (``"npl all-MiniLM..."``), its counts read from ``bm25.json``
    unless the corpus block records ``collection``, ``n_base`` or ``n_queries``."""
    prov = vectors["provenance"]
    corpus, model, params = prov["corpus"], prov["model"], prov["parameters"]
    collection = corpus.get("collection") or corpus["base"].split()[0]
    counts = bm25["collections"][collection]
    return {"collection": collection, "n_base": corpus.get("n_base", counts["n_docs"]),
            "n_queries": corpus.get("n_queries", counts["n_queries"]), "model_id": model["model_id"],
            "dim": model["dim"], "equivalence": {**model["equivalence"]["texts"], "top": EQUIVALENCE_TOP}, "M": params["M"],
            "ef_construction": params["ef_construction"], "widths": list(params["widths"])}


def onnx_gain(budget: Mapping) -> list[dict]:
    """Per study measured cold with both backends: ``split`` (the study records its phases)
    with model load and encoding seconds for each backend, or the two totals."""
    per_study: dict[str, dict] = {}
    for r in budget_rows(budget):
        if "failed" not in r:
            per_study.setdefault(r["study"], {})[r["run"]] = r["categories"]
    out = []
    for study, runs in per_study.items():
        auto, torch = runs.get("cold_auto"), runs.get("cold_torch")
        if not (auto and torch):
            continue
        if "model" in auto and "encode" in auto:
            out.append({"study": study, "split": True, "model": (auto["model"], torch.get("model")),
                        "encode": (auto["encode"], torch.get("encode"))})
        else:
            out.append({"study": study, "split": False, "total": (sum(auto.values()), sum(torch.values()))})
    return out


def headline(bm25: Mapping, vectors: Mapping, encoders: Mapping, budget: Mapping) -> dict:
    """What the page's first screen states: ``encoder`` (the fastest ONNX setting of
    :data:`HEADLINE_MODEL`, :func:`encoder_rows`), ``bm25`` (:func:`bm25_summary`), ``vectors``
    (:func:`vector_summary`, its engines limited to :data:`HEADLINE_VECTOR_PEERS`), ``floor`` (the
    ArcadeDB kNN over the HTTP floor at that size and width) and ``flagship`` (the main study's
    measured cold and warm run, None when not measured)."""
    enc = next(r for r in encoder_rows(encoders) if r["model"] == HEADLINE_MODEL and r["fastest"])
    vs = vector_summary(vectors)
    vs = {**vs, "engines": {e: v for e, v in vs["engines"].items() if e in HEADLINE_VECTOR_PEERS}}
    floor = next(r for r in vector_floor(vectors) if r["n"] == vs["n"] and r["width"] == vs["width"])
    runs = budget["measured"].get(FLAGSHIP) or {}
    cold, warm, torch = (runs.get(k) or {} for k in ("cold_auto", "warm_auto", "cold_torch"))
    flag = {"study": FLAGSHIP, "cold_s": cold["wall_s"], "warm_s": warm.get("wall_s"),
            "cold_torch_s": torch["wall_s"]} if cold.get("wall_s") and torch.get("wall_s") else None
    return {"encoder": enc, "bm25": bm25_summary(bm25), "vectors": vs, "floor": floor, "flagship": flag}


def arcadedb_bm25_word(summary: Mapping) -> str:
    """How ArcadeDB's BM25 throughput compares with every peer of :func:`bm25_summary` (its
    ``ratio_geomean`` is the peer's questions per second over ArcadeDB's): ``"menos"`` when every
    peer answers more per second, ``"mais"`` when every peer answers fewer, else ``"ora mais, ora
    menos"``."""
    ratios = [summary[e]["ratio_geomean"] for e in BM25_PEERS if summary.get(e)]
    if ratios and all(r > 1 for r in ratios):
        return "menos"
    if ratios and all(r < 1 for r in ratios):
        return "mais"
    return "ora mais, ora menos"


# -- per thousand documents, per question (the page's first screen) ----------------------------------

#: The page speaks per this many documents (or vectors).
PER = 1000
#: The small model set beside :data:`HEADLINE_MODEL`.
SMALL_MODEL = "minilm"
#: The model the help-center chapter recommends (multilingual-e5-small on its float32 path): the
#: page shows its cost when the encoders bench measured it and says it was not measured otherwise.
RECOMMENDED_MODEL = "e5"


def encode_costs(encoders: Mapping) -> list[dict]:
    """Per model and setting: seconds to encode :data:`PER` passages (median round, and the
    fastest and slowest rounds), the ratio of passages per second to torch, and whether the
    vectors equal torch's (``None`` for torch itself)."""
    n = encoders["provenance"]["corpus"]["passages"]
    out = []
    for model, m in encoders["models"].items():
        record = encoders["provenance"]["model"][model]
        for setting, s in m["settings"].items():
            vs = s.get("vs_torch")
            out.append({"model": model, "model_id": record["model_id"], "engine": record.get("engine"),
                        "setting": setting, "s_per": PER / s["passages_per_s_median"],
                        "rounds": (PER * min(s["seconds"]) / n, PER * max(s["seconds"]) / n),
                        "ratio": s["ratio_to_torch_median"], "fastest": setting == m["fastest_onnx_setting"],
                        "same_vectors": None if vs is None else bool(vs.get("equivalent", vs.get("top10_identical")))})
    return out


#: The corpus of the page's worked examples ("O que fazer com isso"), in documents.
EXAMPLE_CORPUS = 100_000


def example_ms(row: Mapping) -> float:
    """Milliseconds for :data:`EXAMPLE_CORPUS` documents at a row's seconds per :data:`PER`."""
    return row["s_per"] * EXAMPLE_CORPUS / PER * 1000


def backend_name(row: Mapping) -> str:
    """What ran an :func:`encode_costs` row: torch, or ONNX Runtime in any of its settings."""
    return "torch" if row["setting"] == "torch" else "ONNX Runtime"


def model_cost(encoders: Mapping, model: str = RECOMMENDED_MODEL) -> dict | None:
    """``model``'s cost per :data:`PER` passages (:func:`encode_costs`): ``torch`` and ``fastest``
    (its fastest ONNX Runtime setting) rows, ``model_id`` and ``engine``; None when the encoders
    bench did not measure it (a results file written before it was added)."""
    rows = [r for r in encode_costs(encoders) if r["model"] == model]
    if not rows:
        return None
    torch = next((r for r in rows if r["setting"] == "torch"), None)
    fastest = next((r for r in rows if r["fastest"]), None)
    return {"model": model, "model_id": rows[0]["model_id"], "engine": rows[0]["engine"], "torch": torch,
            "fastest": fastest}


def bm25_index_costs(bm25: Mapping, collection: str) -> list[dict]:
    """Per engine (ArcadeDB first): seconds to index :data:`PER` documents of ``collection``."""
    c = bm25["collections"][collection]
    return [{"engine": e, "s_per": c["engines"][e]["build_s"] / c["n_docs"] * PER, "n_docs": c["n_docs"]}
            for e in ("arcadedb", *BM25_PEERS)]


def vector_index_costs(vectors: Mapping, n: int | None = None, width: int = 100) -> list[dict]:
    """At ``n`` vectors (default: the most ArcadeDB was built with), per graph engine (ArcadeDB
    first) and FAISS's exact index: seconds to build and MB the memory grew, per :data:`PER`
    vectors (ArcadeDB: its server from idle to built, loading by HTTP included), recall@10 and the
    qps ratio to ArcadeDB at ``width``, exact engines too (None without ArcadeDB); ``raw_mb``: :data:`PER` vectors of
    the recorded dimension as 32-bit numbers (arithmetic, not measured)."""
    sizes = vectors["sizes"]
    n = n or max(int(k) for k, st in sizes.items() if st.get("arcadedb"))
    st, dim = sizes[str(n)], vectors["provenance"]["model"]["dim"]
    rows = {(r["engine"], r["width"]): r for r in vector_rows(vectors) if r["n"] == n}
    mem = (st.get("arcadedb") or {}).get("memory_mb") or {}
    arcade = rows.get(("arcadedb_vector", width))
    out = []
    for engine in ("arcadedb_vector", *HEADLINE_VECTOR_PEERS, "faiss_flat"):
        r = rows.get((engine, width)) or rows.get((engine, None))
        if r is None:
            continue
        grown = (mem["after_build"]["rss_mb"] - mem["idle"]["rss_mb"] if "idle" in mem else None) \
            if engine == "arcadedb_vector" else st["engines"][engine].get("rss_growth_mb")
        out.append({"n": n, "engine": engine, "build_s_per": (r["build_s"] or 0.0) / n * PER,
                    "memory_mb_per": None if grown is None else grown / n * PER, "recall": r["recall"],
                    "ratio": r["qps"] / arcade["qps"] if arcade else None,
                    "exact": r["width"] is None, "raw_mb": PER * dim * 4 / 1e6})
    return out


def cache_gain(budget: Mapping) -> dict | None:
    """The flagship's encoding seconds from nothing and again with its vectors cached (ONNX
    Runtime), and its whole run both ways; None when not measured."""
    runs = budget["measured"].get(FLAGSHIP) or {}
    cold, warm = runs.get("cold_auto"), runs.get("warm_auto")
    if not (cold and warm) or "failed" in cold or "failed" in warm:
        return None
    c, w = by_category(cold["phases_s"]), by_category(warm["phases_s"])
    return {"study": FLAGSHIP, "encode_cold_s": c.get("encode"), "encode_warm_s": w.get("encode"),
            "cold_s": cold["wall_s"], "warm_s": warm["wall_s"]}


def essential(bm25: Mapping, vectors: Mapping, encoders: Mapping, budget: Mapping) -> dict:
    """What the first screen states, on the documents the encoders were timed on: ``big`` and
    ``small`` (the fastest ONNX setting of :data:`HEADLINE_MODEL` and :data:`SMALL_MODEL`,
    :func:`encode_costs`), ``torch`` (the big model on torch), ``bm25_index`` (ArcadeDB, same
    documents), ``encode_over_index`` (big model's seconds over ArcadeDB's), ``per_question``
    (the BM25 peers' qps ratio to ArcadeDB: lowest and highest geometric mean), ``cache``."""
    collection = encoders["provenance"]["corpus"]["collection"]
    enc = encode_costs(encoders)
    big = next(r for r in enc if r["model"] == HEADLINE_MODEL and r["fastest"])
    small = next(r for r in enc if r["model"] == SMALL_MODEL and r["fastest"])
    torch = next(r for r in enc if r["model"] == HEADLINE_MODEL and r["setting"] == "torch")
    index = bm25_index_costs(bm25, collection)[0]
    summary = bm25_summary(bm25)
    ratios = {e: v["ratio_geomean"] for e, v in summary.items()}
    low, high = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    return {"collection": collection, "chars_mean": encoders["passage_tokens"]["chars_mean"], "big": big,
            "small": small, "torch": torch, "bm25_index": index, "encode_over_index": big["s_per"] / index["s_per"],
            "per_question": {"low": ratios[low], "high": ratios[high], "low_engine": low, "high_engine": high,
                             "word": arcadedb_bm25_word(summary)}, "cache": cache_gain(budget)}
