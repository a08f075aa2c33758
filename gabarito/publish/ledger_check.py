"""Reading the book's ledgers (:mod:`gabarito.publish.ledger`) and naming what disagrees.

:func:`conflicts` returns one line per problem, empty when the book holds together:

- **one identity, two values**: the same :class:`~gabarito.publish.ledger.Identity` shown with
  values that differ anywhere in the book;
- **one label, two identities**: on one page, the same words name two different quantities;
- **prose against its table**: on one page, a sentence and a table show the same identity as
  different text (``0,87`` beside ``0,875``);
- **a key that says otherwise**: the key path recorded for a number resolves, in its source
  file, to another number.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

from gabarito.publish.ledger import read, resolve

#: How far two values of one identity may differ (the guard's float tolerance).
TOLERANCE = 1e-12
#: The suffix of a ledger file next to its built page.
SUFFIX = ".ledger.json"


def book(site: str | Path) -> list[dict]:
    """Every record of every ledger under a built site, page by page."""
    out: list[dict] = []
    for path in sorted(Path(site).rglob(f"*{SUFFIX}")):
        out += read(path)
    return out


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE) or a == b
    return a == b


def _where(r: Mapping) -> str:
    return f"{r['page']} ({r['where']}, {r['source']} {'/'.join(map(str, r['key']))})"


def two_values(records: Iterable[Mapping]) -> list[str]:
    """One identity shown with two values anywhere in the book."""
    first: dict[str, Mapping] = {}
    out = []
    for r in records:
        seen = first.setdefault(r["id"], r)
        if not _same(seen["value"], r["value"]):
            out.append(f"one identity, two values: {r['id']} is {seen['text']} on {_where(seen)} "
                       f"and {r['text']} on {_where(r)}")
    return out


def shared_labels(records: Iterable[Mapping]) -> list[str]:
    """Two identities under one label on one page."""
    ids: dict[tuple[str, str], dict[str, Mapping]] = defaultdict(dict)
    for r in records:
        ids[(r["page"], r["label"])].setdefault(r["id"], r)
    return [f"one label, two identities on {page}: {label!r} names " + " and ".join(sorted(found))
            for (page, label), found in ids.items() if len(found) > 1]


def prose_against_tables(records: Iterable[Mapping]) -> list[str]:
    """A sentence and a table of one page showing one identity as different text."""
    shown: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in records:
        if r["where"] in ("prose", "table"):
            shown[(r["page"], r["id"])][r["where"]].add(r["text"])
    out = []
    for (page, ident), by in shown.items():
        if by["prose"] and by["table"] and not by["prose"] <= by["table"]:
            out.append(f"prose against its table on {page}: {ident} is {', '.join(sorted(by['prose']))} in a "
                       f"sentence and {', '.join(sorted(by['table']))} in the table")
    return out


def keys_that_disagree(records: Iterable[Mapping], root: str | Path) -> list[str]:
    """A record whose key resolves, in its source, to another number (a key that is not there or
    holds no number is a derived value: not checked here)."""
    cache: dict[str, object] = {}
    out = []
    for r in records:
        if r["source"] not in cache:
            try:
                cache[r["source"]] = json.loads((Path(root) / r["source"]).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                cache[r["source"]] = None
        try:
            found = resolve(cache[r["source"]], r["key"])
        except KeyError:
            continue
        if isinstance(found, (int, float)) and not isinstance(found, bool) and isinstance(r["value"], (int, float)) \
                and not _same(found, r["value"]):
            out.append(f"a key that says otherwise: {_where(r)} shows {r['text']} ({r['value']!r}) "
                       f"where the file holds {found!r}")
    return out


def conflicts(records: list[Mapping], root: str | Path | None = None) -> list[str]:
    """Every problem of the book's records (:func:`keys_that_disagree` only when ``root`` is given)."""
    out = two_values(records) + shared_labels(records) + prose_against_tables(records)
    if root is not None:
        out += keys_that_disagree(records, root)
    return out
