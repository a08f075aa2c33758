"""The flagship's two protocol gold sets (name only, disjoint): sampling, checking, freezing."""
