"""How the cost page's measurements were set up, read from their results' provenance: counts and
names, no sentences (the page reads these instead of the results' keys)."""

from __future__ import annotations

from typing import Mapping


def encode_setup(encoders: Mapping) -> dict:
    """``encoders.json``: the passages encoded (how many, from which collection) and the rounds."""
    prov = encoders["provenance"]
    return {"passages": prov["corpus"]["passages"], "collection": prov["corpus"]["collection"],
            "rounds": prov["parameters"]["rounds"]}


def n_collections(bm25: Mapping) -> int:
    """``bm25.json``: how many collections the BM25 engines were measured on."""
    return len(bm25["collections"])


def largest_size(vectors: Mapping) -> int:
    """``vectors.json``: the largest number of vectors an index was built over."""
    return max(int(k) for k in vectors["sizes"])


def n_measures(measures: Mapping) -> int:
    """``measures.json``: how many measures the evaluation-speed runs computed."""
    return len(measures["provenance"]["parameters"]["measures"])
