"""The judgments study: Graded, pooled relevance judgments of the flagship's gold sets, with assessor agreement."""
