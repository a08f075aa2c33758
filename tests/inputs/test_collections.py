"""The classic test collections read from the mirrored originals (skipped without the mirror)."""

import os
import re
from pathlib import Path

import pytest

from gabarito.inputs.collections import (
    COLLECTIONS,
    CRANFIELD_GRADES,
    load_collection,
    parse_glasgow,
    parse_qrels,
    parse_trec_documents,
    parse_trec_topics,
)
from gabarito.errors import GabaritoError

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("GABARITO_DATA_MIRROR") or ROOT.parent / "shared" / "datasets")


@pytest.fixture(scope="session")
def collections(tmp_path_factory):
    """Load each collection once per session; skip the ones the mirror lacks."""
    dest = tmp_path_factory.mktemp("collections")
    cache = {}

    def get(name):
        if not (MIRROR / name).is_dir():
            pytest.skip(f"no {name} in the dataset mirror at {MIRROR}")
        if name not in cache:
            cache[name] = load_collection(name, mirror=MIRROR, dest=dest)
        return cache[name]

    return get


# --- counts ------------------------------------------------------------------------------------

# name: (documents, queries, queries with a relevant document, judgment rows)
EXPECTED = {
    "cranfield": (1400, 225, 225, 1837),
    "cisi": (1460, 112, 76, 3114),
    "medline": (1033, 30, 30, 696),
    "npl": (11429, 93, 93, 2083),
    "adi": (82, 35, 35, 170),
}


def test_every_collection_is_known():
    assert set(COLLECTIONS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts(collections, name):
    c = collections(name)
    n_docs, n_queries, n_judged, n_rows = EXPECTED[name]
    assert c.name == name
    assert len(c.documents) == n_docs
    assert len({d.id for d in c.documents}) == n_docs
    assert len(c.queries) == n_queries
    assert len({q.id for q in c.queries}) == n_queries
    assert len(c.judged_queries()) == n_judged
    assert len(c.unjudged) == n_queries - n_judged
    assert sum(len(v) for v in c.qrels.values()) == n_rows
    doc_ids = {d.id for d in c.documents}
    for q in c.queries:
        assert q.query.strip()
        assert set(q.relevant_ids) <= doc_ids
        assert list(q.relevant_ids) == [d for d, g in c.qrels.get(q.id, {}).items() if g >= 1]
        assert q.extra["relevance"] == {d: c.qrels[q.id][d] for d in q.relevant_ids}
    assert c.text_fields and c.notes


# --- Cranfield ---------------------------------------------------------------------------------

def test_cranfield_queries_are_numbered_by_position(collections):
    c = collections("cranfield")
    by_id = {q.id: q for q in c.queries}
    assert [q.id for q in c.queries] == [str(i) for i in range(1, 226)]
    # cran.qry's .I numbers skip: the 3rd query is .I 004, the last .I 365
    assert by_id["3"].extra["file_id"] == "004"
    assert by_id["3"].query.startswith("what problems of heat conduction in composite slabs")
    assert by_id["225"].extra["file_id"] == "365"
    # cranqrel "3 5 3": query 3 (position) -> document 5, a heat-conduction paper
    assert "5" in by_id["3"].relevant_ids
    docs = {d.id: d for d in c.documents}
    assert docs["5"].title.startswith("one-dimensional transient heat conduction into a double-layer slab")
    # by .I number, "4" would be .I 004; by position it is .I 008
    assert by_id["4"].extra["file_id"] == "008"


def test_cranfield_grade_mapping(collections):
    assert dict(CRANFIELD_GRADES) == {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0}
    assert "complete answer" in CRANFIELD_GRADES.labels[1]
    assert "1->4" in CRANFIELD_GRADES.__doc__
    assert len(CRANFIELD_GRADES.describe()) == 6
    c = collections("cranfield")
    q = c.qrels
    assert q["2"]["12"] == 4  # "2 12 1": a complete answer
    assert q["1"]["184"] == 3  # "1 184 2"
    assert q["1"]["12"] == 2  # "1 12 3"
    assert q["1"]["13"] == 1  # "1 13 4": minimum interest
    assert q["1"]["486"] == 0  # "1 486 -1": judged, not relevant
    grades = [g for rel in q.values() for g in rel.values()]
    assert {g: grades.count(g) for g in set(grades)} == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}


def test_cranfield_minus_one_rows_name_the_source_document(collections):
    c = collections("cranfield")
    first = c.queries[0]
    assert first.extra["source_documents"] == ["486"]
    assert "486" not in first.relevant_ids
    assert all(len(q.extra["source_documents"]) == 1 for q in c.queries)


def test_cranfield_scrambled_records_keep_their_text(collections):
    c = collections("cranfield")
    docs = {d.id: d for d in c.documents}
    # record 240 has stray .A/.B lines inside its abstract: their text stays in the abstract
    assert "application to turbulent separations" in docs["240"].text
    assert "zero the heat\ntransfer in a laminar separated flow" in docs["240"].text
    # records 576 and 578 have two .W sections each: both are kept
    assert "compressor operation with one or more blade rows stalled" in docs["578"].text
    assert any(n.get("record") == "240" for n in c.notes)
    assert docs["471"].text == "" and docs["995"].text == ""
    assert {"code": "collection.empty_documents", "n": 2, "ids": ["471", "995"]} in c.notes
    # text = title + blank line + abstract
    assert docs["1"].title == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert docs["1"].text.startswith("experimental investigation of the aerodynamics of a\nwing in a "
                                     "slipstream .\n\nexperimental investigation")
    assert "brenckman" not in docs["1"].text  # .A not used


# --- CISI, MEDLINE, ADI, NPL -------------------------------------------------------------------

def test_cisi_skips_cross_references_and_lists_unjudged(collections):
    c = collections("cisi")
    xref = re.compile(r"^\s*\d+\s+\d+\s+\d+\s*$", re.MULTILINE)
    assert not any(xref.search(d.text) for d in c.documents)
    assert not any(".X" in d.text for d in c.documents)
    assert len(c.unjudged) == 36
    assert c.unjudged[:4] == ("36", "38", "40", "47")
    assert all(not c.qrels.get(qid) for qid in c.unjudged)
    assert any(n["code"] == "collection.unjudged_queries" and (n["n"], n["total"]) == (36, 112) for n in c.notes)
    docs = {d.id: d for d in c.documents}
    assert docs["1"].title == "18 Editions of the Dewey Decimal Classifications"
    assert "Comaromi" not in docs["1"].text
    q58 = next(q for q in c.queries if q.id == "58")
    assert q58.query.startswith("Directions in Library Networking Bibliographic control")


def test_medline_and_adi_and_npl_texts(collections):
    med = collections("medline")
    assert med.queries[0].query == "the crystalline lens in vertebrates, including humans."
    assert med.queries[0].relevant_ids[:3] == ("13", "14", "15")
    adi = collections("adi")
    doc67 = next(d for d in adi.documents if d.id == "67")
    assert doc67.title == "a national plan for science abstracting and indexing services ."
    npl = collections("npl")
    assert npl.documents[0].id == "1"
    assert npl.documents[0].text.startswith("compact memories have flexible capacities")
    assert npl.queries[0].query == ("MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF "
                                    "MICROWAVE TECHNIQUES")
    assert npl.queries[0].relevant_ids[:2] == ("1239", "1502")


# --- malformed input ---------------------------------------------------------------------------

def _error(fn, *args, **kwargs) -> str:
    with pytest.raises(GabaritoError) as err:
        fn(*args, **kwargs)
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("snippet, line, words", [
    (".I 1\n.T\ntitle\n.Q\nbody\n", 4, "unknown field marker '.Q'"),
    (".I 1\n.W\nbody\n.I\n.W\nmore\n", 4, ".I must be followed by a record number"),
    (".I 1\n.W\nbody\n.I x2\n.W\nmore\n", 4, "found 'x2'"),
    ("stray\n.I 1\n.W\nbody\n", 1, "before the first .I"),
    (".I 1\n.W\nbody\n.I 01\n.W\nagain\n", 4, "repeats the one at line 1"),
    (".I 1\n.W extra words\nbody\n", 2, "followed by text"),
    (".I 1\nno marker yet\n", 2, "before any field marker"),
])
def test_malformed_glasgow_names_file_and_line(snippet, line, words):
    text = _error(parse_glasgow, snippet, "toy.all", "TABW")
    assert text.startswith("toy.all: record line ")
    assert f"line {line}:" in text and words in text


@pytest.mark.parametrize("layout, snippet, line, words", [
    ("cranfield", "1 184 2\n1 29\n", 2, "expected 3 columns"),
    ("trec", "1 0 13 1\n\n2 0 14\n", 3, "expected 4 columns"),
    ("smart", "1 17 0 0.000000\n1 17\n", 2, "expected 4 columns"),
    ("cranfield", "1 184 7\n", 1, "unknown relevance code 7"),
    ("trec", "1 0 x13 1\n", 1, "document id 'x13' is not a number"),
    ("smart", "1 17 0 0.0\n1 17 0 0.0\n", 2, "judged again (first at line 1)"),
])
def test_malformed_qrels_names_file_and_line(layout, snippet, line, words):
    text = _error(parse_qrels, snippet, "toy.rel", layout, grades=CRANFIELD_GRADES)
    assert text.startswith(f"toy.rel: record line {line}:") and words in text


@pytest.mark.parametrize("fn, snippet, line, words", [
    (parse_trec_documents, "<DOC>\n<DOCNO>1</DOCNO>\ntext\n</DOC>\n<DOC>\ntext\n</DOC>\n", 5, "<DOCNO> missing"),
    (parse_trec_documents, "<DOC>\n<DOCNO>1</DOCNO>\ntext\n</DOC>\n<DOC>\n<DOCNO>2</DOCNO>\n", 5, "without </DOC>"),
    (parse_trec_documents, "<DOC>\n<DOCNO>1</DOCNO>\ntext\n</DOC>\nloose\n", 5, "outside <DOC>"),
    (parse_trec_topics, "<top>\n<num>1</num><title>\nA\n</title>\n</top>\n<top>\n<title>B</title>\n</top>\n", 6,
     "<num> missing"),
])
def test_malformed_trec_names_file_and_line(fn, snippet, line, words):
    text = _error(fn, snippet, "toy.trec")
    assert text.startswith(f"toy.trec: record line {line}:") and words in text


def test_glasgow_repeats_are_joined_or_dropped():
    notes = []
    recs = parse_glasgow(".I 1\n.T\nsame title\n.A\nX\n.A\nY\n.T\n same  title\n.W\nabs\n.A\nstray\n.B\nbib\n",
                         "toy.all", "TABW", notes=notes)
    assert recs[0].fields == {"T": "same title", "A": "X\nY", "W": "abs\nstray", "B": "bib"}
    assert len(notes) == 2


def test_unknown_collection():
    assert "unknown collection" in _error(load_collection, "trec-covid")


# --- sanity check of the loader (not a benchmark) ----------------------------------------------

def test_bm25_on_cranfield_is_plausible(collections):
    bm25s = pytest.importorskip("bm25s")
    ir_measures = pytest.importorskip("ir_measures")
    c = collections("cranfield")
    ids = [d.id for d in c.documents]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([d.text for d in c.documents], stopwords="en", show_progress=False),
                    show_progress=False)
    queries = c.judged_queries()
    tokens = bm25s.tokenize([q.query for q in queries], stopwords="en", show_progress=False)
    hits, scores = retriever.retrieve(tokens, k=100, show_progress=False)
    run = {q.id: {ids[j]: float(s) for j, s in zip(hits[i], scores[i])} for i, q in enumerate(queries)}
    ndcg = ir_measures.nDCG @ 10
    score = ir_measures.calc_aggregate([ndcg], c.qrels, run)[ndcg]
    assert 0.3 < score < 0.7
    # keyed by the .I numbers instead of positions the same run scores next to nothing
    wrong = {str(int(q.extra["file_id"])): run[q.id] for q in queries}
    assert ir_measures.calc_aggregate([ndcg], c.qrels, wrong)[ndcg] < 0.05
