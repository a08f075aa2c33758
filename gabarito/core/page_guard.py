"""No statistic is computed while a page builds (issue 40, item 2).

A page reads the intervals, tests and corrections its study stored; it never computes one. The
site's executor sets :data:`PAGE_ENV` in each page's kernel to the page's path, and every
statistic of the library (:mod:`gabarito.measure.stats`' bootstrap, randomization test, Holm and
Wilson; the sign test; the kappas of :mod:`gabarito.measure.agreement`) calls :func:`refuse` first:
under that variable it is one line naming the page and the statistic, so a page that would compute
one fails to build instead of showing a number its study did not record.
"""

from __future__ import annotations

import os

from gabarito.errors import GabaritoError

#: Set to the page's path (relative to the project) in the kernel that runs it.
PAGE_ENV = "GABARITO_PAGE_BUILDING"
_examples: list[str] = []  # the reasons of the worked examples open now


def begin_example(why: str) -> None:
    """Let the next cells compute statistics: a worked example the page shows as code (``why``)."""
    if not why.strip():
        raise GabaritoError("a worked example that computes statistics on a page needs its reason")
    _examples.append(why)


def end_example() -> None:
    """Close the worked example :func:`begin_example` opened: statistics are refused again."""
    if not _examples:
        raise GabaritoError("end_example without begin_example")
    _examples.pop()


def refuse(what: str) -> None:
    """One line when ``what`` (a statistic) is computed while a page builds; nothing otherwise."""
    page = os.environ.get(PAGE_ENV)
    if page and not _examples:
        raise GabaritoError(f"{what} computed while the page builds: a page reads the statistics its study "
                            f"stored (store it with the study's --statistics-only)", path=page)


def stored(block, key: str):
    """The statistic ``key`` a study stored in ``block`` (a mapping of its results); one line when
    the results were written before the study stored it."""
    try:
        return block[key]
    except KeyError:
        raise GabaritoError(f"the results hold no stored {key!r}: they predate it; add it with the study's "
                            f"--statistics-only (no search, no training)") from None
