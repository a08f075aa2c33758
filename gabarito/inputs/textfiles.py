"""Strict readers shared by the document and evaluation loaders.

Text is strict UTF-8 (the error gives the byte offset) with a leading byte-order mark removed;
every failure is a one-line :class:`GabaritoError` naming the file (and the line, in ``.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.errors import GabaritoError


def _read_text(path: Path, what: str) -> str:
    """The file as text: strict UTF-8 (the error gives the byte offset), BOM removed. Only a
    regular file is read (a device such as /dev/zero, or a pipe, could be read without end)."""
    try:
        if path.exists() and not path.is_file() and not path.is_dir():
            raise GabaritoError(f"{what} is not a regular file (a device or a pipe)", path=path)
        data = path.read_bytes()
    except FileNotFoundError:
        raise GabaritoError(f"{what} not found", path=path) from None
    except IsADirectoryError:
        raise GabaritoError(f"{what} is a folder, expected a file", path=path) from None
    except OSError as exc:
        raise GabaritoError(f"cannot read {what} ({exc.strerror or exc})", path=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    return text[1:] if text.startswith("\ufeff") else text


#: The one line for JSON nested deeper than the parser's recursion allows (about 1,000 levels).
TOO_DEEP = "JSON nested too deeply to read (more than about 1,000 levels of [ or {)"


def _read_json_list(path: Path, what: str) -> list:
    text = _read_text(path, what)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                            path=path) from None
    except RecursionError:
        raise GabaritoError(TOO_DEEP, path=path) from None
    if not isinstance(data, list):
        raise GabaritoError(f"expected a JSON list of records, got a JSON {_json_kind(data)}", path=path)
    return data


def _read_jsonl(path: Path, what: str) -> list[tuple[int, object]]:
    """``(line number, parsed value)`` for each non-blank line."""
    out = []
    for lineno, line in enumerate(_read_text(path, what).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise GabaritoError(f"invalid JSON: {exc.msg}", path=path, record=f"line {lineno}") from None
        except RecursionError:
            raise GabaritoError(TOO_DEEP, path=path, record=f"line {lineno}") from None
    return out


def _json_kind(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _as_id(value: object) -> str | None:
    """A usable id: a non-empty string without surrounding blanks, or an integer (made a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip() and value == value.strip():
        return value
    return None


def _label(index: int, rid: str | None) -> str:
    return f"{index} ({rid})" if rid is not None else str(index)


def record_id(rec: object, key: str, path: Path, where: int) -> str:
    """The id under ``key`` of a JSON record that must be an object; else a one-line error (a
    number with a decimal point or a boolean is refused by name, not reported as missing)."""
    if not isinstance(rec, dict):
        raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=path, record=where)
    value = rec.get(key)
    if isinstance(value, (float, bool)):  # named, rather than reported as missing
        raise GabaritoError(f"{key!r} is the {type(value).__name__} {value!r}, not an id; ids are strings "
                            f"or whole numbers without a decimal point", path=path, record=where)
    rid = _as_id(value)
    if rid is None:
        raise GabaritoError(f"missing or empty {key!r}" + (" (a non-empty string)" if key == "id" else ""),
                            path=path, record=where)
    return rid
