"""One exception type for bad input: a one-line message naming the file and the record."""

from __future__ import annotations


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
