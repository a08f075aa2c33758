"""What the classic-collections chapter (notebooks/colecoes_classicas.ipynb) states, computed from
this study's ``results.json`` (and ``scaling.json`` for the cost section): the headline
(:func:`headline`), the fused run against its inputs in each collection, the significance
matrices and the side-by-side throughput rows. Each collection's block is read as a
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
    return None if c is None else {"diff": c.diff, "p_holm": c.p_holm, "dz": c.dz, "verdict": c.verdict}


def _compare(r: Report, a: str, b: str, measure: str) -> Comparison | None:
    return r.compare(a, b, measure) if r.has_test(a, b, measure) else None


def headline(results: Mapping, fused: str = FUSED, dense: str = DENSE, measure: str = MEASURE,
             alpha: float = ALPHA) -> dict:
    """In each collection, ``fused`` against the BM25 that went into it and against ``dense``, on
    ``measure``, with the collection's Holm-corrected p-values.

    Returns ``{"rows": [{"collection", "bm25", "vs_bm25", "vs_dense", "beats_both",
    "beats_both_significant", "values"}], "beats_both", "beats_both_significant", "n",
    "measure"}``; ``vs_bm25`` and ``vs_dense`` are ``{"diff", "p_holm", "dz", "verdict"}``
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
