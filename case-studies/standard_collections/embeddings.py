"""Prefill the classic collections' vector cache
(:mod:`gabarito.retrieval.models.collection_vectors`), both models, every collection named.

    python case-studies/standard_collections/embeddings.py adi cranfield   # prefill the cache
"""

from __future__ import annotations

import sys

from gabarito.retrieval.models.collection_vectors import MODELS, Vectors
from gabarito.study.runner import say


def main(argv=None) -> int:
    from gabarito.inputs.collections import load_collection

    names = (argv if argv is not None else sys.argv[1:]) or ["adi", "medline", "cisi", "cranfield", "npl"]
    vec = Vectors()
    loaded = {n: load_collection(n) for n in names}
    for key in MODELS:  # the small model first everywhere, then the large one
        for name, c in loaded.items():
            vec.documents(key, [d.text for d in c.documents], name)
            vec.query_vectors(key, [q.query for q in c.queries], name)
            say(f"{name} {key}: done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
