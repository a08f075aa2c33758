"""The flagship's runs this study judges, by method (a value: :mod:`gabarito.core.methods`): the two
singles, and RRF of their top 10 and of their top 100. ``run_judgments.py`` reads the runs by these
keys and the findings find a key of ``results.json`` among them -- never parsed from its text."""

from __future__ import annotations

from gabarito.core.methods import fused, leaf

SINGLES = ("bm25", "vector")
#: Each judged method and its TREC run in ``case-studies/benchmark_rrf/runs``.
RUNS = {leaf("bm25"): "bm25.trec", leaf("vector"): "vector.trec",
        fused(10, SINGLES): "rrf_at_10.trec", fused(100, SINGLES): "rrf_at_100.trec"}
