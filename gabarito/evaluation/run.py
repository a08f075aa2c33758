"""One evaluation run: a user's documents, their questions with known answers, one search setup.

:func:`run_evaluation` segments the documents, searches every question through the shared
pipeline (:mod:`gabarito.retrieval.pipeline`: first stage(s) -> RRF for ``hybrid`` -> second
reading when a reader is named) and returns the *run record* (a JSON-ready ``dict``):
provenance, the configuration, per-query rows and a summary. Saving it is
:func:`gabarito.evaluation.runlog.write_run`.

Conventions:

* Search runs over chunks (:mod:`gabarito.inputs.segment`), collapsed to documents (each document
  at the rank and score of its best chunk). Every list is searched to ``depth`` documents (by
  default :func:`~gabarito.evaluation.config.needed_depth`: the measures' largest cutoff, at least
  100) and cut to exactly that many before anything is scored, for every method alike
  (:mod:`gabarito.evaluation.depth`: the chunk depth grows from ``chunk_depth`` until each list holds
  ``depth`` documents or nothing is left); the first ``k`` documents are the returned ones.
  ``hybrid`` fuses the dense and the BM25 chunk lists (each as deep as the chunk depth) with RRF
  (constant ``rrf_k``) before collapsing, so its scores are RRF scores. Scores of different methods
  are not comparable with each other. The record's ``ranked_lists`` says how deep the lists are.
* With a reader, the first ``rerank_n`` chunks of each question are read again and reordered
  before collapsing to documents (``rerank_fuse``: the reader's order replaces the first stage's,
  or is fused with it by RRF or a convex combination); the chunks below ``rerank_n`` keep their
  order, after them; the cut to ``depth`` documents comes after the reading.
* Rows and summary: :mod:`gabarito.evaluation.rows`; engines: :mod:`gabarito.evaluation.engines`.
"""

from __future__ import annotations

import datetime as _dt
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from gabarito import __version__
from gabarito.errors import GabaritoError
from gabarito.evaluation.config import EvalConfig, _path_sha256, at_depth, config_hash, needed_depth
from gabarito.evaluation.depth import cut_run, list_lengths, search_to_depth, ties
from gabarito.evaluation.engines import open_retrievers
from gabarito.evaluation.rows import default_measures, grades_of, query_rows, summarize, summary_report
from gabarito.evaluation.runlog import RunRecord
from gabarito.core.runs import Qrels, Run
from gabarito.inputs.documents import corpus_sha256, evaluation_sha256
from gabarito.inputs.segment import collapse_to_documents, describe, segment
from gabarito.retrieval.fusion_functions import parse_fusion
from gabarito.retrieval.models import load_encoder
from gabarito.retrieval.models.fingerprint import fingerprint_parts, model_fingerprint
from gabarito.retrieval.pipeline import RRF, Pipeline, SecondReading, fuse_reading, parse_reading_fusion
from gabarito.retrieval.protocol import Queries
from gabarito.study.records import git_state, machine

Echo = Callable[[str], None]


def _echo_default(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _check_inputs(documents: Sequence, queries: Sequence) -> None:
    if not documents:
        raise GabaritoError("no documents to search")
    if not queries:
        raise GabaritoError("no queries to evaluate")
    doc_ids = {d.id for d in documents}
    seen: set[str] = set()
    for q in queries:
        if q.id in seen:
            raise GabaritoError(f"duplicate query id {q.id!r}")
        seen.add(q.id)
        for rid in q.relevant_ids:
            if rid not in doc_ids:
                raise GabaritoError(f"relevant id {rid!r} is not in the documents", record=q.id)
    if not any(q.relevant_ids for q in queries):
        raise GabaritoError("no query has a relevant id, so nothing can be measured")


def _encode(encoder, cache, chunks, queries, cfg: EvalConfig, echo: Echo, timings: dict):
    """Chunk vectors (through the vector cache) and query vectors (one batch, with the prefix)."""
    if cache is None:
        from gabarito.retrieval.models import EmbeddingCache

        cache = EmbeddingCache()
    t0 = time.perf_counter()
    vectors = np.asarray(cache.encode(encoder, [c.text for c in chunks], progress=True), dtype=np.float32)
    timings["encode_corpus_s"] = time.perf_counter() - t0
    report = {"hits": int(cache.hits), "misses": int(cache.misses)}
    echo(f"embedding cache: {report['hits']} hits, {report['misses']} misses ({len(chunks)} chunks, {cfg.model})")
    t0 = time.perf_counter()
    query_vectors = np.asarray(encoder.encode([encoder.query_prefix + q.query for q in queries], progress=True),
                               dtype=np.float32)
    timings["encode_queries_s"] = time.perf_counter() - t0
    return vectors, query_vectors, report


def _pipeline(cfg: EvalConfig, retrievers: dict, second: SecondReading | None) -> Pipeline:
    """dense | bm25 alone, or hybrid: dense + bm25 fused in Python, or ArcadeDB's own fusion."""
    if cfg.method == "hybrid" and cfg.fusion_in == "arcadedb":
        return Pipeline("hybrid", [retrievers["native"]], second=second)
    if cfg.method == "hybrid":
        fusion = parse_fusion(cfg.fusion) if cfg.fusion else RRF(cfg.rrf_k)
        return Pipeline("hybrid", [retrievers["dense"], retrievers["bm25"]], fusion=fusion, second=second)
    return Pipeline(cfg.method, [retrievers[cfg.method]], second=second)


def _reader(cfg: EvalConfig, reranker, device: str | None = None):
    if not cfg.reranker and reranker is None:
        return None
    from gabarito.retrieval.rerank import load_reranker

    if reranker is not None:
        return reranker
    return load_reranker(cfg.reranker, **({"device": device} if device is not None else {}))


def _measures_and_depth(cfg: EvalConfig, queries: Sequence) -> tuple[tuple, int]:
    """The run's named measures (by default from the judgments) as computed on its lists, and the
    documents each list holds (:func:`~gabarito.evaluation.config.needed_depth`)."""
    measures = tuple(cfg.measures) if cfg.measures is not None else default_measures(queries)
    depth = needed_depth(cfg.k, measures, cfg.depth)
    return (at_depth(measures, depth) if measures else ()), depth


def run_evaluation(documents: Iterable, queries: Iterable, config: EvalConfig, *, encoder=None,
                   cache=None, arcadedb_url: str | None = None, db_dir: str | Path | None = None,
                   documents_path: str | Path | None = None, evaluation_path: str | Path | None = None,
                   echo: Echo | None = _echo_default, reranker=None, device: str | None = None) -> dict:
    """Search every query and return the run record (see the module docstring).

    ``encoder`` (anything with the :class:`gabarito.retrieval.models.TextEncoder` interface) replaces
    loading ``config.model``; its ``model_id`` must equal ``config.model``. ``cache`` is an
    :class:`gabarito.retrieval.models.EmbeddingCache` (the default one when ``None``). ``arcadedb_url``
    and ``db_dir`` choose the ArcadeDB server (the embedded one lives under ``db_dir``). ``echo``
    receives progress lines (None: silent). ``reranker`` (a reader object) replaces loading
    ``config.reranker``. ``device`` is where the models run (``auto``: the GPU when torch sees one,
    :func:`gabarito.retrieval.device.choose_device`); it is recorded with each model's provenance and
    never changes the run's id.
    """
    started = time.perf_counter()
    echo = echo or (lambda _text: None)
    cfg = config.effective()
    if evaluation_path is None:
        evaluation_path = getattr(queries, "path", None)
    skipped = list(getattr(queries, "skipped", None) or ())
    documents, queries = list(documents), list(queries)
    _check_inputs(documents, queries)
    measures, depth = _measures_and_depth(cfg, queries)
    moment = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    corpus_sha, eval_sha = corpus_sha256(documents), evaluation_sha256(queries)
    run_id = f"{moment:%Y%m%d-%H%M%S}-{config_hash(cfg, corpus_sha, eval_sha)[:8]}"

    chunks = segment(documents, cfg.segmentation, prefix_title=cfg.prefix_title)
    if not chunks:
        raise GabaritoError(f"segmentation {cfg.segmentation!r} produced no chunks")
    chunks_by_id = {c.id: c for c in chunks}
    timings = {"encode_corpus_s": 0.0, "encode_queries_s": 0.0, "index_s": 0.0, "search_s": 0.0}
    asked = Queries([q.id for q in queries], [q.query for q in queries])
    vectors = model_prov = cache_report = None
    if cfg.uses_vectors:
        if encoder is None:
            encoder = load_encoder(cfg.model, **({"device": device} if device is not None else {}))
        elif encoder.model_id != cfg.model:
            raise GabaritoError(f"the encoder given is {encoder.model_id!r} but the config names {cfg.model!r}")
        vectors, query_vectors, cache_report = _encode(encoder, cache, chunks, queries, cfg, echo, timings)
        asked.vectors_by_model[encoder.model_id] = query_vectors
        model_prov = dict(encoder.provenance())
        model_prov["fingerprint"] = model_fingerprint(encoder)  # weights + every setting that changes a vector
        model_prov["settings"] = fingerprint_parts(encoder)["settings"]  # what compare names when it differs

    reader = _reader(cfg, reranker, device)
    t0 = time.perf_counter()
    with open_retrievers(chunks, vectors, encoder, model_prov, cfg, url=arcadedb_url, db_dir=db_dir,
                         echo=echo) as (retrievers, engine_info):
        timings["index_s"] = time.perf_counter() - t0
        first = _pipeline(cfg, retrievers, None)
        t0 = time.perf_counter()
        run, chunk_depth = search_to_depth(lambda d: first.search(asked, d), depth, cfg.chunk_depth or depth,
                                           len(chunks), chunks_by_id, single_stage=cfg.method != "hybrid")
        timings["search_s"] = time.perf_counter() - t0
    if reader is not None:
        t0 = time.perf_counter()
        read = SecondReading(reader, {c.id: c.text for c in chunks}, cfg.rerank_n)(asked, run)
        how, weight = parse_reading_fusion(cfg.rerank_fuse)
        run = read if how == "replace" else fuse_reading(run, read, cfg.rerank_n, how=how, weight=weight)
        timings["rerank_s"] = time.perf_counter() - t0
    run = cut_run(run, chunks_by_id, depth)  # every method cut to the same document depth before scoring
    rows = query_rows(queries, run, chunks_by_id, cfg.k, measures)
    ranked = {q.id: collapse_to_documents(run[q.id], chunks_by_id) for q in queries}  # depth documents each
    lists = {qid: [doc for doc, _ in pairs] for qid, pairs in ranked.items()}
    judgments = {q.id: grades_of(q) for q in queries}
    t0 = time.perf_counter()
    # intervals: part of the time a user waits; the summary is the scorer's Report, one per group
    summary = summarize(rows, cfg.k, measures=measures, lists=lists, judgments=judgments)
    report = summary_report(rows, cfg.k, lists, judgments, measures=measures)
    timings["summary_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - started
    return _record(dict(
        run_id=run_id, moment=moment, cfg=cfg, model_prov=model_prov, reader=reader, engine_info=engine_info,
        corpus_sha=corpus_sha, documents_path=documents_path, documents=documents,
        evaluation_path=evaluation_path, eval_sha=eval_sha, skipped=skipped, chunks=chunks,
        cache_report=cache_report, timings=timings, rows=rows, measures=measures, summary=summary,
        report=report, ranked=Run(ranked), qrels=Qrels(judgments), lists=lists, depth=depth,
        chunk_depth=chunk_depth))


def as_written(run: Run, lists: dict[str, list[str]]) -> bool:
    """Whether the TREC file of ``run`` (scores to 6 decimals, read back score descending, ties by
    doc id) ranks every query's documents in the order they were scored (``lists``): false when
    two scores equal after rounding, or tied, come back in another order."""
    for qid, pairs in run.items():
        back = sorted(((doc, float(f"{score:.6f}")) for doc, score in pairs), key=lambda p: (-p[1], p[0]))
        if [doc for doc, _ in back] != lists[qid]:
            return False
    return True


def _record(v: dict) -> RunRecord:
    """The run record (JSON-ready) from the values of one run; it carries the run's ranked document
    lists and judgments (``.ranked``, ``.qrels``) for :func:`~gabarito.evaluation.runlog.write_run`."""
    cfg, timings = v["cfg"], {name: round(value, 4) for name, value in v["timings"].items()}
    return RunRecord({
        "run_id": v["run_id"],
        "date": v["moment"].isoformat(),
        "gabarito_version": __version__,
        "git": git_state(),
        "machine": machine(),
        "config": asdict(cfg),
        "segmentation": describe(cfg.segmentation, prefix_title=cfg.prefix_title),
        "model": v["model_prov"],
        "reranker": dict(v["reader"].provenance()) if v["reader"] is not None else None,
        "engine": v["engine_info"],
        "corpus_sha256": v["corpus_sha"],
        "documents_path": str(v["documents_path"]) if v["documents_path"] is not None else None,
        "n_documents": len(v["documents"]),
        "evaluation_path": str(v["evaluation_path"]) if v["evaluation_path"] is not None else None,
        "evaluation_file_sha256": _path_sha256(v["evaluation_path"]),
        "evaluation_sha256": v["eval_sha"],
        "evaluation_skipped": v["skipped"],
        "n_chunks": len(v["chunks"]),
        "cache": v["cache_report"],
        "timings": timings,
        "measures": list(v["measures"]),
        "summary": v["summary"],
        "report": v["report"].to_dict() if v["report"] is not None else None,
        "ranked_lists": {"depth": v["depth"], "chunk_depth": v["chunk_depth"],
                         "documents": sum(len(x) for x in v["lists"].values()), **list_lengths(v["lists"]),
                         "order_as_scored": as_written(v["ranked"], v["lists"]),
                         "ties": ties(v["ranked"])},
        "per_query": v["rows"],
    }, ranked=v["ranked"], qrels=v["qrels"])
