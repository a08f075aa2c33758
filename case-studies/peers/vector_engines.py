"""The in-process vector engines of the peers benchmark, each with a build and a search at a given
search width. Graph settings match ArcadeDB's LSM_VECTOR defaults where the engine has them
(``maxConnections=32``, ``beamWidth=100``: M=32, efConstruction=100); vectors are unit length
and the metric is the inner product (= cosine). Builds use every core the engine wants; searches
are one query per call on one thread.

``search(vector, k, width) -> list[int]`` returns row indices, best first; ``width`` is efSearch
(FAISS HNSW, hnswlib), expansion_search (usearch), ignored by the exact engines.
"""

from __future__ import annotations

import os
from importlib import metadata

import numpy as np

M = 32
EF_CONSTRUCTION = 100


def dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def rss_mb() -> float | None:
    from gabarito.measure.scaling import process_memory

    got = process_memory(os.getpid())
    return got["rss_mb"] if got else None


class NumpyExact:
    name, exact, package = "numpy_exact", True, "numpy"

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix

    def search(self, v: np.ndarray, k: int, width: int | None = None) -> list[int]:
        sims = self.matrix @ v
        part = np.argpartition(-sims, k - 1)[:k]
        return part[np.lexsort((part, -sims[part]))].tolist()


class FaissFlat:
    name, exact, package = "faiss_flat", True, "faiss-cpu"

    def __init__(self, matrix: np.ndarray):
        import faiss

        self.faiss = faiss
        self.index = faiss.IndexFlatIP(matrix.shape[1])
        self.index.add(matrix)

    def search(self, v: np.ndarray, k: int, width: int | None = None) -> list[int]:
        return self.index.search(v[None, :], k)[1][0].tolist()


class FaissHNSW:
    name, exact, package = "faiss_hnsw", False, "faiss-cpu"

    def __init__(self, matrix: np.ndarray):
        import faiss

        self.index = faiss.IndexHNSWFlat(matrix.shape[1], M, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = EF_CONSTRUCTION
        self.index.add(matrix)
        self.params = {}
        self.faiss = faiss

    def search(self, v: np.ndarray, k: int, width: int | None = None) -> list[int]:
        params = self.params.get(width)
        if params is None:
            params = self.params[width] = self.faiss.SearchParametersHNSW(efSearch=int(width))
        return self.index.search(v[None, :], k, params=params)[1][0].tolist()


class Hnswlib:
    name, exact, package = "hnswlib", False, "hnswlib"

    def __init__(self, matrix: np.ndarray):
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=matrix.shape[1])
        self.index.init_index(max_elements=matrix.shape[0], M=M, ef_construction=EF_CONSTRUCTION, random_seed=0)
        self.index.add_items(matrix, np.arange(matrix.shape[0]), num_threads=os.cpu_count() or 1)
        self.index.set_num_threads(1)
        self.width = None

    def search(self, v: np.ndarray, k: int, width: int | None = None) -> list[int]:
        if width != self.width:
            self.index.set_ef(max(int(width), k))
            self.width = width
        return self.index.knn_query(v[None, :], k=k, num_threads=1)[0][0].tolist()


class Usearch:
    name, exact, package = "usearch", False, "usearch"

    def __init__(self, matrix: np.ndarray):
        from usearch.index import Index

        self.index = Index(ndim=matrix.shape[1], metric="ip", dtype="f32", connectivity=M,
                           expansion_add=EF_CONSTRUCTION)
        self.index.add(np.arange(matrix.shape[0]), matrix, threads=os.cpu_count() or 1)

    def search(self, v: np.ndarray, k: int, width: int | None = None) -> list[int]:
        if self.index.expansion_search != int(width):
            self.index.expansion_search = int(width)
        return self.index.search(v, k, threads=1).keys.tolist()


ENGINES = (NumpyExact, FaissFlat, FaissHNSW, Hnswlib, Usearch)
