"""The benchmark_rrf study: Word vs meaning vs fusion on the Social_Acceptance ontology."""
