"""Judging a user's own results: blind pools, a judging page, agreement and frozen graded qrels.

The loop after ``gabarito evaluate``:

* :mod:`~gabarito.judging.pool` (``gabarito pool``): the union of several runs' top results per
  question plus the known answers, deduplicated and shuffled by a recorded seed, with the
  question and candidate texts and no trace of which run found what; frozen (sha256 manifest)
  when written, before anyone judges;
* :mod:`~gabarito.judging.page` (``gabarito judge``): one self-contained Portuguese page that
  shows one question and one candidate at a time beside the grading guide and exports the
  grades as a JSON file carrying the pool's sha256 and the assessor;
* :mod:`~gabarito.judging.grades` reads those files back, refusing one made for another pool;
* :mod:`~gabarito.judging.importing` (``gabarito judgments import``): Cohen's kappa with
  intervals and the confusion matrix (:mod:`gabarito.measure.agreement`), the disagreements as
  a new pool for an adjudicator, and the graded qrels, frozen;
* :mod:`~gabarito.judging.staging`: each command's files placed together or not at all (a file
  and its freeze manifest never apart), nothing overwritten that must not be, no temporary file
  left by Ctrl-C, SIGTERM or a full or read-only disk, which is one line naming the file.

This package sits on the evaluation floor (``tests/test_layers.py``).
"""
