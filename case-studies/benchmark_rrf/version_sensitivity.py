"""Why BM25 ranks differ from the published run: the published 40 questions on four ArcadeDB versions.

    scripts/version_venvs.sh                                     # once (this script runs it too)
    python case-studies/benchmark_rrf/version_sensitivity.py     # writes version_sensitivity.json
    python case-studies/benchmark_rrf/version_sensitivity.py --versions 26.7.2 26.10.2.post1

The published page ran on ArcadeDB 26.7.3, which is not on PyPI. Each version of
``arcadedb-embedded`` listed in :data:`VERSIONS` gets its own bare virtual environment
(``.cache/venvs/arcadedb-<version>``); ``version_worker.py`` runs there, in a subprocess, on a job
file written here: the flagship's DDL (:func:`gabarito.retrieval.arcadedb.schema_sql`) without the
vector property and index, the flagship's INSERT and BM25 SELECT (:class:`ArcadeIndex`), the
corpus rows (:data:`SEARCH_FIELDS`), and the questions escaped with :func:`lucene_escape`. A
version whose wheel ships a server jar runs as a server (the flagship's way); 26.7.2 runs
in-process, with the same SQL. Rankings (score, then doc id), ranks and metrics are computed here
with the library (:class:`Run`, :func:`gold_ranks`, :func:`evaluate`).

Controls (:data:`CONTROLS`) each change one thing that could move a rank besides the version:
the mode (in-process vs server), the insert (rows per transaction, index built before or after
the data) and the scoring function (``METADATA {"similarity": "CLASSIC"}``, the legacy
term-coordination count that BM25 replaced as the default). Every run's scores are checked
against textbook BM25 (:class:`BM25Reference`: Lucene idf, k1 1.2, b 0.75, the indexed fields
concatenated), against term coordination, and its engine-reported document frequencies (EXPLAIN)
against the corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import sha256_file
from gabarito.notes import note
from gabarito.study.records import write_measurement
from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis
from gabarito.inputs.datasets import fetch
from gabarito.inputs.gold import load_gold, verify_frozen
from gabarito.measure import metrics
from gabarito.measure.parity import (
    BM25Reference,
    score_agreement,
    topk_agreement,
)
from gabarito.retrieval.analyzer import lucene_standard_tokens
from gabarito.measure.per_question import gold_ranks
from gabarito.core.runs import Qrels, Run
from gabarito.paths import ROOT
from gabarito.retrieval.arcadedb import INFO_TYPE, ArcadeIndex, lucene_escape
from gabarito.study.records import provenance

HERE = Path(__file__).resolve().parent

VERSIONS = ("26.7.2", "26.8.1", "26.9.1", "26.10.2.post1")
PUBLISHED_ENGINE = "26.7.3"
PUBLISHED_FIELDS = ("search_name", "ontology_description", "reasoning", "rgt_element_a", "rgt_element_b",
                    "theoretical_significance")
GOLD_FILE, MANIFEST = "questions_published.json", "gold_protocols.lock.json"
TYPE_NAME, DATABASE = "Concept", "version_sensitivity"
DEPTH = 10
MEASURES = ("R@1", "R@3", "R@5", "R@10", "RR@10")
BATCH = 200  # the flagship's ingest batch (ArcadeIndex.ingest)
VENVS = ROOT / ".cache" / "venvs"
WORKER = HERE / "version_worker.py"
#: Main runs that cannot use the flagship's list INSERT: the 26.8.1 server stores only the first
#: row of an ``INSERT ... CONTENT :rows`` list (the control "26.8.1 list of 200 per insert" shows it).
MAIN = {"26.8.1": {"batch": 1, "why": "main run; one row per INSERT (its list INSERT stores one row)"}}
#: Runs beside the four versions, each changing one thing against the same version's main run.
CONTROLS = {
    "26.10.2.post1 in-process": {"version": "26.10.2.post1", "mode": "embedded",
                                 "why": "mode: in-process API instead of server"},
    "26.10.2.post1 one row per insert": {"version": "26.10.2.post1", "batch": 1,
                                         "why": "insert: one row per transaction instead of batches"},
    "26.10.2.post1 CLASSIC": {"version": "26.10.2.post1", "similarity": "CLASSIC",
                              "why": "scoring: the legacy term-coordination similarity instead of BM25"},
    "26.8.1 list of 200 per insert": {"version": "26.8.1", "batch": BATCH, "partial": True,
                                      "why": "insert: the flagship's list INSERT of 200 rows"},
    "26.7.2 one row per insert": {"version": "26.7.2", "batch": 1,
                                  "why": "insert: one row per transaction instead of 200"},
    "26.7.2 one row per insert, again": {"version": "26.7.2", "batch": 1,
                                         "why": "repeat of the run above: is it deterministic?"},
    "26.7.2 50 rows per insert": {"version": "26.7.2", "batch": 50,
                                  "why": "insert: 50 rows per transaction instead of 200"},
    "26.7.2 index after the inserts": {"version": "26.7.2", "index_after": True,
                                       "why": "order: FULL_TEXT index built over existing records"},
    "26.7.2 CLASSIC": {"version": "26.7.2", "similarity": "CLASSIC",
                       "why": "scoring: the legacy term-coordination similarity instead of BM25"},
    "26.7.2 JVM seeing 8 cores": {"version": "26.7.2", "jvm_processors": 8,
                                  "why": "machine: more cores (buckets per type, per-bucket statistics)"},
}
_SCORING = re.compile(r"SCORING (\{.*\})\s*$", re.M)


class _SqlOf(ArcadeIndex):
    """The flagship index's SQL without a server: ``info`` is given, not read."""

    def __init__(self, fields: Sequence[str]):
        super().__init__(None, TYPE_NAME)
        self._fields = list(fields)

    def info(self) -> dict:
        return {"text_index": "{index}", "vector_index": "{vector}", "fields": self._fields, "dim": 1,
                "analyzer": None}


def statements(fields: Sequence[str], *, similarity: str | None = None, batch: int = BATCH) -> dict:
    """DDL, INSERT and BM25 SELECT of the flagship for a BM25-only index (no vector property/index).

    ``similarity`` adds ``METADATA {"similarity": ...}`` to the FULL_TEXT index. ``batch`` is the
    number of rows per transaction: one INSERT binding a list (``:rows``) on a server, one INSERT per
    row (``:row``) in-process, whose API binds a list as a single record."""
    sql = _SqlOf(fields)
    queries = sql.queries()
    ddl = [s for s in queries["ddl"] if "embedding" not in s and INFO_TYPE not in s]
    if similarity:
        ddl = [s + f' METADATA {{"similarity": "{similarity}"}}' if " FULL_TEXT" in s else s for s in ddl]
    return {"ddl": ddl, "insert_rows": queries["ingest"], "insert_row": queries["ingest"].replace(":rows", ":row"),
            "batch": batch, "bm25": queries["bm25"], "fetch": DEPTH + sql.tie_margin}


def venv_python(version: str) -> Path:
    return VENVS / f"arcadedb-{version}" / "bin" / "python"


def ensure_venvs(versions: Sequence[str]) -> None:
    """Create the missing environments (``scripts/version_venvs.sh`` is idempotent)."""
    missing = [v for v in versions if not venv_python(v).exists()]
    if missing:
        subprocess.run(["bash", str(ROOT / "scripts" / "version_venvs.sh"), *missing], check=True)


def run_worker(python: Path | str, job: dict, *, timeout: float = 900.0) -> dict:
    """Run the worker under ``python`` on ``job``; its answer, or a one-line error with its stderr."""
    with tempfile.TemporaryDirectory(prefix="version-job-") as tmp:
        job_path, out_path = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_path.write_text(json.dumps({"work_dir": tmp, **job}), encoding="utf-8")
        # the bare venv has no gabarito installed: the worker imports it from this checkout
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        proc = subprocess.run([str(python), str(WORKER), str(job_path), str(out_path)],
                              capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": path})
        if proc.returncode != 0 or not out_path.exists():
            tail = " | ".join(line for line in proc.stderr.strip().splitlines()[-3:])
            raise GabaritoError(f"worker under {python} failed (exit {proc.returncode}): {tail}")
        return json.loads(out_path.read_text(encoding="utf-8"))


def field_mapping(published: Sequence[str] = PUBLISHED_FIELDS, ours: Sequence[str] = SEARCH_FIELDS) -> dict:
    """Published field -> ours. ``ontology_description`` is the newer name of the definition field,
    read as :attr:`Concept.description` (``gabarito.inputs.corpus.DESCRIPTION_KEYS``)."""
    from gabarito.inputs.corpus import DESCRIPTION_KEYS

    pairs = {}
    for field in published:
        if field in ours:
            pairs[field] = field
        elif field in DESCRIPTION_KEYS and "description" in ours:
            pairs[field] = "description"
        else:
            pairs[field] = None
    unmatched = [f for f in ours if f not in pairs.values()]
    return {"published": list(published), "ours": list(ours), "mapping": pairs,
            "same_set": all(pairs.values()) and not unmatched, "ours_not_published": unmatched}


# -- one run ------------------------------------------------------------------------------------
def settings_of(key: str) -> dict:
    """A main version (its key is the version) or a control, with every setting filled in."""
    spec = dict(CONTROLS.get(key) or {"version": key, "why": "main run", **MAIN.get(key, {})})
    spec.setdefault("mode", "auto")  # the worker: server if the wheel has a server jar, else in-process
    spec.setdefault("batch", BATCH)
    spec.setdefault("similarity", None)
    spec.setdefault("index_after", False)
    spec.setdefault("jvm_processors", None)
    spec.setdefault("partial", False)  # True: a control that may store fewer records than given
    return spec


def job_for(spec: Mapping, rows: list[dict], queries: list[dict]) -> dict:
    sql = statements(SEARCH_FIELDS, similarity=spec["similarity"], batch=spec["batch"])
    if spec["index_after"]:
        sql["post_ddl"] = [s for s in sql["ddl"] if " FULL_TEXT" in s]
        sql["ddl"] = [s for s in sql["ddl"] if " FULL_TEXT" not in s]
    return {"mode": spec["mode"], "database": DATABASE, "type_name": TYPE_NAME, "rows": rows,
            "queries": queries, "explain": True, "jvm_processors": spec["jvm_processors"], **sql}


def scoring_stats(plan: str) -> dict | None:
    """The engine's corpus statistics from an EXPLAIN text (its ``SCORING {...}`` line)."""
    match = _SCORING.search(plan or "")
    if match is None:
        return None
    data = json.loads(match.group(1))
    return {"similarity": data.get("similarity"), "k1": data.get("k1"), "b": data.get("b"),
            "total_docs": data.get("totalDocs"), "avg_doc_length": data.get("avgDocLength"),
            "df": {t["term"]: t["df"] for t in data.get("terms", [])}}


def corpus_df(texts: Sequence[str]) -> dict[str, int]:
    """Document frequency of every token of the indexed text (Lucene's StandardAnalyzer tokens)."""
    df: dict[str, int] = {}
    for text in texts:
        for token in set(lucene_standard_tokens(text)):
            df[token] = df.get(token, 0) + 1
    return df


def df_check(stats: Mapping[str, dict | None], df: Mapping[str, int]) -> dict:
    """How many query-term document frequencies the engine reports differ from the corpus count."""
    terms = wrong = 0
    worst: dict | None = None
    for qid, st in stats.items():
        for term, got in (st or {}).get("df", {}).items():
            terms += 1
            want = df.get(term, 0)
            if got != want:
                wrong += 1
                if worst is None or abs(got - want) > abs(worst["engine"] - worst["corpus"]):
                    worst = {"question": qid, "term": term, "engine": got, "corpus": want}
    return {"terms": terms, "wrong": wrong, "largest_gap": worst}


def coordination(run: Run, pairs, doc_tokens: Mapping[str, set]) -> dict:
    """Top-10 entries whose score equals the number of question tokens (repeats counted) found in
    the document: the legacy CLASSIC score."""
    hits = total = 0
    for p in pairs:
        tokens = lucene_standard_tokens(p.question)
        for doc, score in run.get(p.id, []):
            total += 1
            hits += sum(t in doc_tokens[doc] for t in tokens) == score
    return {"matching": hits, "of": total}


def run_record(spec: Mapping, out: Mapping, pairs, qrels: Qrels, df: Mapping[str, int], reference: Run,
               doc_tokens: Mapping[str, set]) -> dict:
    """Ranks, metrics (gabarito.measure.metrics.evaluate), top 10 with scores, engine statistics, and
    how the scores compare with textbook BM25 and with term coordination, for one worker answer."""
    if out["documents"] != len(doc_tokens) and not spec["partial"]:
        raise GabaritoError(f"ArcadeDB {out['engine_version']} ({out['mode']}) stored {out['documents']} "
                            f"of {len(doc_tokens)} records")
    run = Run(out["results"]).cut(DEPTH)
    scored = metrics.evaluate(run, qrels, MEASURES)
    stats = {p.id: scoring_stats(out["explain"].get(p.id, "")) for p in pairs}
    agree = {p.id: topk_agreement(run.get(p.id, []), reference.get(p.id, []), DEPTH)["identical"] for p in pairs}
    gaps = [g for p in pairs if (g := score_agreement(run.get(p.id, []), reference.get(p.id, []))) is not None]
    return {
        "settings": {**{k: spec[k] for k in ("version", "batch", "similarity", "index_after", "jvm_processors",
                                             "why")},
                     "mode": out["mode"]},
        "engine": {k: out[k] for k in ("engine_version", "package_version", "jars", "mode", "buckets", "documents",
                                      "index", "build_s")},
        "ranks": gold_ranks(run, pairs, DEPTH),
        "metrics": {m: metrics.mean(scored[m]) for m in MEASURES},
        "top10": {q: [[d, s] for d, s in pairs_] for q, pairs_ in run.items()},
        "scoring": {"similarity": sorted({st["similarity"] for st in stats.values() if st}),
                    "explain_statistics": sum(st is not None for st in stats.values()),
                    "per_question": stats, "df_check": df_check(stats, df),
                    "textbook_bm25": {"identical_top10": sum(agree.values()), "of": len(pairs),
                                      "max_rel_score_diff": max(gaps) if gaps else None},
                    "term_coordination": coordination(run, pairs, doc_tokens)},
    }


# -- comparing runs -----------------------------------------------------------------------------
def compare(ranks: Mapping[str, Mapping[str, int | None]], published: Mapping[str, int | None],
            main: Sequence[str]) -> dict:
    """Each run's gold ranks against the published ones (exact agreement out of all questions; None,
    beyond the top 10, counts as a rank), the questions whose rank moves across the ``main`` runs,
    and for every run what changes against the last main run: questions moved, fixed (now equal to
    the published rank, before not) and broken (the reverse)."""
    qids = list(published)
    for key, r in ranks.items():
        if set(r) != set(qids):
            raise GabaritoError(f"run {key!r} ranks other questions than the published gold")
    base = ranks[main[-1]]
    agreement = {}
    for key, r in ranks.items():
        same = [q for q in qids if r[q] == published[q]]
        agreement[key] = {"exact": len(same), "of": len(qids),
                          "both_beyond_top10": sum(published[q] is None for q in same),
                          "differ": [q for q in qids if r[q] != published[q]],
                          "versus_" + main[-1]: {
                              "moved": sum(r[q] != base[q] for q in qids),
                              "fixed": sum(r[q] == published[q] != base[q] for q in qids),
                              "broken": sum(base[q] == published[q] != r[q] for q in qids)}}
    moves = [{"id": q, "ranks": {k: ranks[k][q] for k in main}, "published": published[q]}
             for q in qids if len({ranks[k][q] for k in main}) > 1]
    pairwise = {a: {b: sum(ranks[a][q] == ranks[b][q] for q in qids) for b in main} for a in main}
    return {"agreement": agreement, "moves": moves, "n_moving": len(moves), "pairwise_exact": pairwise}


def same_lists(records: Mapping[str, Mapping], a: str, b: str) -> dict:
    """Whether two runs return the same top 10 (ids and order) and how far their scores are apart."""
    ta, tb = records[a]["top10"], records[b]["top10"]
    identical = sum(topk_agreement(ta[q], tb.get(q, []), DEPTH)["identical"] for q in ta)
    gaps = [g for q in ta if (g := score_agreement([tuple(x) for x in ta[q]], [tuple(x) for x in tb.get(q, [])]))
            is not None]
    return {"identical_top10": identical, "of": len(ta), "max_rel_score_diff": max(gaps) if gaps else None}


def scoring_kind(record: Mapping, n_docs: int) -> str:
    """One line on what the run's scores are, from its numbers."""
    sc, docs = record["scoring"], record["engine"]["documents"]
    dfc, tb, co = sc["df_check"], sc["textbook_bm25"], sc["term_coordination"]
    parts = ["/".join(sc["similarity"]) or f"{record['settings']['similarity']} (EXPLAIN shows no statistics)"]
    if docs != n_docs:
        batch = record["settings"]["batch"]
        parts.append(f"only {docs} of {n_docs} records stored"
                     + (f" (one per INSERT of {batch} rows)" if docs == -(-n_docs // batch) else ""))
    if co["of"] and co["matching"] == co["of"]:
        parts.append(f"every top-10 score ({co['of']}) is the count of question tokens found in the document "
                     "(term coordination)")
    elif dfc["wrong"] == 0 and tb["identical_top10"] == tb["of"] and (tb["max_rel_score_diff"] or 0) < 1e-4:
        parts.append(f"textbook BM25 (Lucene idf, k1 1.2, b 0.75, fields concatenated): top 10 identical on "
                     f"{tb['identical_top10']}/{tb['of']} questions, scores within {tb['max_rel_score_diff']:.1e}")
    else:
        worst = dfc["largest_gap"]
        if worst:
            parts.append(f"{dfc['wrong']} of {dfc['terms']} query-term document frequencies differ from the corpus "
                         f"(largest: '{worst['term']}' {worst['engine']} vs {worst['corpus']})")
        parts.append(f"top 10 identical to textbook BM25 on {tb['identical_top10']}/{tb['of']} questions"
                     + (f", largest relative score gap {tb['max_rel_score_diff']:.2g}"
                        if tb["max_rel_score_diff"] is not None else ""))
    return "; ".join(parts)


def findings(records: Mapping[str, Mapping], comparison: Mapping, main: Sequence[str], n_docs: int) -> list[str]:
    """The conclusions, as sentences generated from the numbers above."""
    agree = comparison["agreement"]
    best = max(agree, key=lambda k: agree[k]["exact"])
    newest = main[-1]
    lines = ["Published BM25 ranks reproduced exactly: "
             + "; ".join(f"{k} {agree[k]['exact']}/{agree[k]['of']}" for k in records) + ".",
             f"Across the {len(main)} versions ({', '.join(main)}) the gold's rank moves on "
             f"{comparison['n_moving']} of {agree[newest]['of']} questions.",
             f"Closest to the published ranks: {best} ({agree[best]['exact']}/{agree[best]['of']})."]
    groups: dict[str, list[str]] = {}
    for key, rec in records.items():
        groups.setdefault(json.dumps(rec["ranks"], sort_keys=True), []).append(key)
    lines.append("Runs with the same rank on every question: "
                 + "; ".join(" = ".join(g) for g in groups.values() if len(g) > 1) + ".")
    for key, rec in records.items():
        lines.append(f"{key}: {scoring_kind(rec, n_docs)}.")
    return lines


# -- the study ----------------------------------------------------------------------------------
def load_inputs(mirror: str | None):
    """Frozen gold (checked before any search), corpus rows, questions, published ranks."""
    frozen = verify_frozen(HERE / MANIFEST)
    if GOLD_FILE not in frozen:
        raise GabaritoError(f"{GOLD_FILE} is not frozen in this manifest", path=HERE / MANIFEST)
    path = fetch("social_acceptance", mirror=mirror) / "social_acceptance.syno"
    concepts = load_synesis(path)
    pairs = load_gold(HERE / GOLD_FILE, [c.name for c in concepts])
    published = {p["id"]: p["published_rank"]["bm25"]
                 for p in json.loads((HERE / GOLD_FILE).read_text(encoding="utf-8"))["pairs"]}
    rows = [{"doc_id": c.name, **c.search_fields()} for c in concepts]
    corpus = {"name": "social_acceptance", "file": path.name, "sha256": sha256_file(path), "n_docs": len(rows)}
    return corpus, {GOLD_FILE: frozen[GOLD_FILE]}, pairs, published, rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", nargs="+", default=list(VERSIONS), help="arcadedb-embedded versions (main runs)")
    ap.add_argument("--no-controls", action="store_true", help="skip the control runs")
    ap.add_argument("--mirror", default=os.environ.get("GABARITO_DATA_MIRROR"), help="dataset mirror")
    ap.add_argument("--out", type=Path, default=HERE / "version_sensitivity.json")
    args = ap.parse_args(argv)
    corpus, gold_sha, pairs, published, rows = load_inputs(args.mirror)
    keys = list(args.versions) + ([] if args.no_controls else
                                  [k for k, c in CONTROLS.items() if c["version"] in args.versions])
    ensure_venvs(sorted({settings_of(k)["version"] for k in keys}))
    texts = {r["doc_id"]: " ".join(r[f] for f in SEARCH_FIELDS) for r in rows}
    ref = BM25Reference(texts)
    reference = Run({p.id: ref.search(p.question, DEPTH) for p in pairs})
    df = corpus_df(list(texts.values()))
    doc_tokens = {d: set(lucene_standard_tokens(t)) for d, t in texts.items()}
    queries = [{"id": p.id, "q": lucene_escape(p.question)} for p in pairs]
    qrels = Qrels.single({p.id: p.gold for p in pairs})
    records = {}
    for key in keys:
        spec = settings_of(key)
        print(f"version_sensitivity: {key}", file=sys.stderr, flush=True)
        out = run_worker(venv_python(spec["version"]), job_for(spec, rows, queries))
        records[key] = run_record(spec, out, pairs, qrels, df, reference, doc_tokens)
    comparison = compare({k: r["ranks"] for k, r in records.items()}, published, list(args.versions))
    result = {
        "what": "BM25 of the published 40 questions on several ArcadeDB versions (issue 10, item 2)",
        "provenance": provenance(
            corpus=corpus, gold_sha256=gold_sha, model=None,
            engine={"published": f"ArcadeDB {PUBLISHED_ENGINE}",
                    "runs": {k: r["engine"]["engine_version"] for k, r in records.items()}},
            parameters={"depth": DEPTH, "fetch": DEPTH + ArcadeIndex(None, TYPE_NAME).tie_margin,
                        "ties": note("ranking.ties_by_doc_id"), "measures": list(MEASURES),
                        "fields": list(SEARCH_FIELDS), "analyzer": "ArcadeDB default (StandardAnalyzer)",
                        "batch": BATCH, "sql": statements(SEARCH_FIELDS)}),
        "published": {"engine": f"ArcadeDB {PUBLISHED_ENGINE}", "ranks": published,
                      "metrics": json.loads((HERE / GOLD_FILE).read_text(encoding="utf-8"))["published"]["metrics"]["bm25"]},
        "field_mapping": field_mapping(),
        "versions": list(args.versions),
        "runs": records,
        "comparison": comparison,
        "versus_newest": {k: same_lists(records, k, args.versions[-1]) for k in records},
        "findings": findings(records, comparison, list(args.versions), len(rows)),
    }
    write_measurement(args.out, result)
    for line in result["findings"]:
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main)
