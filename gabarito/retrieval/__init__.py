"""gabarito.retrieval."""
