"""The reranking study's methods as values (:mod:`gabarito.core.methods`): the first stages, the
readers, and the scorers whose scores the calibration measures. The scripts make their keys with
these functions, and the findings find a key of ``results.json`` among :func:`declared` -- no key is
taken apart to learn what it names."""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import Method, cross_encoder, first_stage, leaf, reread

#: Each first stage by the scorer its own top score is (what the calibration reads).
STAGE_SCORERS = {"dense MiniLM": "cosine MiniLM", "dense e5": "cosine e5", "bm25": "bm25", "rrf": "rrf",
                 "splade": "splade"}
#: MaxSim's score divided by the query's tokens (its scores grow with the query's length).
PER_TOKEN = {"maxsim MiniLM": "maxsim MiniLM per query token"}


def stage_scorer(stage: str) -> Method:
    """A first stage's own score, as the calibration names it: ``bm25 (first stage)``."""
    return first_stage(STAGE_SCORERS[stage])


def reader(name: str, model_id: str | None = None) -> Method:
    """A reader: a leaf by its name, or the cross-encoder of ``model_id``."""
    return cross_encoder(model_id) if model_id is not None else leaf(name)


def readers(results: Mapping) -> list[Method]:
    """The readers the study measured, in its order: the cross-encoder by the id it recorded."""
    ce = results.get("cross_encoder", {})
    measured = cross_encoder(ce["id"]) if ce.get("measured") else None
    return [measured if r == measured else leaf(r) for r in results["setup"]["readers"]]


def declared(results: Mapping, n: int) -> list[Method]:
    """Every method ``results`` names: first stages, readers, and the calibration's scorers (each
    first stage's own score; each reader, and MaxSim per query token, after the better dense
    stage's top ``n``)."""
    stages = [leaf(s) for s in results["setup"]["first_stages"]]
    better = leaf(results["setup"]["better_dense"])
    read = readers(results)
    scorers = [stage_scorer(s) for s in STAGE_SCORERS]
    scorers += [reread(r, better, n) for r in read]
    scorers += [reread(leaf(PER_TOKEN[r]), better, n) for r in read if r in PER_TOKEN]
    return stages + read + scorers
