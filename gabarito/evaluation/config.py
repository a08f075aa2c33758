"""What an evaluation run measures: :class:`EvalConfig`, its validation, and its hash.

Settings that a method does not use are recorded as ``None`` (``model`` for ``bm25``,
``analyzer`` for ``dense``), so that they neither change the run id nor count as a difference
in :mod:`gabarito.evaluation.compare`. ``analyzer`` (BM25 only): ``standard`` is lower-cased
words with no stemming and no stop words, on both engines; ``portuguese`` and ``english`` are
Lucene's analyzers (stemming and stop words) and need ``engine="arcadedb"``.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file, sha256_text
from gabarito.inputs.segment import describe
from gabarito.core.measures import Measure, parse_measures

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
#: The fewest documents a ranked list is searched to when ``depth`` is left to the measures.
MIN_DEPTH = 100



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
    #: chunks searched first (None: ``depth``); the search grows it until every question's list
    #: holds ``depth`` documents or no chunk is left (:func:`gabarito.evaluation.depth.search_to_depth`).
    chunk_depth: int | None = None
    #: documents each ranked list holds, searched to and cut to before scoring, for every method
    #: alike (None: :func:`needed_depth` of ``k`` and the measures, at least :data:`MIN_DEPTH`).
    depth: int | None = None
    rrf_k: int = 60
    label: str = ""
    reranker: str | None = None
    rerank_n: int = 20
    #: how the reader's order of the top ``rerank_n`` meets the first stage's
    #: (:func:`gabarito.retrieval.pipeline.parse_reading_fusion`): ``replace`` (the reader's order),
    #: ``rrf`` or ``convex:W``.
    rerank_fuse: str = "replace"
    #: measure names (:func:`gabarito.measure.metrics.evaluate`) reported beside top-k accuracy
    #: and MRR; None: nDCG@10, AP@100 and R@100 when any question has several relevant documents
    #: or graded judgments, else none.
    measures: tuple[str, ...] | None = None
    #: hybrid only: how the two lists are fused (:func:`gabarito.retrieval.fusion_functions.parse_fusion`:
    #: rrf, rrf:K, wrrf:K:W1,W2, linear:W, dbsf, combsum, combmnz; None = rrf with ``rrf_k``) and
    #: where: ``python`` (the pipeline's fusion stage) or ``arcadedb`` (the engine's ``vector.fuse``:
    #: rrf, rrf:K, linear:W, dbsf; needs ``engine="arcadedb"``).
    fusion: str | None = None
    fusion_in: str = "python"

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
        _check_label(str(self.label or ""))
        for name in ("k", "chunk_depth", "depth", "rrf_k", "rerank_n"):
            value = getattr(self, name)
            if value is None and name in ("chunk_depth", "depth"):
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise GabaritoError(f"{name} must be a whole number, not {value!r}")
        if self.k < 1:
            raise GabaritoError(f"k must be at least 1, not {self.k}")
        if self.chunk_depth is not None and self.chunk_depth < self.k:
            raise GabaritoError(f"chunk_depth ({self.chunk_depth}) must be at least k ({self.k}): "
                                f"fewer chunks than k cannot fill k documents")
        if self.depth is not None and self.depth < self.k:
            raise GabaritoError(f"depth ({self.depth}) must be at least k ({self.k}): a list of fewer "
                                f"documents cannot fill k")
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
        rerank_fuse = self._rerank_fuse(reranker)
        measures = tuple(parse_measures(self.measures)) if self.measures is not None else None
        if measures is not None and self.depth is not None:
            deep = [m for m in measures if m.cutoff is not None and m.cutoff > self.depth]
            if deep:
                raise GabaritoError(f"measure {deep[0]} needs lists of {deep[0].cutoff} documents, but --depth is "
                                    f"{self.depth}: ask for --depth {deep[0].cutoff} or measure "
                                    f"{deep[0].kind}@{self.depth}")
        fusion, fusion_in = self._fusion()
        return replace(self, measures=measures, fusion=fusion, fusion_in=fusion_in, segmentation=spec, prefix_title=bool(self.prefix_title), model=model,
                       analyzer=analyzer, label=str(self.label or ""), reranker=reranker,
                       rerank_n=self.rerank_n if reranker else 20, rerank_fuse=rerank_fuse)

    def _rerank_fuse(self, reranker: str | None) -> str:
        from gabarito.retrieval.pipeline import parse_reading_fusion

        spec = str(self.rerank_fuse or "replace").strip().lower()
        how, weight = parse_reading_fusion(spec)
        if how != "replace" and not reranker:
            raise GabaritoError(f"rerank_fuse {spec!r} needs a reranker (--reranker) to fuse with")
        return f"convex:{weight:g}" if how == "convex" else how


    def model_ids(self) -> list[str]:
        """The models an (effective) config loads, to be checked before any work: the encoder
        of ``dense``/``hybrid``, and the reader's model (``bi:<id>``, ``maxsim:<id>``,
        ``splade:<folder>``, or a cross-encoder id; plain ``splade`` is the packaged one)."""
        ids = [self.model] if self.uses_vectors and self.model else []
        if self.reranker:  # the specs of gabarito.retrieval.rerank.load_reranker
            kind, _, rest = self.reranker.partition(":")
            if kind in ("bi", "maxsim") and rest:
                ids.append(rest)
            elif kind == "splade":
                ids += [rest] if rest else []
            else:
                ids.append(self.reranker)
        return ids

    def _fusion(self) -> tuple[str | None, str]:
        """The validated (fusion, fusion_in); both blank for methods that fuse nothing."""
        if self.method != "hybrid":
            return None, "python"
        where = (self.fusion_in or "python").strip().lower()
        if where not in ("python", "arcadedb"):
            raise GabaritoError(f"--fusion-in must be python or arcadedb, not {self.fusion_in!r}")
        if where == "arcadedb" and self.engine != "arcadedb":
            raise GabaritoError("--fusion-in arcadedb needs --engine arcadedb (the fusion runs in the database)")
        spec = (self.fusion or "").strip().lower() or None
        if spec is not None:
            from gabarito.retrieval.fusion_functions import parse_fusion

            parse_fusion(spec)  # raises on a bad spec
            if where == "arcadedb" and spec.split(":")[0] not in ("rrf", "linear", "dbsf"):
                raise GabaritoError(f"ArcadeDB fuses with rrf, rrf:K, linear:W or dbsf, not {spec!r}")
        return spec, where


# --- helpers ---------------------------------------------------------------------------------

def _check_label(label: str) -> None:
    """Refuse a label holding a control or format character: an escape sequence would reach the
    terminal, a bidirectional override (U+202E) or an invisible character would show another text."""
    for c in label:
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") or ord(c) == 127:
            raise GabaritoError(f"--label holds a control character or a format one (U+{ord(c):04X}: an escape "
                                f"sequence, a right-to-left override or an invisible mark would show another "
                                f"text); use plain text")


def needed_depth(k: int, measures, depth: int | None = None) -> int:
    """The documents each ranked list must hold: ``depth`` when given, else the largest of ``k``,
    the measures' cutoffs and :data:`MIN_DEPTH`."""
    if depth is not None:
        return int(depth)
    cutoffs = [Measure.parse(m, loose=True).cutoff for m in measures]
    return max([int(k), MIN_DEPTH, *(c for c in cutoffs if c is not None)])


def at_depth(measures, depth: int) -> tuple[Measure, ...]:
    """The measures as computed on lists of ``depth`` documents: one without a cutoff (``AP``,
    ``nDCG``, ``RR``: the whole list), or a default one deeper than ``depth`` (measures named by the
    user are refused by :meth:`EvalConfig.effective` instead), is named with it (``AP@50``), so that
    no name claims more than the lists hold."""
    out = [Measure.of(m.kind, depth) if m.cutoff is None or m.cutoff > depth else m
           for m in (Measure(x) for x in measures)]
    return tuple(dict.fromkeys(out))


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def config_hash(config: EvalConfig, corpus_sha: str, evaluation_sha: str) -> str:
    """sha256 of what determines a run's results: the effective config (label aside), the
    corpus and the evaluation."""
    cfg = asdict(config)
    cfg.pop("label", None)
    for key, default in (("measures", None), ("fusion", None), ("fusion_in", "python"),
                         ("rerank_fuse", "replace"), ("depth", None), ("chunk_depth", None)):
        if cfg.get(key) == default:  # runs that use none of the newer settings keep the ids they had
            cfg.pop(key, None)
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


