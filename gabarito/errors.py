"""One exception type for bad input: a one-line message naming the file and the record."""

from __future__ import annotations


#: The exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


class GabaritoError(Exception):
    """A user-facing error. ``str(err)`` is a single line naming where the problem is."""

    def __init__(self, message: str, *, path: object | None = None, record: object | None = None):
        where = []
        if path is not None:
            where.append(str(path))
        if record is not None:
            where.append(f"record {record}")
        prefix = ": ".join(where)
        text = f"{prefix}: {message}" if prefix else message
        super().__init__(" ".join(text.split()))
        self.path = path
        self.record = record


def stderr_line(text: str) -> None:
    """Print one notice line on stderr, at once (the default ``notice`` of the index code)."""
    import sys

    print(text, file=sys.stderr, flush=True)


#: The exit status when stdout's reader went away (``| head``): 128 + SIGPIPE, as shells report it.
OUTPUT_GONE = 141


#: The signals that are stopping this process, in the order received (recorded by the handlers
#: below, read by :func:`stopped_by`).
_RECEIVED: list[int] = []


def _terminated(signum, _frame) -> None:
    import os
    import signal

    _RECEIVED.append(signum)
    os.write(2, f"gabarito: stopped by {signal.Signals(signum).name}\n".encode())
    raise SystemExit(128 + signum)


def interrupted(signum, _frame) -> None:
    """The SIGINT handler of the command (Python's own, plus a record of the signal)."""
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def stopped_by() -> int | None:
    """The first signal (SIGINT, SIGTERM, SIGHUP) that is stopping this process, or None."""
    return _RECEIVED[0] if _RECEIVED else None


def stopped_exit() -> int | None:
    """Once a stopping signal was received, the exit status for any exception on the way out (a
    module left half-imported by an interrupt fails in its own words: ``partially initialized
    module``, ``ImportError``, ``SystemError``), after one line: ``gabarito: interrupted`` (130) for
    SIGINT; SIGTERM and SIGHUP already printed theirs (128 + n). None when no signal was received."""
    import signal
    import sys

    signum = stopped_by()
    if signum is None:
        return None
    if signum == signal.SIGINT:
        print("gabarito: interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED
    return 128 + signum


def stop_on_termination() -> None:
    """SIGTERM and SIGHUP (where still at their defaults): one line, then ``SystemExit(128 + n)``,
    so every clean-up on the way out runs (temporary files, a reserved run folder, a server)
    instead of the process vanishing."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _terminated)


def output_gone() -> int:
    """stdout's reader went away: what is left to print goes to /dev/null, quietly. Returns
    :data:`OUTPUT_GONE`."""
    import os
    import sys

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return OUTPUT_GONE


def fault_line(exc: BaseException) -> str:
    """One line for a fault outside gabarito's checks (an ``OSError``: the path and the system's
    reason; a ``RecursionError``)."""
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to process (Python's recursion limit)"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    path = getattr(exc, "filename", None)
    return f"{path}: {reason}" if path is not None else f"{reason} ({type(exc).__name__})"


def run_main(main, argv=None) -> "NoReturn":  # noqa: F821 - annotation only
    """Run a script's ``main``; a :class:`GabaritoError`, an ``OSError`` or a ``RecursionError``
    becomes one line on stderr and exit 2, Ctrl-C (SIGINT) one line and exit 130, a closed
    stdout a quiet exit 141."""
    import sys

    try:
        code = main(argv)
        sys.stdout.flush()
    except GabaritoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = INTERRUPTED
    except BrokenPipeError:
        code = output_gone()
    except (OSError, RecursionError) as exc:
        print(f"error: {fault_line(exc)}", file=sys.stderr)
        code = 2
    raise SystemExit(code)
