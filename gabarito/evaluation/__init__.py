"""``gabarito evaluate`` / ``gabarito compare``: measure search on your own documents and questions.

The public names live in small modules and are gathered here:
:mod:`~gabarito.evaluation.config` (what a run measures), :mod:`~gabarito.evaluation.engines`
(its retrievers), :mod:`~gabarito.evaluation.run` (the run), :mod:`~gabarito.evaluation.rows`
(per-query rows and the summary, made of the scorer's :class:`~gabarito.measure.report.Report`),
:mod:`~gabarito.evaluation.runlog` (spreadsheet, run.json, TREC run and qrels, manifest, log),
:mod:`~gabarito.evaluation.text` (terminal summary), :mod:`~gabarito.evaluation.compare` (two runs or
more) and :mod:`~gabarito.evaluation.paired` (their Report, through ``score_runs``).
"""

from gabarito.evaluation.config import (ANALYZERS, CSV_COLUMNS, DEFAULT_MODEL, ENGINES, HIT_AT, METHODS,
                                        EvalConfig, config_hash)
from gabarito.evaluation.rows import GRADED_DEFAULT, summarize
from gabarito.evaluation.run import run_evaluation
from gabarito.evaluation.runlog import results_csv, unique_run_id, write_run
from gabarito.evaluation.text import format_summary

__all__ = ["ANALYZERS", "CSV_COLUMNS", "DEFAULT_MODEL", "ENGINES", "GRADED_DEFAULT", "HIT_AT", "METHODS",
           "EvalConfig", "config_hash", "format_summary", "results_csv", "run_evaluation", "summarize",
           "unique_run_id", "write_run"]
