"""Corpus loading: the Synesis ontology format (``ONTOLOGY <Name> ... END ONTOLOGY``).

A block holds ``key: value`` fields. A value may continue on following lines
(any non-blank line that does not start a new ``key:``). The field that holds
the definition is ``description`` in older revisions and ``ontology_description``
in newer ones; both are accepted and exposed as :attr:`Concept.description`.
Errors are :class:`GabaritoError` with ``file:line`` in the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from gabarito.errors import GabaritoError

_OPEN = re.compile(r"^ONTOLOGY(?:\s+(?P<name>\S+))?\s*$")
_CLOSE = re.compile(r"^END\s+ONTOLOGY\s*$")
_FIELD = re.compile(r"^\s+(?P<key>[a-z_][a-z0-9_]*)\s*:\s?(?P<value>.*)$")

DESCRIPTION_KEYS = ("description", "ontology_description")

#: Fields a search engine indexes, in order. ``search_name`` is the name with
#: underscores turned into spaces, so that word search can match its words.
SEARCH_FIELDS = (
    "search_name",
    "description",
    "reasoning",
    "rgt_element_a",
    "rgt_element_b",
    "theoretical_significance",
)


@dataclass(frozen=True)
class Concept:
    """One ontology block."""

    name: str
    fields: dict[str, str] = field(default_factory=dict)
    line: int = 0

    @property
    def description(self) -> str:
        for key in DESCRIPTION_KEYS:
            if key in self.fields:
                return self.fields[key]
        return ""

    @property
    def search_name(self) -> str:
        return self.name.replace("_", " ")

    def search_fields(self) -> dict[str, str]:
        """The searchable string fields, keyed as in :data:`SEARCH_FIELDS`."""
        out = {"search_name": self.search_name, "description": self.description}
        for key in SEARCH_FIELDS[2:]:
            out[key] = str(self.fields.get(key, ""))
        return out

    def text(self) -> str:
        """The text a dense encoder reads: name, then definition."""
        return f"{self.search_name}: {self.description}".strip()


def parse_synesis(text: str, *, path: str | Path = "<text>") -> list[Concept]:
    """Parse every ontology block of ``text``. Raise on the first malformed line."""
    concepts: list[Concept] = []
    seen: dict[str, int] = {}
    current: dict | None = None
    last_key: str | None = None

    def fail(lineno: int, message: str) -> None:
        raise GabaritoError(message, path=f"{path}:{lineno}")

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if current is None:
            if not stripped or stripped.startswith("#"):
                continue
            m = _OPEN.match(stripped)
            if m is None:
                if _CLOSE.match(stripped):
                    fail(lineno, "END ONTOLOGY without a matching ONTOLOGY")
                fail(lineno, f"expected 'ONTOLOGY <Name>', found {stripped[:40]!r}")
            if not m.group("name"):
                fail(lineno, "ONTOLOGY block without a name")
            name = m.group("name")
            if name in seen:
                fail(lineno, f"duplicate concept name {name!r} (first defined at line {seen[name]})")
            seen[name] = lineno
            current = {"name": name, "line": lineno, "fields": {}}
            last_key = None
            continue
        if _CLOSE.match(stripped):
            if not any(k in current["fields"] for k in DESCRIPTION_KEYS):
                fail(current["line"], f"concept {current['name']!r} has no description field")
            concepts.append(Concept(current["name"], current["fields"], current["line"]))
            current = None
            continue
        if _OPEN.match(stripped):
            fail(lineno, f"ONTOLOGY inside block {current['name']!r} (opened at line {current['line']}, never closed)")
        if not stripped:
            continue
        m = _FIELD.match(line)
        if m is not None:
            key = m.group("key")
            if key in current["fields"]:
                fail(lineno, f"field {key!r} repeated in concept {current['name']!r}")
            current["fields"][key] = m.group("value").strip()
            last_key = key
        elif last_key is not None and raw[:1].isspace():
            prev = current["fields"][last_key]
            current["fields"][last_key] = f"{prev} {stripped}".strip()
        else:
            fail(lineno, f"malformed line in concept {current['name']!r}: {stripped[:40]!r}")
    if current is not None:
        fail(current["line"], f"concept {current['name']!r} is never closed with END ONTOLOGY")
    return concepts


def load_synesis(path: str | Path) -> list[Concept]:
    """Read a ``.syno`` file (strict UTF-8) and parse it."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise GabaritoError("file not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    return parse_synesis(text, path=path)
