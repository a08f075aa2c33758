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


def run_main(main, argv=None) -> "NoReturn":  # noqa: F821 - annotation only
    """Run a script's ``main``; a :class:`GabaritoError` becomes one line on stderr and exit 2,
    Ctrl-C (SIGINT) one line and exit 130."""
    import sys

    try:
        code = main(argv)
    except GabaritoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = INTERRUPTED
    raise SystemExit(code)
