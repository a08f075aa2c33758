"""Strict readers shared by the document and evaluation loaders.

Text is strict UTF-8 (the error gives the byte offset) with a leading byte-order mark removed;
every failure is a one-line :class:`GabaritoError` naming the file (and the line, in ``.jsonl``).

Every id (of a document, a question, a relevant document, a grade) goes through :class:`Ids`:
it is kept in Unicode's composed form, NFC (an id typed or named on macOS may arrive decomposed,
NFD, and would differ from one that looks identical), with one warning per file when some id was
changed; an id holding a blank or a control or invisible character is refused
(:func:`gabarito.core.runs.id_flaw`: it could not be written to a TREC file).
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Callable

from gabarito.core.runs import id_flaw
from gabarito.errors import GabaritoError

Warn = Callable[[str], None]


def warn_stderr(text: str) -> None:
    """The loaders' default ``warn``: one ``gabarito: warning:`` line on stderr."""
    print(f"gabarito: warning: {text}", file=sys.stderr, flush=True)


class Ids:
    """The ids read from one input file: ``ids(value, record, what)`` returns ``value`` in NFC or
    refuses it naming the file and the record; :meth:`notice` warns once about the ids changed."""

    def __init__(self, path: Path):
        self.path = path
        self.changed: dict[str, None] = {}

    def __call__(self, value: str, record: object, what: str = "id") -> str:
        nfc = unicodedata.normalize("NFC", value)
        flaw = id_flaw(nfc)
        if flaw is not None:
            raise GabaritoError(f"{what} {nfc!r} holds {flaw}; ids cannot hold blanks or control characters "
                                f"(TREC files separate their columns by blanks)", path=self.path, record=record)
        if nfc != value:
            self.changed[nfc] = None
        return nfc

    def notice(self, warn: Warn) -> None:
        if self.changed:
            named = list(self.changed)
            more = f" and {len(named) - 3} more" if len(named) > 3 else ""
            warn(f"{self.path}: {len(named)} id(s) written in decomposed Unicode were read in the composed form "
                 f"(NFC) every id is compared in: {', '.join(map(repr, named[:3]))}{more}")


def blanks_made_underscores(text: str) -> str:
    """``text`` with each blank (a space, a no-break space: Unicode Zs) made ``_``: the document id
    of a Markdown file whose name holds blanks."""
    return "".join("_" if unicodedata.category(ch) == "Zs" else ch for ch in text)


def _read_text(path: Path, what: str) -> str:
    """The file as text: strict UTF-8 (the error gives the byte offset), BOM removed. Only a
    regular file is read (a device such as /dev/zero, or a pipe, could be read without end)."""
    try:
        if path.exists() and not path.is_file() and not path.is_dir():
            raise GabaritoError(f"{what} is not a regular file (a device or a pipe)", path=path)
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise GabaritoError(f"{what} not found", path=path) from None
    except IsADirectoryError:
        raise GabaritoError(f"{what} is a folder, expected a file", path=path) from None
    except OSError as exc:
        raise GabaritoError(f"cannot read {what} ({exc.strerror or exc})", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    except MemoryError:
        raise GabaritoError(f"{what} is too large to read into memory", path=path) from None
    return text[1:] if text.startswith("\ufeff") else text


#: The one line for JSON nested deeper than the parser's recursion allows (about 1,000 levels).
TOO_DEEP = "JSON nested too deeply to read (more than about 1,000 levels of [ or {)"

#: The one line for a JSON number with more digits than Python reads (4,300).
TOO_LONG = "a JSON number has more digits than can be read (the limit is 4,300)"


class Repeated(dict):
    """A JSON object that gives some key twice: the last value is kept, ``repeated`` names the keys."""

    repeated: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    out = Repeated(pairs)
    out.repeated = tuple(dict.fromkeys(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _loads(text: str, path: Path, record: object = None, *, at: bool = False, keys: bool = False) -> object:
    """``json.loads`` with every failure as one line (``at``: the error gives line and column):
    syntax, depth, a number too long to read, memory. ``keys``: an object giving a key twice
    is a :class:`Repeated`."""
    try:
        return json.loads(text, object_pairs_hook=_pairs if keys else None)
    except json.JSONDecodeError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if at else ""
        raise GabaritoError(f"invalid JSON{where}: {exc.msg}", path=path, record=record) from None
    except RecursionError:
        raise GabaritoError(TOO_DEEP, path=path, record=record) from None
    except ValueError:  # int() of more than sys.get_int_max_str_digits() digits
        raise GabaritoError(TOO_LONG, path=path, record=record) from None
    except MemoryError:
        raise GabaritoError("too large to read into memory", path=path, record=record) from None


def _read_json_list(path: Path, what: str, *, keys: bool = False) -> list:
    """The JSON list of the file (``keys``: objects giving a key twice are :class:`Repeated`)."""
    data = _loads(_read_text(path, what), path, at=True, keys=keys)
    if not isinstance(data, list):
        raise GabaritoError(f"expected a JSON list of records, got a JSON {_json_kind(data)}", path=path)
    return data


def _read_jsonl(path: Path, what: str) -> list[tuple[int, object]]:
    """``(line number, parsed value)`` for each non-blank line."""
    out = []
    for lineno, line in enumerate(_read_text(path, what).split("\n"), start=1):
        if not line.strip():
            continue
        out.append((lineno, _loads(line, path, f"line {lineno}")))
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


def record_id(rec: object, key: str, path: Path, where: int, ids: Ids | None = None) -> str:
    """The id under ``key`` of a JSON record that must be an object, through ``ids`` (NFC, no
    blanks); else a one-line error (a number with a decimal point or a boolean is refused by
    name, not reported as missing)."""
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
    return (ids or Ids(path))(rid, _label(where, rid))
