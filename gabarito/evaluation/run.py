"""One evaluation run: a user's documents, their questions with known answers, one search setup.

:func:`run_evaluation` segments the documents, searches every question with the configured
method and engine, and returns the *run record* (a JSON-ready ``dict``): provenance, the
configuration, per-query rows and a summary. :func:`write_run` saves it (``results.csv``,
``run.json`` and a line of the JSONL log) all or nothing.

Conventions:

* Search runs over chunks (:mod:`gabarito.inputs.segment`). The best ``chunk_depth`` chunks are
  retrieved, collapsed to documents (each document at the rank and score of its best chunk)
  and the first ``k`` documents are kept. ``hybrid`` fuses the dense and the BM25 chunk lists
  (each ``chunk_depth`` deep) with RRF (constant ``rrf_k``) before collapsing, so its scores
  are RRF scores. Scores of different methods are not comparable with each other.
* A query is *answerable* when its relevant ids are not empty. ``hit@n`` is whether a relevant
  document is among the first ``n`` returned (``None`` when ``n > k``: a run that kept fewer
  documents cannot tell); ``rr`` is 1/rank of the first relevant document, 0 when none is in
  the top ``k``. Both are ``None`` for unanswerable queries, which are left out of every
  accuracy figure; their ``top_score`` is kept in the summary, to choose a score threshold.
* ``false_positive`` is the top-1 document when it is not relevant (for an unanswerable query:
  whatever came first), else ``""``.
* Settings that a method does not use are recorded as ``None`` (``model`` for ``bm25``,
  ``analyzer`` for ``dense``), so that they neither change the run id nor count as a
  difference in :mod:`gabarito.evaluation.compare`.
* ``analyzer`` (BM25 only): ``standard`` is lower-cased words with no stemming and no stop
  words, on both engines; ``portuguese`` and ``english`` are Lucene's analyzers (stemming and
  stop words) and need ``engine="arcadedb"``: the memory engine's BM25 does no stemming.
* ArcadeDB: one database per index content (``eval_<12 hex>`` of the chunks, the model and
  its weights, and the analyzer), holding a type ``Chunk`` with the text field ``text``. It is
  reused when it already holds exactly those chunks, else (re)built; it is warmed up before
  searching. Its vector search is approximate (HNSW, INT8), unlike the memory engine's.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from gabarito import __version__
from gabarito.inputs.documents import corpus_sha256, evaluation_sha256
from gabarito.errors import GabaritoError
from gabarito.retrieval.fusion import rrf
from gabarito.hashing import sha256_file, sha256_text
from gabarito.study.records import append_jsonl, git_state, machine
from gabarito.inputs.segment import Chunk, collapse_to_documents, describe, segment
from gabarito.measure.stats import DEFAULT_SEED, bootstrap_ci

__all__ = [
    "DEFAULT_MODEL",
    "METHODS",
    "ENGINES",
    "ANALYZERS",
    "EvalConfig",
    "run_evaluation",
    "summarize",
    "results_csv",
    "write_run",
    "unique_run_id",
    "format_summary",
]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
METHODS = ("dense", "bm25", "hybrid")
ENGINES = ("memory", "arcadedb")
#: The analyzers offered for BM25 and the Lucene class each one is on ArcadeDB (None: its default,
#: the StandardAnalyzer, which lower-cases and neither stems nor drops stop words).
ANALYZERS = {
    "standard": None,
    "portuguese": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "english": "org.apache.lucene.analysis.en.EnglishAnalyzer",
}
#: hit@n reported per query (and as top-n accuracy in the summary).
HIT_AT = (1, 3, 5)
#: The CSV columns of ``results.csv``, in order.
CSV_COLUMNS = ("id", "query", "type", "severity", "answerable", "expected", "returned",
               "hit@1", "hit@3", "hit@5", "rr", "false_positive", "top_score", "top_segment")
ARCADE_TYPE = "Chunk"
ARCADE_FIELD = "text"
_NO_MODEL = "none (bm25 only)"
_INDEX_SCHEMA = 1  # bump when what is stored in an evaluation database changes

Echo = Callable[[str], None]


@dataclass(frozen=True)
class EvalConfig:
    """What is being measured. :meth:`effective` validates it and blanks unused settings."""

    segmentation: str = "section"
    prefix_title: bool = True
    method: str = "dense"
    model: str | None = DEFAULT_MODEL
    engine: str = "memory"
    analyzer: str | None = "standard"
    k: int = 10
    chunk_depth: int = 50
    rrf_k: int = 60
    label: str = ""
    reranker: str | None = None
    rerank_n: int = 20

    @property
    def uses_vectors(self) -> bool:
        return self.method in ("dense", "hybrid")

    @property
    def uses_text(self) -> bool:
        return self.method in ("bm25", "hybrid")

    def effective(self) -> "EvalConfig":
        """The validated config: canonical segmentation spec, ``None`` for unused settings.

        Raises a one-line :class:`GabaritoError` for anything that cannot run."""
        if self.method not in METHODS:
            raise GabaritoError(f"unknown method {self.method!r}; valid: {', '.join(METHODS)}")
        if self.engine not in ENGINES:
            raise GabaritoError(f"unknown engine {self.engine!r}; valid: {', '.join(ENGINES)}")
        spec = describe(self.segmentation)["spec"]  # raises on a bad spec
        for name in ("k", "chunk_depth", "rrf_k", "rerank_n"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise GabaritoError(f"{name} must be a whole number, not {value!r}")
        if self.k < 1:
            raise GabaritoError(f"k must be at least 1, not {self.k}")
        if self.chunk_depth < self.k:
            raise GabaritoError(f"chunk_depth ({self.chunk_depth}) must be at least k ({self.k}): "
                                f"fewer chunks than k cannot fill k documents")
        if self.rrf_k < 0:
            raise GabaritoError(f"rrf_k must be >= 0, not {self.rrf_k}")
        model = None
        if self.uses_vectors:
            if not isinstance(self.model, str) or not self.model.strip():
                raise GabaritoError(f"method {self.method!r} needs a model id")
            model = self.model.strip()
        analyzer = None
        if self.uses_text:
            analyzer = (self.analyzer or "standard").strip().lower()
            if analyzer not in ANALYZERS:
                raise GabaritoError(f"unknown analyzer {self.analyzer!r}; valid: {', '.join(ANALYZERS)}")
            if self.engine == "memory" and analyzer != "standard":
                raise GabaritoError(f"analyzer {analyzer!r} needs --engine arcadedb: the memory engine's BM25 "
                                    f"does no stemming (use --analyzer standard there)")
        if self.rerank_n < 1:
            raise GabaritoError(f"rerank_n must be at least 1, not {self.rerank_n}")
        reranker = (self.reranker or "").strip() or None
        return replace(self, segmentation=spec, prefix_title=bool(self.prefix_title), model=model,
                       analyzer=analyzer, label=str(self.label or ""), reranker=reranker,
                       rerank_n=self.rerank_n if reranker else 20)


# --- helpers ---------------------------------------------------------------------------------

def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def config_hash(config: EvalConfig, corpus_sha: str, evaluation_sha: str) -> str:
    """sha256 of what determines a run's results: the effective config (label aside), the
    corpus and the evaluation."""
    cfg = asdict(config)
    cfg.pop("label", None)
    return sha256_text(_canonical({"config": cfg, "corpus": corpus_sha, "evaluation": evaluation_sha}))


def _path_sha256(path: str | Path | None) -> str | None:
    """sha256 of an evaluation file; for a BEIR folder, of its queries and qrels files."""
    if path is None:
        return None
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    if path.is_dir():
        files = [p for p in [path / "queries.jsonl", *sorted((path / "qrels").glob("*.tsv"))] if p.is_file()]
        return sha256_text(_canonical({p.relative_to(path).as_posix(): sha256_file(p) for p in files}))
    return None


def _echo_default(text: str) -> None:
    print(text, flush=True)


def _load_encoder(model_id: str):
    try:
        from gabarito.retrieval.models import load_encoder
    except ImportError:  # an older models.py without the factory
        from gabarito.retrieval.models import Encoder as load_encoder
    return load_encoder(model_id)


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


# --- engines ---------------------------------------------------------------------------------

class _MemoryEngine:
    """Exact cosine search and plain BM25 (no stop words, no stemming) over the chunks."""

    def __init__(self, chunks: Sequence[Chunk], vectors: np.ndarray | None, model_id: str | None,
                 uses_text: bool):
        from gabarito.retrieval.memory import BM25, ExactVectors

        ids = [c.id for c in chunks]
        self.vectors = ExactVectors(ids, vectors, model_id=model_id or "") if vectors is not None else None
        self.text = BM25({c.id: c.text for c in chunks}, stop=frozenset()) if uses_text else None
        self.info = {"name": "memory", "version": f"gabarito {__version__}"}

    def __enter__(self) -> "_MemoryEngine":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def dense(self, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        return self.vectors.knn(vector, depth)

    def bm25(self, text: str, depth: int) -> list[tuple[str, float]]:
        return self.text.search(text, depth)


class _ArcadeEngine:
    """The chunks in an ArcadeDB database of their own (see the module docstring)."""

    def __init__(self, chunks: Sequence[Chunk], vectors: np.ndarray | None, model: dict | None,
                 analyzer: str | None, *, url: str | None, db_dir: str | Path | None, echo: Echo):
        self.chunks, self.vectors, self.model, self.echo = chunks, vectors, model, echo
        self.analyzer_class = ANALYZERS.get(analyzer) if analyzer else None
        self.url, self.db_dir = url, db_dir
        chunks_sha = sha256_text(_canonical([[c.id, c.text] for c in chunks]))
        self.key = sha256_text(_canonical({
            "schema": _INDEX_SCHEMA, "chunks": chunks_sha,
            "model": model["model_id"] if model else None,
            "weights": model.get("weights_sha256") if model else None,
            "dim": int(vectors.shape[1]) if vectors is not None else 1,
            "analyzer": self.analyzer_class,
        }))
        self.database = f"eval_{self.key[:12]}"
        self.conn = None
        self.index = None
        self.info: dict[str, Any] = {"name": "arcadedb"}

    def __enter__(self) -> "_ArcadeEngine":
        from gabarito.retrieval.arcadedb import ArcadeIndex, connect
        from gabarito.retrieval.models import cache_dir

        root = self.db_dir if self.db_dir is not None else cache_dir() / "arcadedb-evaluate"
        self.conn = connect(self.url, root_dir=root, database=self.database)
        try:
            client = self.conn.client
            version = self.conn.server.version if self.conn.server is not None else client.server_version()
            self.index = ArcadeIndex(client, ARCADE_TYPE)
            state = self._reuse_or_build()
            self.echo(f"ArcadeDB database {self.database}: index {state} ({len(self.chunks)} chunks)")
            warm = self.vectors[0] if self.vectors is not None else None
            self.index.warm_up(warm, k=10)
            self.info = {"name": "arcadedb", "version": version,
                         "server": "embedded" if self.conn.server is not None else client.url,
                         "database": self.database, "index": state,
                         "analyzer_class": self.analyzer_class}
        except BaseException:
            self.conn.close()
            raise
        return self

    def _reuse_or_build(self) -> str:
        index = self.index
        if index.exists():
            info = index.info()
            if info.get("index_key") == self.key and index.count() == len(self.chunks):
                return "reused"
            index.drop()  # half built, or built by another version: start again
        if self.vectors is not None:
            vectors, dim, model_id = self.vectors, int(self.vectors.shape[1]), self.model["model_id"]
        else:  # BM25 only: the schema wants a vector per record; a constant one costs nothing
            vectors, dim, model_id = np.ones((len(self.chunks), 1), dtype=np.float32), 1, _NO_MODEL
        kwargs = {"analyzer": self.analyzer_class} if self.analyzer_class is not None else {}
        index.create([ARCADE_FIELD], dim, model_id, extra={"index_key": self.key}, **kwargs)
        rows = [{"doc_id": c.id, ARCADE_FIELD: c.text} for c in self.chunks]
        index.ingest(rows, vectors, progress=sys.stderr.isatty())
        return "built"

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def dense(self, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        return self.index.knn(vector, depth, model_id=self.model["model_id"])

    def bm25(self, text: str, depth: int) -> list[tuple[str, float]]:
        return self.index.bm25(text, depth)


# --- the run ---------------------------------------------------------------------------------

def _search(engine, config: EvalConfig, text: str, vector: np.ndarray | None) -> list[tuple[str, float]]:
    depth = config.chunk_depth
    if config.method == "dense":
        return engine.dense(vector, depth)
    if config.method == "bm25":
        return engine.bm25(text, depth)
    dense, words = engine.dense(vector, depth), engine.bm25(text, depth)
    return rrf([[c for c, _ in dense], [c for c, _ in words]], rrf_k=config.rrf_k, depth=depth)


def _query_row(query, ranked_chunks: list[tuple[str, float]], chunks_by_id: dict[str, Chunk],
               k: int) -> dict:
    docs = collapse_to_documents(ranked_chunks, chunks_by_id)[:k]
    best_chunk: dict[str, str] = {}
    for chunk_id, _ in ranked_chunks:
        best_chunk.setdefault(chunks_by_id[chunk_id].doc_id, chunk_id)
    returned = [{"id": d, "score": float(s), "segment": best_chunk[d]} for d, s in docs]
    ids = [r["id"] for r in returned]
    expected = list(query.relevant_ids)
    answerable = bool(expected)
    relevant = set(expected)
    row: dict[str, Any] = {
        "id": query.id, "query": query.query, "type": query.type, "severity": query.severity,
        "answerable": answerable, "expected": expected, "returned": returned,
    }
    for n in HIT_AT:
        row[f"hit@{n}"] = (any(d in relevant for d in ids[:n]) if n <= k else None) if answerable else None
    rank = next((i for i, d in enumerate(ids, start=1) if d in relevant), None)
    row["rr"] = (1.0 / rank if rank else 0.0) if answerable else None
    row["false_positive"] = ids[0] if ids and ids[0] not in relevant else ""
    row["top_score"] = returned[0]["score"] if returned else None
    row["top_segment"] = returned[0]["segment"] if returned else ""
    return row


def _reranked(query: str, ranked: list[tuple[str, float]], chunks_by_id: dict[str, Chunk], reader,
              n: int) -> list[tuple[str, float]]:
    """Second reading of the first ``n`` chunks; the rest follow in their order, scored below
    every re-read chunk (so scores stay finite and the order is the one :func:`rerank` gives)."""
    from gabarito.retrieval.rerank import rerank

    out = rerank(query, [(cid, chunks_by_id[cid].text) for cid, _ in ranked], reader, n=n)
    head = [(cid, float(s)) for cid, s in out if np.isfinite(s)]
    floor = min((s for _, s in head), default=0.0) - 1.0
    tail = [(cid, floor - i * 1e-6) for i, (cid, s) in enumerate(out[len(head):])]
    return head + tail


def _measure(values: list[float], seed: int) -> dict | None:
    if not values:
        return None
    low, high = bootstrap_ci(values, seed=seed)
    return {"value": float(np.mean(values)), "ci95": [low, high]}


def _measures(rows: Sequence[dict], k: int, seed: int) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    out: dict[str, Any] = {"n_queries": len(rows), "n_answerable": len(answerable),
                           "n_unanswerable": len(rows) - len(answerable)}
    for n in HIT_AT:
        out[f"top{n}"] = _measure([float(r[f"hit@{n}"]) for r in answerable], seed) if n <= k else None
    out["mrr"] = _measure([float(r["rr"]) for r in answerable], seed)
    return out


def summarize(rows: Sequence[dict], k: int, *, seed: int = DEFAULT_SEED) -> dict:
    """Accuracy over the answerable queries and the top scores of the unanswerable ones.

    ``top1``/``top3``/``top5`` (share of answerable queries with a relevant document in the
    top n) and ``mrr`` (mean RR@k) are each ``{"value", "ci95": [low, high]}`` (percentile
    bootstrap, fixed seed), or ``None`` when there is no answerable query or ``n > k``; with
    ``n_queries``/``n_answerable``/``n_unanswerable``, the same again per ``type`` in
    ``by_type`` and per ``severity`` in ``by_severity``; ``unanswerable_top_scores`` lists
    ``{"id", "top_score", "top_doc"}`` for each unanswerable query."""
    out = {"k": k, **_measures(rows, k, seed)}
    for key in ("type", "severity"):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r[key], []).append(r)
        out[f"by_{key}"] = {name: _measures(group, k, seed) for name, group in groups.items()}
    out["unanswerable_top_scores"] = [
        {"id": r["id"], "top_score": r["top_score"], "top_doc": r["returned"][0]["id"] if r["returned"] else ""}
        for r in rows if not r["answerable"]
    ]
    return out


def run_evaluation(documents: Iterable, queries: Iterable, config: EvalConfig, *, encoder=None,
                   cache=None, arcadedb_url: str | None = None, db_dir: str | Path | None = None,
                   documents_path: str | Path | None = None, evaluation_path: str | Path | None = None,
                   echo: Echo | None = _echo_default, reranker=None) -> dict:
    """Search every query and return the run record (see the module docstring).

    ``encoder`` (anything with the :class:`gabarito.retrieval.models.TextEncoder` interface) replaces
    loading ``config.model``; its ``model_id`` must equal ``config.model``. ``cache`` is an
    :class:`gabarito.retrieval.models.EmbeddingCache` (the default one when ``None``). ``arcadedb_url``
    and ``db_dir`` choose the ArcadeDB server (see :func:`gabarito.retrieval.arcadedb.connect`;
    the embedded one lives under ``db_dir``). ``echo`` receives progress lines (None: silent).
    With ``config.reranker`` set (or a ``reranker`` object given, see :mod:`gabarito.retrieval.rerank`),
    the first ``config.rerank_n`` chunks of each question are read again and reordered before
    collapsing to documents; the chunks below ``rerank_n`` keep their order, after them.
    """
    started = time.perf_counter()
    echo = echo or (lambda _text: None)
    cfg = config.effective()
    if evaluation_path is None:
        evaluation_path = getattr(queries, "path", None)
    skipped = list(getattr(queries, "skipped", None) or ())
    documents, queries = list(documents), list(queries)
    _check_inputs(documents, queries)
    moment = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    corpus_sha, eval_sha = corpus_sha256(documents), evaluation_sha256(queries)
    run_id = f"{moment:%Y%m%d-%H%M%S}-{config_hash(cfg, corpus_sha, eval_sha)[:8]}"

    chunks = segment(documents, cfg.segmentation, prefix_title=cfg.prefix_title)
    if not chunks:
        raise GabaritoError(f"segmentation {cfg.segmentation!r} produced no chunks")
    chunks_by_id = {c.id: c for c in chunks}
    timings = {"encode_corpus_s": 0.0, "encode_queries_s": 0.0, "index_s": 0.0, "search_s": 0.0}

    vectors = query_vectors = model_prov = cache_report = None
    if cfg.uses_vectors:
        if encoder is None:
            encoder = _load_encoder(cfg.model)
        elif encoder.model_id != cfg.model:
            raise GabaritoError(f"the encoder given is {encoder.model_id!r} but the config names {cfg.model!r}")
        if cache is None:
            from gabarito.retrieval.models import EmbeddingCache

            cache = EmbeddingCache()
        t0 = time.perf_counter()
        vectors = np.asarray(cache.encode(encoder, [c.text for c in chunks], progress=sys.stderr.isatty()),
                             dtype=np.float32)
        timings["encode_corpus_s"] = time.perf_counter() - t0
        cache_report = {"hits": int(cache.hits), "misses": int(cache.misses)}
        echo(f"embedding cache: {cache_report['hits']} hits, {cache_report['misses']} misses "
             f"({len(chunks)} chunks, {cfg.model})")
        t0 = time.perf_counter()
        query_vectors = np.asarray(encoder.encode([encoder.query_prefix + q.query for q in queries]),
                                   dtype=np.float32)
        timings["encode_queries_s"] = time.perf_counter() - t0
        model_prov = dict(encoder.provenance())

    t0 = time.perf_counter()
    if cfg.engine == "memory":
        engine = _MemoryEngine(chunks, vectors, cfg.model, cfg.uses_text)
    else:
        engine = _ArcadeEngine(chunks, vectors, model_prov, cfg.analyzer, url=arcadedb_url, db_dir=db_dir,
                               echo=echo)
    with engine:
        timings["index_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ranked = [_search(engine, cfg, q.query, query_vectors[i] if query_vectors is not None else None)
                  for i, q in enumerate(queries)]
        timings["search_s"] = time.perf_counter() - t0
    reranker_prov = None
    if cfg.reranker or reranker is not None:
        from gabarito.retrieval.rerank import load_reranker

        reader = reranker if reranker is not None else load_reranker(cfg.reranker)
        reranker_prov = dict(reader.provenance())
        t0 = time.perf_counter()
        ranked = [_reranked(q.query, r, chunks_by_id, reader, cfg.rerank_n) for q, r in zip(queries, ranked)]
        timings["rerank_s"] = time.perf_counter() - t0
    rows = [_query_row(q, r, chunks_by_id, cfg.k) for q, r in zip(queries, ranked, strict=True)]
    timings["total_s"] = time.perf_counter() - started
    timings = {name: round(value, 4) for name, value in timings.items()}

    return {
        "run_id": run_id,
        "date": moment.isoformat(),
        "gabarito_version": __version__,
        "git": git_state(),
        "machine": machine(),
        "config": asdict(cfg),
        "segmentation": describe(cfg.segmentation, prefix_title=cfg.prefix_title),
        "model": model_prov,
        "reranker": reranker_prov,
        "engine": engine.info,
        "corpus_sha256": corpus_sha,
        "documents_path": str(documents_path) if documents_path is not None else None,
        "n_documents": len(documents),
        "evaluation_path": str(evaluation_path) if evaluation_path is not None else None,
        "evaluation_file_sha256": _path_sha256(evaluation_path),
        "evaluation_sha256": eval_sha,
        "evaluation_skipped": skipped,
        "n_chunks": len(chunks),
        "cache": cache_report,
        "timings": timings,
        "summary": summarize(rows, cfg.k),
        "per_query": rows,
    }


# --- writing ---------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def results_csv(record: dict) -> str:
    """The spreadsheet: one row per query, columns :data:`CSV_COLUMNS`. ``returned`` is the
    top-k as ``id (0.833); id (0.412); ...`` (3 significant digits), ``expected`` joins the
    relevant ids with ``; ``, hits are 1/0 (blank when not defined)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in record["per_query"]:
        returned = "; ".join(f"{x['id']} ({x['score']:.3g})" for x in r["returned"])
        top = r["top_score"]
        writer.writerow([r["id"], r["query"], r["type"], r["severity"], _cell(r["answerable"]),
                         "; ".join(r["expected"]), returned, _cell(r["hit@1"]), _cell(r["hit@3"]),
                         _cell(r["hit@5"]), _cell(r["rr"]), r["false_positive"],
                         "" if top is None else f"{top:.4g}", r["top_segment"]])
    return buf.getvalue()


def write_run(record: dict, out_dir: str | Path, log_path: str | Path) -> dict[str, Path]:
    """Write ``out_dir/results.csv`` (UTF-8 with a byte-order mark, so spreadsheets read the
    accents), ``out_dir/run.json`` and append the record to the JSONL log at ``log_path``.

    All or nothing: everything is rendered first, the two files are written in a temporary
    folder renamed into place as ``out_dir``, then the log is rewritten atomically
    (:func:`gabarito.study.records.append_jsonl`); if that fails, ``out_dir`` is removed again. An
    ``out_dir`` that already holds files is refused. Returns the three paths."""
    out_dir, log_path = Path(out_dir), Path(log_path)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise GabaritoError("already holds a run or other files; choose another output folder", path=out_dir)
    try:
        csv_bytes = results_csv(record).encode("utf-8-sig")
        json_bytes = (json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise GabaritoError(f"the run record cannot be saved ({exc})", path=out_dir) from exc
    stage: Path | None = None
    placed = False
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
        for name, data in (("results.csv", csv_bytes), ("run.json", json_bytes)):
            with open(stage / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(stage, out_dir)
        placed = True
        append_jsonl(log_path, record)
    except BaseException as exc:
        if placed:
            shutil.rmtree(out_dir, ignore_errors=True)
        elif stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        if isinstance(exc, OSError):
            raise GabaritoError(f"cannot write the run ({exc.strerror or exc})",
                                path=exc.filename or out_dir) from exc
        raise
    return {"csv": out_dir / "results.csv", "json": out_dir / "run.json", "log": log_path}


def _logged_ids(log_path: Path) -> set[str]:
    if not log_path.exists():
        return set()
    ids = set()
    for line in log_path.read_text(encoding="utf-8").splitlines():
        try:
            ids.add(json.loads(line).get("run_id"))
        except (json.JSONDecodeError, AttributeError):
            continue
    return ids


def unique_run_id(record: dict, log_path: str | Path, runs_dir: str | Path) -> str:
    """Give the record a run id that is neither in the log nor a folder of ``runs_dir`` (two
    runs of one config in the same second get ``-2``, ``-3``, ...); returns it."""
    log_path, runs_dir = Path(log_path), Path(runs_dir)
    taken = _logged_ids(log_path)
    base = record["run_id"]
    candidate, n = base, 1
    while candidate in taken or (runs_dir / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    record["run_id"] = candidate
    return candidate


# --- printing --------------------------------------------------------------------------------

def _fmt(measure: dict | None) -> str:
    if measure is None:
        return "-"
    low, high = measure["ci95"]
    return f"{measure['value']:.3f} [{low:.3f}, {high:.3f}]"


def _group_table(title: str, groups: dict) -> list[str]:
    lines = [f"{title:<16} {'n':>6} {'top1':>7} {'top3':>7} {'top5':>7} {'MRR':>7}"]
    for name, g in groups.items():
        cells = ["-" if g[key] is None else f"{g[key]['value']:.3f}" for key in ("top1", "top3", "top5", "mrr")]
        n = f"{g['n_answerable']}" + (f"+{g['n_unanswerable']}u" if g["n_unanswerable"] else "")
        lines.append(f"  {name or '(none)':<14} {n:>6} " + " ".join(f"{c:>7}" for c in cells))
    return lines


def format_summary(record: dict) -> str:
    """A plain-text summary of a run record, for the terminal."""
    s, cfg = record["summary"], record["config"]
    setup = [f"method {cfg['method']}", f"engine {cfg['engine']}", f"segmentation {cfg['segmentation']}"
             + ("" if cfg["prefix_title"] else " (no title prefix)")]
    if cfg["model"]:
        setup.append(f"model {cfg['model']}")
    if cfg["analyzer"]:
        setup.append(f"analyzer {cfg['analyzer']}")
    lines = [f"run {record['run_id']}" + (f" ({cfg['label']})" if cfg["label"] else ""),
             "  " + ", ".join(setup) + f", k {cfg['k']}",
             (f"  {record['n_documents']} documents, {record['n_chunks']} chunks; {s['n_queries']} queries "
              f"({s['n_answerable']} answerable, {s['n_unanswerable']} unanswerable)"), "",
             f"answerable queries (mean [95% bootstrap CI], n={s['n_answerable']}):"]
    for key, name in (("top1", "top-1 accuracy"), ("top3", "top-3 accuracy"), ("top5", "top-5 accuracy"),
                      ("mrr", f"MRR@{cfg['k']}")):
        lines.append(f"  {name:<16} {_fmt(s[key])}")
    lines += ["", *_group_table("by type", s["by_type"]), "", *_group_table("by severity", s["by_severity"])]
    if s["unanswerable_top_scores"]:
        scores = [u["top_score"] for u in s["unanswerable_top_scores"] if u["top_score"] is not None]
        answered = [r["top_score"] for r in record["per_query"]
                    if r["answerable"] and r["hit@1"] and r["top_score"] is not None]
        lines.append("")
        if scores:
            lines.append(f"unanswerable queries: top score median {float(np.median(scores)):.4g}, "
                         f"max {max(scores):.4g} (n={len(scores)})")
        if answered:
            lines.append(f"answerable, right at top-1: top score median {float(np.median(answered)):.4g}, "
                         f"min {min(answered):.4g} (n={len(answered)})")
    fp_answerable = sum(1 for r in record["per_query"] if r["false_positive"] and r["answerable"])
    fp_unanswerable = sum(1 for r in record["per_query"] if r["false_positive"] and not r["answerable"])
    lines.append(f"false positives at top-1: {fp_answerable} of {s['n_answerable']} answerable queries, "
                 f"{fp_unanswerable} of {s['n_unanswerable']} unanswerable (no score threshold applied)")
    t = record["timings"]
    lines.append(f"time: {t['total_s']:.1f}s (encode corpus {t['encode_corpus_s']:.1f}s, queries "
                 f"{t['encode_queries_s']:.1f}s, index {t['index_s']:.1f}s, search {t['search_s']:.2f}s)")
    return "\n".join(lines)
