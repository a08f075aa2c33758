"""The BM25 engines the peers benchmark puts beside ArcadeDB, each matched to ArcadeDB's FULL_TEXT
index as far as the engine allows: Lucene's StandardAnalyzer tokens (UAX #29 words, lower case,
no stop words, no stemming), BM25 with k1=1.2 and b=0.75, a question's distinct terms OR-ed.

* **bm25s** (:class:`~gabarito.measure.parity.BM25Reference`): same idf and saturation, exact
  document lengths, the standard analyzer reproduced in Python. Fully matched.
* **Tantivy**: documents and questions analysed by the same Python tokens, indexed with
  Tantivy's whitespace tokenizer; BM25 k1=1.2, b=0.75 are Tantivy's fixed constants (not
  settable), its idf is Lucene's; document lengths are stored in one byte (lossy), so scores of
  documents of close lengths can tie or swap.
* **Lucene** through Pyserini (Anserini's jar, on ArcadeDB's bundled Java runtime): the same
  Python tokens given pre-tokenized (whitespace analyzer), BM25Similarity(1.2, 0.75) via
  ``set_bm25``; Lucene also stores document lengths in one byte (lossy, like Tantivy).

Every engine answers ``search(question, k) -> [(doc id, score)]``, score descending then doc id.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping

from gabarito.errors import GabaritoError
from gabarito.core.runs import by_score
from gabarito.measure.parity import ARCADEDB_BM25_B, ARCADEDB_BM25_K1
from gabarito.retrieval.analyzer import lucene_standard_tokens


def _ranked(pairs, k: int) -> list[tuple[str, float]]:
    return by_score(pairs)[:k]


def distinct_terms(question: str) -> list[str]:
    return list(dict.fromkeys(lucene_standard_tokens(question)))


class TantivyBM25:
    """Tantivy over pre-analysed text (whitespace tokenizer), in RAM, one segment."""

    name = "tantivy"

    def __init__(self, docs: Mapping[str, str], *, tie_margin: int = 10):
        import tantivy

        self.tantivy, self.tie_margin = tantivy, tie_margin
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("id", stored=True, tokenizer_name="raw")
        builder.add_text_field("body", tokenizer_name="ws", index_option="freq")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.index.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        for doc_id, text in docs.items():
            writer.add_document(tantivy.Document(id=doc_id, body=" ".join(lucene_standard_tokens(text))))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self.version = getattr(tantivy, "__version__", None) or dist_version("tantivy")

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        terms = distinct_terms(question)
        if not terms or k <= 0:
            return []
        t = self.tantivy
        query = t.Query.boolean_query([(t.Occur.Should, t.Query.term_query(self.schema, "body", term))
                                       for term in terms])
        hits = self.searcher.search(query, k + self.tie_margin).hits
        return _ranked(((self.searcher.doc(addr)["id"][0], float(score)) for score, addr in hits), k)


def java_home() -> str:
    """The Java runtime that ``arcadedb-embedded`` bundles (Java 21+, what Anserini needs)."""
    import arcadedb_embedded

    jre = Path(arcadedb_embedded.__file__).resolve().parent / "jre"
    if not (jre / "bin" / "java").exists():
        raise GabaritoError("arcadedb-embedded has no bundled jre/", path=jre)
    return str(jre)


class LuceneBM25:
    """Lucene (Anserini through Pyserini): a pre-tokenized index written by ``LuceneIndexer``,
    searched by ``LuceneSearcher`` with a whitespace analyzer and BM25(1.2, 0.75)."""

    name = "lucene"

    def __init__(self, docs: Mapping[str, str], folder: Path, *, tie_margin: int = 10):
        if not os.environ.get("JAVA_HOME"):
            os.environ["JAVA_HOME"] = java_home()
        os.environ.setdefault("OPENAI_API_KEY", "unused")  # pyserini imports an OpenAI client at import time
        from pyserini.index.lucene import LuceneIndexer  # first: it puts Anserini's jar on the JVM's classpath
        from pyserini.search.lucene import LuceneSearcher
        from jnius import autoclass  # noqa: I001 - after pyserini, which starts the JVM

        self.tie_margin = tie_margin
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="lucene-", dir=folder)
        indexer = LuceneIndexer(self.dir, args=["-index", self.dir, "-pretokenized", "-storeRaw"], threads=1)
        for doc_id, text in docs.items():
            indexer.add_doc_dict({"id": doc_id, "contents": " ".join(lucene_standard_tokens(text))})
        indexer.close()
        self.searcher = LuceneSearcher(self.dir)
        self.searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
        self.searcher.set_bm25(ARCADEDB_BM25_K1, ARCADEDB_BM25_B)
        self.version = dist_version("pyserini")

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        terms = distinct_terms(question)
        if not terms or k <= 0:
            return []
        hits = self.searcher.search(" ".join(terms), k=k + self.tie_margin)
        return _ranked(((h.docid, float(h.score)) for h in hits), k)


def dist_version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"
