"""The standard_collections study: Classic test collections with human relevance judgments."""
