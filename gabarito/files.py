"""Reading project files with one-line errors (the file and the line named)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from gabarito.errors import GabaritoError


def read_json(path: str | Path, *, missing: str = "file not found"):
    """Parse a JSON file (a leading byte-order mark is skipped); a missing file, invalid JSON or
    JSON nested too deeply to parse is a one-line :class:`GabaritoError`."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except RecursionError:
        raise GabaritoError("JSON nested too deeply to read (more than about 1,000 levels of [ or {)",
                            path=path) from None
    except FileNotFoundError:
        raise GabaritoError(missing, path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno}", path=path) from None


def columns(path: str | Path, n: int, what: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each non-blank whitespace-separated line, which must have ``n``
    fields (``what`` names the format in the error, e.g. "a TREC run line")."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading byte-order mark is no part of the first id
    except FileNotFoundError:
        raise GabaritoError("file not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            parts = line.split()
            if len(parts) != n:
                raise GabaritoError(f"{what} has {n} columns", path=path, record=f"line {lineno}")
            yield lineno, parts


def number(text: str, kind: type, path: str | Path, lineno: int, what: str):
    """``kind(text)`` (int or float); anything else is a one-line error naming the line."""
    try:
        return kind(text)
    except ValueError:
        raise GabaritoError(f"{what} {text!r} is not {'an integer' if kind is int else 'a number'}",
                            path=path, record=f"line {lineno}") from None
