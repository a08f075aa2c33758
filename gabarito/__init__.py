"""gabarito: reproducible measurements of search quality (word, meaning, fusion, reranking)."""

__version__ = "0.1.0"
