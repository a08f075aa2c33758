"""What the classic-collections chapter (notebooks/colecoes_classicas.ipynb) states, computed from
this study's ``results.json`` (and ``scaling.json`` for the cost section): the headline
(:func:`headline`) and the rest of "O essencial" (:func:`essentials`), the fused run against its
inputs in each collection, the significance matrices, the side-by-side throughput rows, and
which costs of the scaling run a page may show and how (:func:`latency_valid`, :func:`shown_fits`,
:func:`scaling_setup`, :func:`real_rows`, :func:`synthetic_rows`, :func:`efsearch`, :func:`unmeasured`). Each collection's block is read as a
:class:`gabarito.measure.report.Report`; "significant" is its Holm p below :data:`ALPHA`, stated
once in :mod:`gabarito.measure.stats`. No prose here: the page writes the words.

The reranking chapter's findings about the cross-encoder trained on these collections live in
:mod:`studies.standard_collections.reranker_findings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gabarito.measure.report import ALPHA, Comparison, Report

#: The fused run the chapter asks about, and the dense run that went into it.
FUSED = "rrf_mpnet"
DENSE = "dense_mpnet"
#: The measure of the headline, and the measures of the per-collection answer.
MEASURE = "nDCG@10"
ANSWER_MEASURES = ("nDCG@10", "AP@100")


def report(results: Mapping, collection: str) -> Report:
    """One collection's means, intervals and paired tests."""
    return Report.from_dict(results["collections"][collection])


def bm25_input(results: Mapping, collection: str) -> str:
    """The BM25 run chosen, in ``collection``, to go into the fusion."""
    return results["collections"][collection]["rrf_bm25_input"]["chosen"]


def _as_row(c: Comparison | None) -> dict | None:
    return None if c is None else {"diff": c.diff, "ci": list(c.ci) if c.ci else None, "p_holm": c.p_holm,
                                   "dz": c.dz, "verdict": c.verdict}


def _compare(r: Report, a: str, b: str, measure: str) -> Comparison | None:
    return r.compare(a, b, measure) if r.has_test(a, b, measure) else None


def headline(results: Mapping, fused: str = FUSED, dense: str = DENSE, measure: str = MEASURE,
             alpha: float = ALPHA) -> dict:
    """In each collection, ``fused`` against the BM25 that went into it and against ``dense``, on
    ``measure``, with the collection's Holm-corrected p-values.

    Returns ``{"rows": [{"collection", "bm25", "vs_bm25", "vs_dense", "beats_both",
    "beats_both_significant", "values"}], "beats_both", "beats_both_significant", "n",
    "measure"}``; ``vs_bm25`` and ``vs_dense`` are ``{"diff", "ci", "p_holm", "dz", "verdict"}``
    oriented fused minus the other (None where no test was stored)."""
    rows = []
    for name in results["collections"]:
        r, bm25 = report(results, name), bm25_input(results, name)
        vs_bm25, vs_dense = _compare(r, fused, bm25, measure), _compare(r, fused, dense, measure)
        both = bool(vs_bm25 and vs_dense and vs_bm25.diff > 0 and vs_dense.diff > 0)
        significant = both and vs_bm25.p_holm < alpha and vs_dense.p_holm < alpha
        rows.append({"collection": name, "bm25": bm25, "vs_bm25": _as_row(vs_bm25), "vs_dense": _as_row(vs_dense),
                     "beats_both": both, "beats_both_significant": significant,
                     "values": {m: r.mean(m, measure) for m in (fused, bm25, dense)}})
    return {"rows": rows, "n": len(rows), "measure": measure,
            "beats_both": sum(r["beats_both"] for r in rows),
            "beats_both_significant": sum(r["beats_both_significant"] for r in rows)}


def essentials(results: Mapping, fused: str = FUSED, dense: str = DENSE, measure: str = MEASURE) -> dict:
    """What "O essencial" states, on top of :func:`headline` (whose keys it keeps): per side
    (``"vs_bm25"``, ``"vs_dense"``), the collections where the fused run is significantly
    ``better`` (in the book's order, and ``by_gain``: smallest difference first), their
    ``better_span`` (lowest and highest difference, None when none) and the
    ``rest_span`` of the others; ``worse_any``, the collections where it is significantly below
    either input; ``both``, the rows where it is significantly above both; ``parity``, the BM25 of
    the database against bm25s over every collection (identical top-k lists, queries, the largest
    nDCG difference); ``ann``, the lowest mean recall@10 of the approximate vector index and its
    collection; ``worse_elsewhere``, :func:`worse_elsewhere` (the same question on the other tested
    measures, so that a sentence about ``measure`` names what it leaves out)."""
    h = headline(results, fused, dense, measure)
    rows, out = h["rows"], dict(h)
    for side in ("vs_bm25", "vs_dense"):
        tested = [r for r in rows if r[side]]
        better = [r for r in tested if r[side]["verdict"] == "better"]
        rest = [r for r in tested if r[side]["verdict"] != "better"]
        out[side] = {"better": [r["collection"] for r in better],
                     "by_gain": [r["collection"] for r in sorted(better, key=lambda r: r[side]["diff"])],
                     "better_span": _span([r[side]["diff"] for r in better]),
                     "rest_span": _span([r[side]["diff"] for r in rest]), "n": len(tested)}
    out["worse_any"] = [r["collection"] for r in rows
                        if any(r[s] and r[s]["verdict"] == "worse" for s in ("vs_bm25", "vs_dense"))]
    out["worse_elsewhere"] = worse_elsewhere(results, fused, dense, measure)
    out["both"] = [r for r in rows if r["beats_both_significant"]]
    cols = results["collections"]
    out["parity"] = {"identical": sum(c["parity"]["identical_topk"] for c in cols.values()),
                     "n": sum(c["parity"]["n_queries"] for c in cols.values()),
                     "k": next(iter(cols.values()))["parity"]["k"] if cols else None,
                     "max_ndcg_diff": max((abs(c["parity"]["ndcg_diff"]) for c in cols.values()), default=None)}
    low = min(cols, key=lambda c: cols[c]["ann"]["recall@10"]["mean"]) if cols else None
    out["ann"] = {"collection": low, "min_recall": cols[low]["ann"]["recall@10"]["mean"] if low else None}
    return out


def worse_elsewhere(results: Mapping, fused: str = FUSED, dense: str = DENSE, measure: str = MEASURE) -> list[dict]:
    """Where ``fused`` is significantly below the BM25 that went into it or ``dense`` on a tested
    measure other than ``measure``: ``{"collection", "measure", "other", "diff" (fused minus other),
    "p_holm", "key"}``, ``key`` being the paired test's row in the results."""
    out = []
    for name, block in results["collections"].items():
        r = report(results, name)
        for other in (bm25_input(results, name), dense):
            for m in r.measures:
                c = _compare(r, fused, other, m) if m != measure else None
                if c is not None and c.verdict == "worse":
                    i = next(i for i, t in enumerate(block["tests"])
                             if t["measure"] == m and {t["a"], t["b"]} == {fused, other})
                    out.append({"collection": name, "measure": m, "other": other, "diff": c.diff, "p_holm": c.p_holm,
                                "key": ["collections", name, "tests", i]})
    return out


def _span(values: Sequence[float]) -> tuple[float, float] | None:
    return (min(values), max(values)) if values else None


def fusion_answers(results: Mapping, collections: Sequence[str], measures: Sequence[str] = ANSWER_MEASURES,
                   fused: str = FUSED, dense: str = DENSE) -> list[dict]:
    """Per collection and measure: the fused run against the BM25 that went into it and against
    ``dense``, as :class:`~gabarito.measure.report.Comparison` (fused minus the other; pairs
    without a stored test are left out). ``[{"collection", "measures": [{"measure",
    "against": [{"method", "comparison"}]}]}]``."""
    out = []
    for name in collections:
        r, bm25 = report(results, name), bm25_input(results, name)
        per = []
        for m in measures:
            against = [{"method": other, "comparison": c} for other in (bm25, dense)
                       for c in [_compare(r, fused, other, m)] if c is not None]
            per.append({"measure": m, "against": against})
        out.append({"collection": name, "measures": per})
    return out


def pvalue_matrix(results: Mapping, collection: str, methods: Sequence[str], measure: str = MEASURE) -> list[list]:
    """The Holm p of every pair of ``methods`` in ``collection`` (rows and columns in that
    order; None on the diagonal and where no test was stored)."""
    r = report(results, collection)
    return [[r.compare(a, b, measure).p_holm if a != b and r.has_test(a, b, measure) else None for b in methods]
            for a in methods]


def side_by_side(scaling: Mapping) -> list[dict]:
    """The database over HTTP against a library in the process, on the same run: one row per
    corpus (``collection`` for a real one, ``n_vectors`` for a synthetic one) and kind of search
    (``"bm25"`` against bm25s, ``"knn"`` against exact numpy)."""
    corpora = [(c, None, r) for c, r in scaling["real"].items()]
    corpora += [(None, int(n), s) for n, s in scaling["synthetic"].items()]
    keys = {"bm25": ("bm25s_in_process_qps", "ratio_bm25s_over_arcadedb"),
            "knn": ("numpy_exact_qps", "ratio_numpy_over_arcadedb")}
    rows = []
    for collection, n_vectors, r in corpora:
        sb = r.get("side_by_side", {})
        for kind, (qps, ratio) in keys.items():
            if kind in sb:
                rows.append({"collection": collection, "n_vectors": n_vectors, "kind": kind,
                             "arcadedb_qps": sb[kind]["arcadedb_http_qps"], "in_process_qps": sb[kind][qps],
                             "ratio": sb[kind][ratio]})
    return rows


# -- the scaling run: what a page may show -------------------------------------------------------------

#: The fits of per-query times: shown only where the run marks its latencies valid.
QUERY_TIME_FITS = ("bm25_median_ms", "knn_median_ms", "bm25s_median_ms", "numpy_exact_median_ms")


def latency_valid(scaling: Mapping) -> bool:
    """Whether the scaling run marks its query latencies as a valid measure: every measured corpus
    (real and synthetic) carries ``latency_valid: true``. A run that does not say so (one that
    recorded the processor load without holding it down) is not valid."""
    entries = list(scaling.get("real", {}).values()) + list(scaling.get("synthetic", {}).values())
    return bool(entries) and all(e.get("latency_valid") is True for e in entries)


def shown_fits(scaling: Mapping, names: Sequence[str]) -> list[str]:
    """The fits of ``names`` a page draws: those with points, without the per-query times
    (:data:`QUERY_TIME_FITS`) unless :func:`latency_valid`."""
    fits, valid = scaling.get("fits", {}), latency_valid(scaling)
    return [k for k in names if isinstance(fits.get(k), Mapping) and fits[k].get("points")
            and (valid or k not in QUERY_TIME_FITS)]


def unmeasured(scaling: Mapping) -> list[dict]:
    """The sizes the run left out, with what the fitted lines predict for them: ``n_vectors``,
    ``ingest_s``, ``build_s``, ``from_vectors`` (the largest size measured), ``raw_float32_gb``
    (the vectors alone) and ``heap_gb``."""
    return [{"n_vectors": int(n), "ingest_s": s["estimated_ingest_s"], "build_s": s["estimated_build_s"],
             "from_vectors": s["reason"]["from_vectors"], "raw_float32_gb": s["raw_float32_gb"],
             "heap_gb": s["heap_gb"]} for n, s in scaling.get("skipped", {}).items()]


#: The synthetic scale's two searches: the key in ``ann_recall`` and the ledger's variant name.
SYNTHETIC_SEARCHES = {"knn_default": ("default", "efSearch default"), "knn_ef200": ("ef200", "efSearch high")}


def synthetic_rows(scaling: Mapping) -> list[dict]:
    """Per synthetic size and search (:data:`SYNTHETIC_SEARCHES`, those the run timed): ``n``,
    ``search``, ``recall`` (recall@10 of ArcadeDB's approximate index), ``ingest_s``, ``build_s``
    (the vector graph), ``memory_mb`` (the server's Java process after the build), ``latency_ms``
    (the search's median and 95th percentile per query, shown only where :func:`latency_valid`), with ``keys``
    (where each sits in the scaling file) and ``ids`` (their ledger identities: this run's own,
    apart from the vector runs of other chapters)."""
    from gabarito.publish.ledger import Identity

    out = []
    for size, s in scaling.get("synthetic", {}).items():
        for search, (recall_key, variant) in SYNTHETIC_SEARCHES.items():
            if search not in s.get("latency_ms", {}):
                continue
            base = ["synthetic", size]
            keys = {"recall": base + ["ann_recall", recall_key, "mean"], "ingest_s": base + ["ingest_s"],
                    "build_s": base + ["vector_build_s"], "memory_mb": base + ["memory_mb", "after_build", "rss_mb"]}
            where = f"synthetic, {int(size)} vectors"
            ids = {m: Identity("standard_collections", measure, collection=where, method="arcadedb_vector",
                               variant=variant if m == "recall" else "")
                   for m, measure in (("recall", "ann_recall@10"), ("ingest_s", "ingest_s"),
                                      ("build_s", "vector_build_s"), ("memory_mb", "memory_mb"))}
            out.append({"n": int(size), "search": search, "recall": s["ann_recall"][recall_key]["mean"],
                        "ingest_s": s["ingest_s"], "build_s": s["vector_build_s"],
                        "memory_mb": s["memory_mb"]["after_build"]["rss_mb"],
                        "latency_ms": _median_p95(s["latency_ms"][search]), "keys": keys, "ids": ids})
    return out


def _median_p95(latency: Mapping | None) -> tuple[float | None, float | None]:
    return (None, None) if not latency else (latency.get("median"), latency.get("p95"))


def scaling_setup(scaling: Mapping, names: Sequence[str]) -> dict:
    """What the cost section draws and names: ``model`` (the model whose vectors the scaling run
    indexed), ``fits`` (the :func:`shown_fits` of ``names``, each as the run fitted it: ``points``
    and ``slope``) and ``fit_note`` (the note on how the lines were fitted)."""
    fits = scaling.get("fits", {})
    return {"model": scaling["provenance"]["model"]["model_id"],
            "fits": {k: fits[k] for k in shown_fits(scaling, names)}, "fit_note": fits.get("note")}


def real_rows(scaling: Mapping) -> list[dict]:
    """The costs measured on each real collection, in the run's order: ``collection``, ``n_docs``,
    ``n_tokens``, ``ingest_s`` (loading the documents), ``build_s`` (the vector graph), ``memory_mb``
    (the server's Java process after the build) and the per-query latencies in ms, shown only where
    :func:`latency_valid`: ``http_floor_ms`` (median of a trivial query), ``bm25_ms`` and ``knn_ms``
    (median and 95th percentile)."""
    out = []
    for c, r in scaling.get("real", {}).items():
        lat = r.get("latency_ms") or {}
        out.append({"collection": c, "n_docs": r["n_docs"], "n_tokens": r["n_tokens"], "ingest_s": r["ingest_s"],
                    "build_s": r["vector_build_s"], "memory_mb": r["memory_mb"]["after_build"]["rss_mb"],
                    "http_floor_ms": _median_p95(lat.get("http_floor"))[0], "bm25_ms": _median_p95(lat.get("bm25")),
                    "knn_ms": _median_p95(lat.get("knn"))})
    return out


def efsearch(scaling: Mapping) -> dict:
    """How the approximate index's search width is set, as the run recorded it: ``query_time`` (the
    note on setting it per query) and ``default_when_unset`` (the note on the engine's default)."""
    ef = scaling["provenance"]["engine"]["efsearch"]
    return {"query_time": ef["query_time"], "default_when_unset": ef["default_when_unset"]}


def ann_identity(results: Mapping, collection: str):
    """The ledger identity of the study's approximate-index recall@10 in ``collection``: over the
    vectors of the study's model (``ann_model``), not the scaling run's."""
    from gabarito.publish.ledger import Identity

    model = results["provenance"]["parameters"]["ann_model"]
    return Identity("standard_collections", "ann_recall@10", collection=collection, method="arcadedb_vector",
                    variant=f"{model} vectors, efSearch default")


def scaling_ann_identity(scaling: Mapping, collection: str):
    """The ledger identity of the scaling run's approximate-index recall@10 on a real collection:
    over that run's model's vectors (another index than :func:`ann_identity`'s)."""
    from gabarito.publish.ledger import Identity

    model = scaling["provenance"]["model"]["model_id"]
    return Identity("standard_collections", "ann_recall@10", collection=collection, method="arcadedb_vector",
                    variant=f"{model} vectors, efSearch default, scaling run")


def diff_identity(results: Mapping, row: Mapping):
    """The ledger identity of a :func:`worse_elsewhere` difference (the fused run minus the other)."""
    from gabarito.publish.ledger import Identity

    return Identity("standard_collections", f"{row['measure']} difference", collection=row["collection"],
                    method=f"{FUSED} - {row['other']}", judgment="collection qrels")
