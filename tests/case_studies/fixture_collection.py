"""A tiny classic collection, added the way ``docs/architecture.md`` ("Adding a collection") says,
at run time instead of in the repository's files:

1. its dataset entry (``data/datasets.json``): :func:`gabarito.inputs.datasets.register`, its files
   in a temporary mirror (:func:`write_mirror`);
2. its reader (``loaders.py``): :func:`read`, a TREC-form collection read by
   :func:`~gabarito.inputs.collections.loaders.load_trec_layout`;
3. its display name and place (``registry.py``): :func:`gabarito.inputs.collections.registry.register`;
4. its frozen judgments (``qrels/<name>.txt`` + ``gold.lock.json``): :func:`freeze_into`, on a copy
   of the study folder.

Six documents, four questions. The judgments are chosen so BM25's numbers can be computed by hand:
question 1's only relevant document is the only one holding its words (BM25 ranks it first: RR@10 =
1), question 2 shares no word with any document (nothing retrieved: RR@10 = 0), question 3's
relevant document (grade 2) is the only one holding its words (RR@10 = 1), question 4 has no
relevant document (excluded, counted).
"""

from __future__ import annotations

from pathlib import Path

from gabarito.core.runs import Qrels
from gabarito.hashing import sha256_bytes
from gabarito.inputs import datasets
from gabarito.inputs.collections import loaders
from gabarito.inputs.collections import registry
from gabarito.inputs.gold import freeze_more

NAME = "fixture_tiny"
DISPLAY = "Minúscula"
DOCUMENTS = {  # TREC judgments number their documents
    "11": "apple orchard harvest in the autumn season",
    "12": "river boat fishing trip at dawn",
    "13": "mountain snow and a skiing holiday",
    "14": "city library reading room hours",
    "15": "desert camel caravan route map",
    "16": "ocean coral reef diving school",
}
QUESTIONS = {"1": "apple harvest", "2": "quantum chromodynamics", "3": "coral reef diving", "4": "camel caravan"}
JUDGMENTS = [("1", "11", 1), ("2", "14", 1), ("3", "16", 2), ("3", "12", 0), ("4", "15", 0)]
#: what BM25 must score, by hand: question -> RR@10 (question 4 has no relevant document: excluded)
RR_AT_10 = {"1": 1.0, "2": 0.0, "3": 1.0}


def files() -> dict[str, bytes]:
    """The collection's files as distributed: TREC documents, topics and judgments."""
    docs = "".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n{text}\n</DOC>\n" for d, text in DOCUMENTS.items())
    topics = "".join(f"<top>\n<num>{q}</num>\n<title>{text}</title>\n</top>\n" for q, text in QUESTIONS.items())
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, d, g in JUDGMENTS)
    return {"docs.trec": docs.encode(), "topics.trec": topics.encode(), "qrels": qrels.encode()}


def write_mirror(mirror: Path) -> Path:
    """The files in ``<mirror>/<name>/``, as a local mirror holds them; returns the mirror."""
    folder = Path(mirror) / NAME
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files().items():
        (folder / name).write_bytes(data)
    return Path(mirror)


def read(folder: Path):
    """Step 2: the reader of the fetched folder."""
    return loaders.load_trec_layout(NAME, folder, documents="docs.trec", topics="topics.trec", qrels="qrels",
                                    notes=[], text_fields="documents: text after <DOCNO>; queries: <title>")


def register() -> None:
    """Steps 1 and 3: the dataset entry and the registry's entry."""
    datasets.register(NAME, {f: {"url": f"https://example.invalid/{NAME}/{f}", "sha256": sha256_bytes(data)}
                             for f, data in files().items()})
    registry.register(registry.ClassicCollection(NAME, DISPLAY, read))


def unregister() -> None:
    """Undo :func:`register` in this process (a test's teardown)."""
    datasets._REGISTERED.pop(NAME, None)
    loaders.COLLECTIONS.pop(NAME, None)
    registry.CLASSIC = tuple(c for c in registry.CLASSIC if c.name != NAME)


def freeze_into(study: Path, mirror: Path, dest: Path | None = None) -> Path:
    """Step 4: the judgments as read, written to ``<study>/qrels/<name>.txt`` and frozen in its
    ``gold.lock.json`` beside the others (what a newcomer commits); returns the file. ``dest``: the
    data folder the files are fetched into."""
    c = loaders.load_collection(NAME, mirror=mirror, dest=dest)
    path = Path(study) / "qrels" / f"{NAME}.txt"
    path.write_text(Qrels(c.qrels).to_trec(), encoding="utf-8")
    freeze_more(Path(study) / "gold.lock.json", [path], note="the classic collections' judgments and a fixture's")
    return path
