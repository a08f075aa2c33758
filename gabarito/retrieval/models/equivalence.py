"""Whether two backends of one encoder give the same vectors, checked on a fixed sample.

Same means: every component within :data:`TOLERANCE` (max |Δ|) *and* the same top-10 passages,
in the same order, for every sample query (scores by dot product, ties by passage index). The
sample (:func:`sample`) is seeded text of every length the models see: short queries, passages
of a few words to a few hundred (past every model's maximum length, so truncation is checked
too). :func:`activate` runs the check once per model fingerprint and export, keeps the verdict,
and returns the ONNX runner only when the verdict says equal; otherwise one notice, and torch.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_bytes, sha256_text
from gabarito.retrieval.models import onnx_backend

TOLERANCE = 1e-5
TOP_K = 10
SEED = 20261203
_WORDS = (
    "search engine index query document vector ranking score recall precision relevance answer question "
    "concept ontology term word token model encoder passage retrieval fusion reciprocal rank dense sparse "
    "lexical semantic neural network training weight cosine distance neighbour graph layer analyzer stemmer "
    "busca índice consulta documento vetor pergunta resposta conceito termo palavra modelo recuperação "
    "relevância ordenação pontuação ontologia análise texto frase coleção julgamento avaliação medida "
    "the a of and to in is for on with as by at from that this which are be was it not or an "
    "cell protein gene disease patient clinical trial drug effect treatment study result method data "
    "climate energy water soil plant growth rate temperature pressure system process design structure"
).split()
Notice = Callable[[str], None]


def sample(n_passages: int = 120, n_queries: int = 24, seed: int = SEED) -> tuple[list[str], list[str]]:
    """Seeded passages (3 to 450 words; one in twenty longer than any model's maximum length)
    and queries (3 to 8 words drawn from a passage, so each has near neighbours)."""
    rng = np.random.default_rng(seed)
    words = np.array(_WORDS)
    passages = []
    for i in range(n_passages):
        n = int(rng.integers(300, 451)) if i % 20 == 0 else int(rng.integers(3, 60))
        passages.append(" ".join(words[rng.integers(0, len(words), n)]).capitalize() + ".")
    queries = []
    for _ in range(n_queries):
        source = passages[int(rng.integers(0, n_passages))].rstrip(".").lower().split()
        start = int(rng.integers(0, max(1, len(source) - 8)))
        queries.append(" ".join(source[start:start + int(rng.integers(3, 9))]))
    return passages, queries


def top_k(queries: np.ndarray, passages: np.ndarray, k: int = TOP_K) -> list[list[int]]:
    """Top-``k`` passage indices per query by dot product, ties by index ascending."""
    scores = queries @ passages.T
    index = np.arange(passages.shape[0])
    return [np.lexsort((index, -row))[:k].tolist() for row in scores]


def compare(reference: tuple[np.ndarray, np.ndarray], candidate: tuple[np.ndarray, np.ndarray],
            *, tolerance: float = TOLERANCE, k: int = TOP_K) -> dict:
    """``(passages, queries)`` vectors of two backends side by side: max |Δ|, whether every
    query's top-``k`` is identical, and the verdict (both within tolerance)."""
    (ref_p, ref_q), (cand_p, cand_q) = reference, candidate
    if ref_p.shape != cand_p.shape or ref_q.shape != cand_q.shape:
        raise GabaritoError(f"backends disagree on shapes: {ref_p.shape}/{ref_q.shape} vs {cand_p.shape}/{cand_q.shape}")
    delta = max(float(np.abs(ref_p - cand_p).max(initial=0.0)), float(np.abs(ref_q - cand_q).max(initial=0.0)))
    ref_top, cand_top = top_k(ref_q, ref_p, k), top_k(cand_q, cand_p, k)
    differing = sum(a != b for a, b in zip(ref_top, cand_top))
    return {"max_abs_delta": delta, "tolerance": tolerance, "top10_identical": differing == 0,
            "queries_differing": differing, "texts": {"passages": int(ref_p.shape[0]), "queries": int(ref_q.shape[0])},
            "equivalent": bool(delta < tolerance and differing == 0)}


def check(encoder: Any, runner: onnx_backend.OnnxTransformer) -> dict:
    """Encode the sample with torch (``encoder.torch_encode``) and with ``runner``; compare."""
    passages, queries = sample()
    reference = (encoder.torch_encode(passages), encoder.torch_encode(queries))
    candidate = (runner.encode(passages), runner.encode(queries))
    return compare(reference, candidate)


def verdict_key(runner: onnx_backend.OnnxTransformer) -> dict:
    passages, queries = sample()
    return {"onnx_sha256": runner.sha256, "onnxruntime": onnx_backend.version("onnxruntime"),
            "torch": onnx_backend.version("torch"), "sentence-transformers": onnx_backend.version("sentence-transformers"),
            "sample_sha256": sha256_text(json.dumps([passages, queries])), "tolerance": TOLERANCE,
            "max_batch": onnx_backend.MAX_BATCH}


def verdict(encoder: Any, runner: onnx_backend.OnnxTransformer) -> dict:
    """The kept verdict for this export and these versions, or a new check (then kept)."""
    path = onnx_backend.export_folder(encoder) / "verdict.json"
    key = verdict_key(runner)
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return kept
    except (OSError, ValueError):
        pass
    found = {"key": key, **check(encoder, runner)}
    atomic_write_bytes(path, (json.dumps(found, indent=1, sort_keys=True) + "\n").encode())
    return found


def activate(encoder: Any, backend: str, notice: Notice) -> tuple[onnx_backend.OnnxTransformer | None, dict | None]:
    """The ONNX runner for ``encoder`` when ``backend`` allows it and its vectors are torch's;
    else ``(None, verdict or None)`` after one notice. ``backend="onnx"`` makes a failure an error."""
    if backend == "torch":
        return None, None
    name = encoder.model_id
    reason = onnx_backend.unsupported_reason(encoder.model)
    if reason is None and onnx_backend.version("onnxruntime") == "not installed":
        reason = "onnxruntime is not installed"
    runner = found = None
    if reason is None:
        try:
            runner = onnx_backend.OnnxTransformer(encoder.model, onnx_backend.export(encoder), onnx_backend.threads())
            found = verdict(encoder, runner)
        except Exception as exc:  # noqa: BLE001 - any export or runtime failure means torch
            reason = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    if reason is None and not found["equivalent"]:
        reason = (f"its vectors differ from torch's (max |Δ| {found['max_abs_delta']:.2e}, "
                  f"{found['queries_differing']} of {found['texts']['queries']} top-10 lists differ)")
    if reason is None:
        return runner, found
    if backend == "onnx":
        raise GabaritoError(f"ONNX Runtime backend for {name} unavailable: {reason}")
    notice(f"encoder {name}: ONNX Runtime not used, {reason}; encoding with torch")
    return None, found

