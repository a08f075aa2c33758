"""The latency phases of the reranking study: each reader per depth N, query-encoding yardsticks,
and each reader per chunk size (with the tokens it reads there).

Timings are wall-clock medians of :func:`gabarito.measure.timing.time_calls` after warm-up; a
cell whose calls are slow takes fewer samples (``n`` says how many, never fewer than 3).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gabarito.inputs.segment import segment
from gabarito.measure.timing import summarize, time_calls
from gabarito.retrieval.memory import ExactVectors
from gabarito.retrieval.protocol import VectorRetriever
from gabarito.retrieval.rerank import BiEncoderReranker
from gabarito.study.runner import say
from studies.reranking.rerank_bench import HEADLINE_N, SIZE_SPECS, Bench
from studies.reranking.rerank_tokens import count_tokens, describe_counts, reader_tokenizer


@dataclass
class Clock:
    """How one latency cell is timed: these questions, ``reps`` passes, at most ``budget`` seconds."""

    questions: list
    reps: int
    budget: float

    def cell(self, call) -> dict:
        """Median of ``reps`` passes over the questions after warm-up; when one call is so slow that
        this would pass the cell's budget, fewer passes or questions."""
        t0 = time.perf_counter()
        call(self.questions[0])  # warm-up, also the estimate of one call
        one = max(time.perf_counter() - t0, 1e-6)
        affordable = max(3, int(self.budget / one))
        qs, passes = self.questions, self.reps
        if affordable < len(self.questions) * self.reps:
            if affordable >= len(self.questions):
                passes = affordable // len(self.questions)
            else:
                qs, passes = self.questions[:affordable], 1
        return {**summarize(time_calls(call, qs, repeat=passes, warmup=1)), "passes": passes,
                "questions": len(qs)}

    def reader(self, reader, cand_texts: dict[str, list[str]]) -> dict:
        """One reader over each question's candidate texts, read at query time."""
        def call(q):
            if isinstance(reader, BiEncoderReranker):
                reader.cache.clear()  # read the candidates at query time, as a cross-encoder must
            reader.score(q.query, cand_texts[q.id])
        return self.cell(call)


def timed_questions(questions: list, count: int) -> list:
    """``count`` questions spread evenly over the list."""
    return questions[:: max(1, len(questions) // count)][:count]


def latency_per_n(bench: Bench, clock: Clock, ns, yardsticks: dict) -> tuple[dict, dict]:
    """``(per reader {N: cell}, yardstick cells)``: each reader over the better dense stage's top N,
    and the query encoders (``yardsticks``: label -> encoder with ``encode_query``) alone."""
    text_of, run = bench.text_of, bench.runs[bench.better]
    per_n: dict[str, dict[str, dict]] = {r: {} for r in bench.readers}
    for name, reader in bench.readers.items():
        for n in ns:
            cands = {q.id: [text_of[c] for c, _ in run[q.id][:n]] for q in clock.questions}
            per_n[name][str(n)] = {**clock.reader(reader, cands),
                                   "candidates_mean": float(np.mean([len(v) for v in cands.values()]))}
            say(f"latency {name} N={n}: median {per_n[name][str(n)]['median']:.1f} ms")
    yardstick = {f"query encoding {label}": clock.cell(lambda q, e=enc: e.encode_query(q.query))
                 for label, enc in yardsticks.items()}
    return per_n, yardstick


def per_chunk_size(bench: Bench, clock: Clock) -> tuple[dict, dict, dict]:
    """``(latency, tokens, chunk sizes)`` per segmentation of SIZE_SPECS: each reader over the
    better dense stage's top HEADLINE_N chunks of that segmentation, and the tokens of those
    (question, chunk) pairs in each reader's own tokenizer."""
    latency, tokens, sizes = {}, {}, {}
    encoder = bench.better_encoder
    for spec in SIZE_SPECS:
        cs = segment(bench.docs, spec, prefix_title=True)
        index = ExactVectors([c.id for c in cs], bench.cache.encode(encoder, [c.text for c in cs]),
                             model_id=encoder.model_id)
        run = VectorRetriever(spec, index.knn, encoder).search(bench.queries, HEADLINE_N)
        texts = {c.id: c.text for c in cs}
        top = {q: [texts[c] for c, _ in pairs] for q, pairs in run.items()}
        sizes[spec] = {"n_chunks": len(cs), "words_per_chunk": describe_counts([len(c.text.split()) for c in cs])}
        latency[spec] = {r: clock.reader(reader, top) for r, reader in bench.readers.items()}
        tokens[spec] = {r: reader_tokens(reader, bench.questions, top) for r, reader in bench.readers.items()}
        say(f"chunk size {spec}: " + ", ".join(f"{r} {latency[spec][r]['median']:.0f} ms" for r in bench.readers))
    return latency, tokens, sizes


def reader_tokens(reader, questions: list, top: dict[str, list[str]]) -> dict:
    """Tokens a reader sees: (query, chunk) pairs as a cross-encoder reads them, chunks alone."""
    tok, limit = reader_tokenizer(reader)
    pairs = [count_tokens(tok, q.query, t) for q in questions for t in top[q.id]]
    alone = [count_tokens(tok, t) for q in questions for t in top[q.id]]
    return {"max_tokens_read": limit, "pair_tokens": describe_counts(pairs), "chunk_tokens": describe_counts(alone),
            "chunks_truncated_share": float(np.mean([a > limit for a in alone])),
            "pairs_over_limit_share": float(np.mean([p > limit for p in pairs]))}
