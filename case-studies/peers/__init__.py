"""The peers study: ArcadeDB beside the engines a user would pick instead: BM25, vectors, encoders."""
