"""The one progress bar of every long step (encoding, indexing, searching, reranking, training,
pooling, the site's notebook execution).

:func:`bar` wraps tqdm: a count, a rate and the time left, on stderr. Whether it is drawn is decided
here and nowhere else (:func:`shown`): only when the caller asks for it, stderr is a terminal and
gabarito is not quiet. Quiet is the ``GABARITO_QUIET`` variable (``1``); ``--quiet`` on the commands
that do long work sets it (:func:`set_quiet`), so study scripts and the kernels of the site build,
which are child processes, inherit it.

The libraries' own bars (sentence-transformers' "Batches", Hugging Face's "Loading weights" and
downloads) are switched off in favour of ours by :func:`silence_library_bars`: they would print
into study logs even when stderr is not a terminal.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

from tqdm import tqdm

QUIET_ENV = "GABARITO_QUIET"
_HF_ENV = "HF_HUB_DISABLE_PROGRESS_BARS"

T = TypeVar("T")


def quiet() -> bool:
    """True when ``GABARITO_QUIET`` is set to anything but empty, ``0``, ``false`` or ``no``."""
    return os.environ.get(QUIET_ENV, "").strip().lower() not in ("", "0", "false", "no")


def set_quiet(value: bool = True) -> None:
    """Make this process and its children quiet (``--quiet``), or not."""
    if value:
        os.environ[QUIET_ENV] = "1"
    else:
        os.environ.pop(QUIET_ENV, None)


def shown(requested: bool = True) -> bool:
    """Whether a bar is drawn: asked for, not quiet, and stderr a terminal."""
    if not requested or quiet():
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def bar(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str | None = None,
        unit: str = "it", show: bool = True) -> tqdm:
    """A tqdm bar on stderr (count, rate, time left), drawn only when :func:`shown` says so.

    Use it over an iterable (``for x in bar(items, desc=...)``) or as a context manager with
    ``update(n)``; ``show=False`` is the caller's own "no bar here" (a library call asked to be
    silent). A bar that is not drawn costs nothing and writes nothing."""
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    drawn = shown(show)
    size = _fixed_size() if drawn else None
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=not drawn,
                dynamic_ncols=size is None, ncols=size and size[0], nrows=size and size[1])


def _fixed_size() -> tuple[int, int] | None:
    """None when the terminal says how large it is (the bar follows it), else 80 x 20: tqdm draws
    nothing on a terminal that reports 0 x 0 (a bare pseudo-terminal)."""
    try:
        columns, lines = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return 80, 20
    return None if columns > 0 and lines > 0 else (80, 20)


def silence_library_bars() -> None:
    """Switch off Hugging Face's bars (hub downloads, transformers' "Loading weights"): already
    imported libraries are told directly, later imports read the variable."""
    os.environ[_HF_ENV] = "1"
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None and hasattr(hub, "disable_progress_bars"):
        hub.disable_progress_bars()
    logging = sys.modules.get("transformers.utils.logging")
    if logging is not None and hasattr(logging, "disable_progress_bar"):
        logging.disable_progress_bar()
