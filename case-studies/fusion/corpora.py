"""The corpora of the fusion study: the flagship's concepts and the five classic collections.

Each :class:`Corpus` says what ArcadeDB indexes (type, text fields, analyzer, rows), which text
the dense model reads, which judged question sets it is scored on, and how its vectors come:

* **social_acceptance** -- the flagship's Social_Acceptance concepts exactly as
  ``benchmark_rrf/run_benchmark.py`` indexes them (type ``Concept``, the text fields of
  :data:`~gabarito.inputs.corpus.SEARCH_FIELDS`, ArcadeDB's default analyzer; the vector reads
  ``name: description``), judged by the flagship's five frozen gold sets, each loaded with
  :func:`~gabarito.inputs.gold.load_gold` (one relevant concept per question). Vectors come from
  the flagship's vector cache.
* **adi, medline, cranfield, cisi, npl** -- each classic collection as
  :func:`~gabarito.inputs.collections.load_collection` reads it (type ``Doc``, one field ``text``,
  Lucene's EnglishAnalyzer: the BM25 the classic-collections chapter fuses on all five), judged by
  its frozen ``standard_collections/qrels/<name>.txt``. Document and query vectors come from the
  classic-collections study's cache (its ``embeddings.py``), so neither study encodes twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_bytes, sha256_file
from gabarito.inputs.collections.registry import content_sha256, load_frozen
from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis
from gabarito.inputs.datasets import dataset_file
from gabarito.inputs.gold import load_gold
from gabarito.core.runs import Qrels
from gabarito.retrieval.models import EmbeddingCache
from gabarito.retrieval.models.collection_vectors import MODELS, Vectors
from gabarito.retrieval.protocol import Queries

MODEL_KEY = "mpnet"
MODEL = MODELS[MODEL_KEY]  # sentence-transformers/all-mpnet-base-v2
FLAGSHIP = "social_acceptance"
#: The flagship's gold sets, in report order: key -> file, relative to this study's folder.
FLAGSHIP_SETS = {
    "main": "../benchmark_rrf/questions.json",
    "extended": "../benchmark_rrf/questions_extended.json",
    "published": "../benchmark_rrf/questions_published.json",
    "name_only": "../benchmark_rrf/protocols/questions_name_only.json",
    "disjoint": "../benchmark_rrf/protocols/questions_disjoint.json",
}
CLASSIC = ("adi", "medline", "cranfield", "cisi", "npl")
#: Every corpus, smallest first (so the quick ones are done before any long encoding starts).
ORDER = ("adi", "medline", FLAGSHIP, "cranfield", "cisi", "npl")
CLASSIC_ANALYZER = "english"
FLAGSHIP_VECTOR_TEXT = "name with spaces + ': ' + description"


@dataclass
class Corpus:
    key: str
    database: str
    type_name: str
    fields: list[str]
    analyzer: str | None
    rows: list[dict]
    vector_texts: list[str]
    sets: dict[str, Qrels]            # gold set -> judgments (judged questions only)
    gold_files: dict[str, str]        # gold set -> frozen file, relative to the study folder
    queries: Queries
    record: dict                      # for the provenance
    parts: dict = field(default_factory=dict)  # what the index fingerprint covers

    def set_queries(self, key: str) -> Queries:
        return self.queries.subset(self.sets[key].judged())


def limited(ids: list[str], limit: int | None) -> list[str]:
    """The first ``limit`` ids in sorted order (all of them when ``limit`` is None): a development subset."""
    ids = sorted(ids)
    return ids if limit is None else ids[:limit]


def load_flagship(ctx, limit: int | None = None) -> Corpus:
    path = dataset_file(FLAGSHIP, "social_acceptance.syno", mirror=ctx.mirror())
    concepts = load_synesis(path)
    names = [c.name for c in concepts]
    sets, gold_files, texts = {}, {}, {}
    for key, rel in FLAGSHIP_SETS.items():
        if rel not in ctx.gold_sha256:
            raise GabaritoError(f"{rel} is not frozen in a manifest of study.json", path=ctx.spec.dir / "study.json")
        pairs = load_gold(ctx.spec.dir / rel, names)
        keep = set(limited([p.id for p in pairs], limit))
        sets[key] = Qrels.single({p.id: p.gold for p in pairs if p.id in keep})
        texts.update({p.id: p.question for p in pairs if p.id in keep})
        gold_files[key] = rel
    ids = sorted(texts)
    sha = sha256_file(path)
    record = {"name": FLAGSHIP, "file": path.name, "sha256": sha, "n_docs": len(concepts),
              "vector_text": FLAGSHIP_VECTOR_TEXT, "text_fields": list(SEARCH_FIELDS), "analyzer": "default"}
    parts = {"corpus_sha256": sha, "type_name": "Concept", "fields": list(SEARCH_FIELDS), "analyzer": None,
             "vector_text": FLAGSHIP_VECTOR_TEXT}
    return Corpus(FLAGSHIP, "fusion_social_acceptance", "Concept", list(SEARCH_FIELDS), None,
                  [{"doc_id": c.name, **c.search_fields()} for c in concepts], [c.text() for c in concepts],
                  sets, gold_files, Queries(ids, [texts[i] for i in ids]), record, parts)


def load_classic(ctx, name: str, limit: int | None = None) -> Corpus:
    """A classic collection, once its judgments are known to equal the frozen qrels file."""
    rel = f"../standard_collections/qrels/{name}.txt"
    if rel not in ctx.gold_sha256:
        raise GabaritoError(f"{rel} is not frozen in a manifest of study.json", path=ctx.spec.dir / "study.json")
    c, frozen = load_frozen(name, ctx.spec.dir / rel, mirror=ctx.mirror())
    keep = limited(frozen.judged(), limit)
    qrels = Qrels({q: frozen[q] for q in keep})
    text_of = {q.id: q.query for q in c.queries}
    sha = content_sha256(c)
    record = {"name": name, "corpus_sha256": sha, "n_docs": len(c.documents), "n_queries": len(c.queries),
              "n_judged": len(frozen.judged()), "text_fields": c.text_fields, "analyzer": CLASSIC_ANALYZER}
    parts = {"collection": name, "corpus_sha256": sha, "type_name": "Doc", "fields": ["text"],
             "analyzer": CLASSIC_ANALYZER}
    return Corpus(name, f"fusion_{name}", "Doc", ["text"], CLASSIC_ANALYZER,
                  [{"doc_id": d.id, "text": d.text} for d in c.documents], [d.text for d in c.documents],
                  {name: qrels}, {name: rel}, Queries(keep, [text_of[q] for q in keep]), record, parts)


def load_corpus(ctx, key: str, limit: int | None = None) -> Corpus:
    return load_flagship(ctx, limit) if key == FLAGSHIP else load_classic(ctx, key, limit)


def embed(corpus: Corpus, vec: Vectors) -> np.ndarray:
    """The corpus's document vectors (cache first), with the query vectors put into its Queries.

    The flagship's documents use the flagship's cache, the classic collections' documents the
    classic-collections study's cache; every question goes through that study's query cache
    (batched, and exact because all-mpnet-base-v2 puts no prefix before queries or documents)."""
    encoder = vec.encoder(MODEL_KEY)
    if corpus.key == FLAGSHIP:
        cache = EmbeddingCache()
        docs = cache.encode(encoder, corpus.vector_texts, progress=True)
        vec.report[f"{corpus.key}/{MODEL_KEY}/documents"] = {"hits": cache.hits, "misses": cache.misses}
    else:
        docs = vec.documents(MODEL_KEY, corpus.vector_texts, corpus.key)
    corpus.queries.vectors_by_model[encoder.model_id] = vec.query_vectors(MODEL_KEY, corpus.queries.texts, corpus.key)
    corpus.record["mpnet_vectors_sha256"] = sha256_bytes(np.ascontiguousarray(docs).tobytes())
    corpus.parts.update({"model_id": encoder.model_id, "weights_sha256": encoder.weights_sha256,
                         "dim": int(docs.shape[1]), "vectors_sha256": corpus.record["mpnet_vectors_sha256"]})
    return docs
