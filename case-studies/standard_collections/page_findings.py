"""What the classic-collections chapter (notebooks/colecoes_classicas.ipynb) states about the
collections and the methods themselves, read from this study's ``results.json``: which collections,
methods and measures the chapter shows (:func:`frame`), the table of collections
(:func:`collection_rows`), the methods and their descriptions (:func:`method_rows`), the BM25 that
goes into each fusion (:func:`bm25_choice`), every mean with its interval (:func:`mean_rows`,
:func:`bars`), the engines' parity (:func:`parity_rows`) and the loader's notes
(:func:`loader_notes`). The comparisons and the cost section are in
:mod:`studies.standard_collections.findings`. No prose here: the page writes the words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from studies.standard_collections.findings import bm25_input, report

#: The columns of the engines' parity table, as the results name them.
PARITY_KEYS = ("n_queries", "mean_jaccard", "identical_topk", "ndcg_a", "ndcg_b", "ndcg_diff")


def frame(results: Mapping, preferred: Iterable[str]) -> dict:
    """What the whole chapter is about: ``collections`` (those of ``preferred`` the results hold, in
    that order), ``methods`` and ``measures`` (in the results' order), ``ann_model`` (the model whose
    vectors the approximate index was checked on) and ``dense_models`` (the distinct models of the
    methods that search with one, in the methods' order)."""
    held = results["collections"]
    models = [d["model"] for d in results["methods"].values() if "model" in d]
    return {"collections": [c for c in preferred if c in held], "methods": list(results["methods"]),
            "measures": list(results["measures"]), "ann_model": results["provenance"]["parameters"]["ann_model"],
            "dense_models": list(dict.fromkeys(models))}


def collection_rows(results: Mapping, collections: Sequence[str]) -> list[dict]:
    """One row per collection of the table of collections: ``collection``, ``n_documents``,
    ``n_queries``, ``n_judged`` (queries with a judgment), ``excluded`` (how many queries were left
    out), ``excluded_reason`` (the note saying why) and ``graded`` (graded relevance, not binary)."""
    cols = results["collections"]
    return [{"collection": c, "n_documents": cols[c]["n_documents"], "n_queries": cols[c]["n_queries"],
             "n_judged": cols[c]["n_judged"], "excluded": cols[c]["excluded"]["count"],
             "excluded_reason": cols[c]["excluded"]["reason"], "graded": cols[c]["graded"]} for c in collections]


def method_rows(results: Mapping) -> list[dict]:
    """The methods compared, in the results' order: ``method`` and ``description`` (its note)."""
    return [{"method": m, "description": d} for m, d in results["methods"].items()]


def bm25_choice(results: Mapping, collections: Sequence[str]) -> dict:
    """Which BM25 goes into the fusion: ``rule`` (the note of the rule, the first collection's; every
    collection follows the same) and ``chosen`` (``[{"collection", "method"}]`` in ``collections``'
    order)."""
    cols = results["collections"]
    return {"rule": cols[collections[0]]["rrf_bm25_input"]["rule"] if collections else None,
            "chosen": [{"collection": c, "method": bm25_input(results, c)} for c in collections]}


def mean_rows(results: Mapping, collections: Sequence[str], methods: Sequence[str],
              measures: Sequence[str]) -> list[dict]:
    """One row per collection and method (collections outer): ``collection``, ``n_judged``,
    ``method``, and per measure its ``mean`` and its 95% ``interval`` (dicts by measure)."""
    rows = []
    for c in collections:
        r, n = report(results, c), results["collections"][c]["n_judged"]
        for m in methods:
            rows.append({"collection": c, "n_judged": n, "method": m,
                         "mean": {x: r.mean(m, x) for x in measures},
                         "interval": {x: r.interval(m, x) for x in measures}})
    return rows


def bars(results: Mapping, collections: Sequence[str], methods: Sequence[str], measure: str) -> dict:
    """The chart of ``measure`` by collection: ``values`` and ``intervals``, each ``{method: [one per
    collection, in order]}``."""
    reports = [report(results, c) for c in collections]
    return {"values": {m: [r.mean(m, measure) for r in reports] for m in methods},
            "intervals": {m: [r.interval(m, measure) for r in reports] for m in methods}}


def parity_rows(results: Mapping, collections: Sequence[str]) -> list[dict]:
    """The BM25 of the database against bm25s, one row per collection: ``collection`` and
    :data:`PARITY_KEYS` (queries compared, mean Jaccard of the top-k, queries with an identical top-k,
    the two nDCG@10 and their difference)."""
    cols = results["collections"]
    return [{"collection": c, **{k: cols[c]["parity"][k] for k in PARITY_KEYS}} for c in collections]


def loader_notes(results: Mapping, collections: Sequence[str]) -> list[dict]:
    """What the loader noted on each collection that has notes: ``[{"collection", "notes"}]``."""
    cols = results["collections"]
    return [{"collection": c, "notes": list(cols[c]["notes"])} for c in collections if cols[c]["notes"]]
