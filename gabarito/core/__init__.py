"""The bottom floor: the types every other package shares and imports from here.

* :mod:`gabarito.core.runs` -- :class:`~gabarito.core.runs.Run`, :class:`~gabarito.core.runs.Qrels`,
  the one tie rule (:func:`~gabarito.core.runs.by_score`) and TREC run/qrels reading and writing;
* :mod:`gabarito.core.measures` -- measure declarations (:class:`~gabarito.core.measures.Measure`,
  parsed from names such as ``nDCG@10``);
* :mod:`gabarito.core.signtest` -- the exact sign test (shared by the statistics and the rerankers).

Nothing here imports a gabarito package above it (only ``errors``, ``files``, ``hashing``);
``tests/test_layers.py`` keeps it so.
"""
