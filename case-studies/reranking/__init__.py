"""The reranking study: Second reading (reranking) on the help-center chunks."""
