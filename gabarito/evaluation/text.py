"""The plain-text summary of a run record, printed by ``gabarito evaluate``."""

from __future__ import annotations

import numpy as np


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


def _depth(record: dict) -> list[str]:
    """The line saying how deep the ranked lists (and so every measure) go."""
    ranked = record.get("ranked_lists") or {}
    if ranked.get("depth") is None:
        return []
    short = (f"; the shortest holds {ranked['shortest']} (the search found no more)"
             if ranked.get("shortest") is not None and ranked["shortest"] < ranked["depth"] else "")
    return [f"  ranked lists (run.trec, every measure): {ranked['depth']} documents per question, from "
            f"{ranked['chunk_depth']} chunks searched{short}"]


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
              f"({s['n_answerable']} answerable, {s['n_unanswerable']} unanswerable)"), *_depth(record), "",
             f"answerable queries (mean [95% bootstrap CI], n={s['n_answerable']}):"]
    for key, name in (("top1", "top-1 accuracy"), ("top3", "top-3 accuracy"), ("top5", "top-5 accuracy"),
                      ("mrr", f"MRR@{cfg['k']}")):
        lines.append(f"  {name:<16} {_fmt(s[key])}")
    for name, value in (s.get("measures") or {}).items():
        lines.append(f"  {name:<16} {_fmt(value)}")
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
                 f"{t['encode_queries_s']:.1f}s, index {t['index_s']:.1f}s, search {t['search_s']:.2f}s"
                 + (f", rerank {t['rerank_s']:.2f}s" if "rerank_s" in t else "")
                 + (f", intervals {t['summary_s']:.1f}s" if "summary_s" in t else "") + ")")
    return "\n".join(lines)
