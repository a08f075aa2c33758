"""What every reader shares: the :class:`Reranker` protocol, :func:`rerank` (apply a reader to a
first stage's candidates), :func:`gains_and_losses` (what it changed), and the checks the readers
run on their scores and models."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.core.signtest import sign_test
from gabarito.retrieval.models import ModelSource, resolve


class Reranker(Protocol):
    """What :func:`rerank` needs: a name, scores for texts against a query, and provenance."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One score per text, in the order given; higher means more relevant."""
        ...

    def provenance(self) -> dict:
        """``id``, ``origin``, ``kind`` and, when the reader has weights, ``weights_sha256``."""
        ...


def _check_scores(scores: object, count: int, name: str) -> np.ndarray:
    array = np.asarray(scores, dtype=np.float64).reshape(-1) if count else np.zeros(0, dtype=np.float64)
    if array.size != count:
        raise GabaritoError(f"reranker {name!r} returned {array.size} scores for {count} texts")
    if not np.all(np.isfinite(array)):
        raise GabaritoError(f"reranker {name!r} returned a NaN or infinite score")
    return array


def rerank(query: str, candidates: Sequence[tuple[Hashable, str]], reranker: Reranker,
           n: int | None = None) -> list[tuple[Hashable, float]]:
    """Re-score the first ``n`` candidates (all when ``n`` is None) and sort them by score.

    ``candidates`` is the first stage's ranking, best first, as ``(id, text)`` pairs. The re-scored
    head is sorted by ``(-score, first-stage rank)``, so equal scores keep the first-stage order.
    The candidates beyond ``n`` follow unchanged, in their first-stage order, each with the score
    ``-inf`` (they were not read, and every re-scored candidate stays above them). Returns
    ``[(id, score)]``, as long as ``candidates``.
    """
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise GabaritoError(f"n must be a whole number >= 0 or None, got {n!r}")
    candidates = list(candidates)
    head = candidates if n is None else candidates[:int(n)]
    tail = [] if n is None else candidates[int(n):]
    name = getattr(reranker, "name", type(reranker).__name__)
    scores = _check_scores(reranker.score(query, [text for _, text in head]) if head else [], len(head), name)
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [(head[i][0], float(scores[i])) for i in order] + [(cid, -math.inf) for cid, _ in tail]


def _sane_max_length(requested: int, tokenizer: object, config: object) -> int:
    """``requested`` capped at what the model's position embeddings can take.

    The tokenizer's ``model_max_length`` is trusted when it is a real number (tokenizers without
    one report a huge sentinel); otherwise ``max_position_embeddings`` from the config, less the
    two positions RoBERTa-style models reserve."""
    if int(requested) < 2:
        raise GabaritoError(f"max_length must be at least 2, got {requested}")
    limit = getattr(tokenizer, "model_max_length", None)
    if not isinstance(limit, int) or limit > 100_000:
        limit = getattr(config, "max_position_embeddings", None)
        if isinstance(limit, int) and "roberta" in str(getattr(config, "model_type", "")):
            limit -= 2
    return min(int(requested), limit) if isinstance(limit, int) and limit > 0 else int(requested)


def _model_identity(model_id_or_path: str | Path, engine: str | None = "sentence-transformers") -> ModelSource:
    text = str(model_id_or_path)
    if isinstance(model_id_or_path, Path) and not model_id_or_path.is_dir():
        raise GabaritoError("no such model folder", path=model_id_or_path)
    return resolve(text, engine=engine)


def _ranks(values: Sequence[int | float | None] | Mapping[object, int | float | None], what: str) -> list[float]:
    out = []
    for value in values:
        if value is None:
            out.append(math.inf)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or math.isnan(value) or value < 1:
            raise GabaritoError(f"{what} must hold ranks >= 1 (or None / inf for not found), got {value!r}")
        out.append(float(value))
    return out


def gains_and_losses(before_ranks: Sequence[int | float | None] | Mapping[object, int | float | None],
                     after_ranks: Sequence[int | float | None] | Mapping[object, int | float | None],
                     cutoff: int = 1) -> dict[str, float | int]:
    """How many questions a reranker brought into the top ``cutoff``, and how many it pushed out.

    The ranks are each question's 1-based rank of its gold answer before and after reranking
    (``None`` or ``inf`` when the gold was not retrieved), aligned by position, or two mappings
    ``{question: rank}`` with the same keys. A question is ``gained`` when the gold moves into the
    top ``cutoff``, ``lost`` when it leaves it, ``same`` otherwise (in both times, or out both
    times). ``p`` is the exact two-sided sign test (:func:`gabarito.core.signtest.sign_test`) of gained
    against lost, the questions that stayed being ties; it is 1.0 when nothing moved.
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) or cutoff < 1:
        raise GabaritoError(f"cutoff must be a whole number >= 1, got {cutoff!r}")
    if isinstance(before_ranks, Mapping) or isinstance(after_ranks, Mapping):
        if not (isinstance(before_ranks, Mapping) and isinstance(after_ranks, Mapping)):
            raise GabaritoError("before_ranks and after_ranks must both be mappings or both be sequences")
        if set(before_ranks) != set(after_ranks):
            raise GabaritoError("before_ranks and after_ranks cover different questions")
        keys = sorted(before_ranks, key=str)
        before_ranks = [before_ranks[k] for k in keys]
        after_ranks = [after_ranks[k] for k in keys]
    before, after = _ranks(list(before_ranks), "before_ranks"), _ranks(list(after_ranks), "after_ranks")
    if len(before) != len(after):
        raise GabaritoError(f"before_ranks and after_ranks differ in length: {len(before)} vs {len(after)}")
    if not before:
        raise GabaritoError("gains_and_losses needs at least one question")
    top_before = [1.0 if r <= cutoff else 0.0 for r in before]
    top_after = [1.0 if r <= cutoff else 0.0 for r in after]
    test = sign_test(top_after, top_before)
    return {"gained": test["wins"], "lost": test["losses"], "same": test["ties"], "p": test["p"]}
