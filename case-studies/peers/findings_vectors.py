"""The cost page's vector-engine rows (``vectors.json``): per size, engine and width, with the keys
the page's ledger records and their identities. Re-exported by :mod:`studies.peers.findings`."""

from __future__ import annotations

from typing import Mapping


def split_search(name: str) -> tuple[str, int | None]:
    """``"hnswlib@100"`` -> ``("hnswlib", 100)``; ``"arcadedb@20"`` -> ``("arcadedb_vector", 20)``."""
    engine, _, width = name.partition("@")
    return ("arcadedb_vector" if engine == "arcadedb" else engine), (int(width) if width else None)


def vector_rows(vectors: Mapping) -> list[dict]:
    """Per size, engine and width: recall@10, qps, ratio to ArcadeDB at the same width (or at its
    widest, for the exact engines), build seconds and memory; ``keys``: where recall, build and
    memory sit in the results (ArcadeDB's build is its load plus its graph, both under its key)."""
    out = []
    for size, st in vectors["sizes"].items():
        searches = st["searches"]
        arcade = {split_search(k)[1]: v for k, v in searches.items() if k.startswith("arcadedb@")}
        widest = arcade[max(arcade)] if arcade else None
        arc = st.get("arcadedb") or {}
        for name, v in searches.items():
            engine, width = split_search(name)
            ref = arcade.get(width, widest) if engine != "arcadedb_vector" else v
            built = st["engines"].get(engine) or {}
            build_s = (arc.get("ingest_s", 0) + arc.get("build_s", 0)) if engine == "arcadedb_vector" else built.get("build_s")
            memory = ((arc.get("memory_mb") or {}).get("after_build") or {}).get("rss_mb") \
                if engine == "arcadedb_vector" else built.get("rss_growth_mb")
            arcade_key = ["sizes", size, "arcadedb"]
            keys = {"recall": ["sizes", size, "searches", name, "recall@10", "mean"],
                    "build_s": arcade_key if engine == "arcadedb_vector"
                    else ["sizes", size, "engines", engine, "build_s"],
                    "memory_mb": arcade_key + ["memory_mb", "after_build", "rss_mb"] if engine == "arcadedb_vector"
                    else ["sizes", size, "engines", engine, "rss_growth_mb"]}
            out.append({"n": int(size), "engine": engine, "width": width, "recall": v["recall@10"]["mean"],
                        "qps": v["qps"], "median_ms": v["latency_ms"]["median"],
                        "ratio": (v["qps"] / ref["qps"]) if ref else None, "build_s": build_s, "memory_mb": memory,
                        "keys": keys})
    return out


def vector_identity(row: Mapping, measure: str):
    """The ledger identity (:class:`gabarito.publish.ledger.Identity`) of a :func:`vector_rows` number:
    this study's synthetic vectors at the row's size and its engine; a recall also names the width
    (``exact`` for the exact engines), which changes it, where a build or a memory does not."""
    from gabarito.publish.ledger import Identity

    width = "exact" if row["width"] is None else f"width {row['width']}"
    return Identity("peers", measure, collection=f"synthetic, {row['n']} vectors", method=row["engine"],
                    variant=width if measure.startswith("ann_recall") else "")


def arcadedb_rows(vectors: Mapping, n: int) -> list[dict]:
    """ArcadeDB's :func:`vector_rows` at ``n`` vectors, narrowest search width first."""
    return sorted((r for r in vector_rows(vectors) if r["engine"] == "arcadedb_vector" and r["n"] == n),
                  key=lambda r: r["width"])


def vector_floor(vectors: Mapping) -> list[dict]:
    """Per size: the HTTP floor and ArcadeDB's kNN median over it, per width."""
    out = []
    for size, st in vectors["sizes"].items():
        floor = (st.get("http_floor_ms") or {}).get("median")
        if not floor:
            continue
        for name, v in st["searches"].items():
            if name.startswith("arcadedb@"):
                out.append({"n": int(size), "width": split_search(name)[1], "floor_ms": floor,
                            "knn_ms": v["latency_ms"]["median"], "over_floor": v["latency_ms"]["median"] / floor})
    return out
