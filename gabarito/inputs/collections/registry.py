"""The classic collections in one ordered registry: name, display name, reader, and the frozen-qrels
check every study loads them through.

    for info in CLASSIC:                     # ADI, Cranfield, CISI, MEDLINE, NPL (the book's order)
        c, qrels = load_frozen(info.name, study_dir / "qrels" / f"{info.name}.txt", mirror=mirror)
        sha = content_sha256(c)              # the one corpus hash of a classic collection

A collection added here (with its entry in ``data/datasets.json``) is known to every study, page
label and command that lists the classic collections (``docs/architecture.md``, "Add a collection").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_text
from gabarito.inputs.collections.collection import Collection
from gabarito.inputs.collections.loaders import COLLECTIONS, load_collection


@dataclass(frozen=True)
class ClassicCollection:
    """One classic collection: its key (also in ``data/datasets.json``), the name a page shows,
    and the reader of its fetched folder."""

    name: str
    display: str
    reader: Callable[[Path], Collection]


_DISPLAY = {"adi": "ADI", "cranfield": "Cranfield", "cisi": "CISI", "medline": "MEDLINE", "npl": "NPL"}
#: The book's order (smallest first, then the classic order of the literature).
ORDER = ("adi", "cranfield", "cisi", "medline", "npl")
CLASSIC: tuple[ClassicCollection, ...] = tuple(ClassicCollection(n, _DISPLAY[n], COLLECTIONS[n]) for n in ORDER)


def register(info: ClassicCollection) -> None:
    """Add a collection to the registry (a user's own, or a test's fixture): it is then known to
    :func:`gabarito.inputs.collections.load_collection`, to :func:`names` and to :func:`display`."""
    global CLASSIC
    if info.name in COLLECTIONS:
        raise GabaritoError(f"collection {info.name!r} is already registered")
    COLLECTIONS[info.name] = info.reader
    CLASSIC = CLASSIC + (info,)


class Names(Mapping):
    """The registry read when asked, as ``{key: name(collection)}``: a collection registered after
    the mapping was made is in it (a page's vocabulary of collection names is one of these)."""

    def __init__(self, name: Callable[[ClassicCollection], object]):
        self._name = name

    def __getitem__(self, key: str):
        for c in CLASSIC:
            if c.name == key:
                return self._name(c)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __len__(self) -> int:
        return len(CLASSIC)


def names() -> tuple[str, ...]:
    """The registered collections' keys, in the book's order."""
    return tuple(c.name for c in CLASSIC)


def display(name: str) -> str:
    """The name a page shows for ``name``."""
    for c in CLASSIC:
        if c.name == name:
            return c.display
    raise GabaritoError(f"unknown collection {name!r} (known: {', '.join(names())})")


def content_sha256(collection: Collection) -> str:
    """The corpus hash of a classic collection as indexed: one JSON ``[id, text]`` line per
    document, in order (what every study of the classic collections records as ``corpus_sha256``)."""
    return sha256_text("".join(json.dumps([d.id, d.text], ensure_ascii=False) + "\n" for d in collection.documents))


def load_frozen(name: str, frozen: str | Path, *, mirror: str | Path | None = None) -> tuple[Collection, Qrels]:
    """The collection and its frozen judgments, once the judgments read from the collection are
    known to be, byte for byte, the frozen TREC qrels file ``frozen``."""
    frozen = Path(frozen)
    if not frozen.is_file():
        raise GabaritoError("no frozen qrels file", path=frozen)
    c = load_collection(name, mirror=mirror)
    if Qrels(c.qrels).to_trec() != frozen.read_text(encoding="utf-8"):
        raise GabaritoError("the qrels read from the collection differ from the frozen file: review the "
                            "change, rewrite the file and freeze it again", path=frozen)
    return c, Qrels.from_trec(frozen)
