"""Loading what a user evaluates: their documents and their questions with known answers.

Documents (:func:`load_documents`) come from one of three layouts:

* a JSON file holding a list ``[{"id", "text", "title"?}, ...]``;
* a folder of Markdown files: every file ending in ``.md`` or ``.markdown``, in
  any case (``.MD``), below it (recursively, in sorted order; files and folders
  whose name starts with ``.`` are skipped). When another extension was read or
  other files were skipped, one warning counts each kind. The id is the path
  relative to the folder without the extension, with ``/`` between parts
  (``guides/install``), in Unicode NFC, each blank (a space, a no-break space)
  made ``_``: ``trocas e devoluções.md`` is ``trocas_e_devoluções`` (one warning
  names the ids so made; two files reaching one id are refused, and a tab, a
  newline or another control character in a name is refused). The title is the
  first ``# `` heading outside code fences (``""`` when there is none); the
  text is the whole file, with a leading byte-order mark removed and line
  endings turned into ``\\n``. A symbolic link (to a file or a folder) is
  followed only when it points inside the folder; one pointing outside is left
  out, with one warning naming it;
* one Markdown file (``.md``, ``.markdown``): one document, the same way (its id
  is the file name without the extension);
* a BEIR-style folder holding ``corpus.jsonl`` (one ``{"_id", "title", "text"}``
  per line), or the path of such a ``.jsonl`` file itself.

Evaluations (:func:`load_evaluation`, re-exported here from
:mod:`gabarito.inputs.evaluation_files`) come from a JSON list file or a BEIR
folder; that module describes both layouts.

Every id is read through :class:`gabarito.inputs.textfiles.Ids` (NFC, with one
warning when some id changed; an id with a blank or a control character is
refused). Bad input raises a one-line :class:`GabaritoError` naming the file and the
record (its 1-based position, or line number in ``.jsonl``/``.tsv`` files, and
its id), and nothing is returned. :func:`corpus_sha256` and
:func:`evaluation_sha256` hash the parsed content (canonical JSON, sorted keys;
the order of the records counts) for run records.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_text
from gabarito.inputs.evaluation_files import load_evaluation  # re-exported: the public import path
from gabarito.inputs.items import Document, EvalQuery, Evaluation  # Evaluation re-exported
from gabarito.inputs.textfiles import Ids, Warn, blanks_made_underscores, _label, _read_json_list, _read_jsonl, _read_text, record_id, warn_stderr

__all__ = [
    "Document",
    "EvalQuery",
    "Evaluation",
    "load_documents",
    "load_evaluation",
    "corpus_sha256",
    "evaluation_sha256",
]


#: The extensions of a Markdown file (compared in lower case).
MARKDOWN = (".md", ".markdown")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_H1 = re.compile(r"^#[ \t]+(?P<title>.*?)[ \t#]*$")


# --- documents -------------------------------------------------------------------------------

def load_documents(path: str | Path, *, warn: Warn = warn_stderr) -> list[Document]:
    """Load documents from a JSON list file, a Markdown folder or file, or a BEIR folder /
    ``corpus.jsonl``. ``warn`` receives the one-line warnings (symbolic links left out of a
    Markdown folder, files skipped, ids changed)."""
    path = Path(path)
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            return _load_beir_corpus(path / "corpus.jsonl", warn)
        return _load_markdown(path, _markdown_files(path, warn), warn)
    if not path.exists():
        raise GabaritoError("documents not found", path=path)
    if path.suffix.lower() == ".jsonl":
        return _load_beir_corpus(path, warn)
    if path.name.lower().endswith(MARKDOWN):
        return _load_markdown(path.parent, [path], warn, where=path)
    return _load_json_documents(path, warn)


def _check_documents(path: Path, docs: list[tuple[str, Document]]) -> list[Document]:
    """Refuse duplicate ids and empty texts; ``docs`` holds ``(record label index, document)``."""
    seen: dict[str, str] = {}
    for where, doc in docs:
        label = f"{where} ({doc.id})"
        if not doc.text.strip():
            raise GabaritoError("document text is empty", path=path, record=label)
        if doc.id in seen:
            raise GabaritoError(f"duplicate document id {doc.id!r} (first at record {seen[doc.id]})",
                                path=path, record=label)
        seen[doc.id] = where
    if not docs:
        raise GabaritoError("no documents", path=path)
    return [doc for _, doc in docs]


def _load_json_documents(path: Path, warn: Warn) -> list[Document]:
    data = _read_json_list(path, "documents file")
    docs, ids = [], Ids(path)
    for i, rec in enumerate(data, start=1):
        did = record_id(rec, "id", path, i, ids)
        text = rec.get("text")
        title = rec.get("title", "")
        if not isinstance(text, str):
            raise GabaritoError("'text' is missing or not a string", path=path, record=_label(i, did))
        if title is None:
            title = ""
        if not isinstance(title, str):
            raise GabaritoError("'title' is not a string", path=path, record=_label(i, did))
        docs.append((str(i), Document(did, text, title.strip())))
    ids.notice(warn)
    return _check_documents(path, docs)


def _load_beir_corpus(path: Path, warn: Warn) -> list[Document]:
    docs, ids = [], Ids(path)
    for lineno, rec in _read_jsonl(path, "corpus file"):
        did = record_id(rec, "_id", path, lineno, ids)
        text = rec.get("text")
        title = rec.get("title") or ""
        if not isinstance(text, str):
            raise GabaritoError("'text' is missing or not a string", path=path, record=_label(lineno, did))
        if not isinstance(title, str):
            raise GabaritoError("'title' is not a string", path=path, record=_label(lineno, did))
        docs.append((str(lineno), Document(did, text, title.strip())))
    ids.notice(warn)
    return _check_documents(path, docs)


def markdown_title(text: str) -> str:
    """The first ``# `` heading outside code fences, or ``""``."""
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            m = _H1.match(line)
            if m:
                return m.group("title").strip()
    return ""


def _is_markdown(name: str) -> bool:
    return name.lower().endswith(MARKDOWN)


def _markdown_files(folder: Path, warn: Warn) -> list[Path]:
    """Every Markdown file below ``folder`` (names starting with ``.`` skipped), sorted by relative
    path; one warning counts the files of each other extension left out.

    A symbolic link, to a file or a folder, is followed only when it points inside ``folder``
    (a folder reached twice is walked once); a link pointing outside is left out, and one
    warning names every such link to a folder or to a Markdown name."""
    root = folder.resolve()
    files: list[Path] = []
    outside: list[str] = []
    skipped: Counter[str] = Counter()
    walked = {root}
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            raise GabaritoError(f"cannot list the folder ({exc.strerror or exc})", path=current) from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            real = path.resolve()
            if entry.is_symlink() and not real.is_relative_to(root):
                if _is_markdown(entry.name) or real.is_dir():  # what would have been read
                    outside.append(f"{path.relative_to(folder).as_posix()} -> {os.readlink(path)}")
            elif entry.is_dir():
                if real not in walked:
                    walked.add(real)
                    pending.append(path)
            elif _is_markdown(entry.name) and entry.is_file():
                files.append(path)
            elif entry.is_file():
                skipped[path.suffix or "(no extension)"] += 1
    if outside:
        warn(f"{folder}: {len(outside)} symbolic link(s) point outside the documents folder and were left "
             f"out: {', '.join(outside)}")
    read = Counter(_extension(f.name) for f in files)
    if skipped or set(read) - {".md"}:
        left = f"; {sum(skipped.values())} other file(s) skipped ({_counts(skipped)})" if skipped else ""
        warn(f"{folder}: read {len(files)} Markdown file(s) ({_counts(read)}){left}")
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def _extension(name: str) -> str:
    """The Markdown extension ``name`` ends with, as written (``.md``, ``.MD``, ``.markdown``)."""
    return next(name[-len(ext):] for ext in MARKDOWN if name.lower().endswith(ext))


def _counts(counter: Counter) -> str:
    return ", ".join(f"{n} {ext}" for ext, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _load_markdown(folder: Path, files: list[Path], warn: Warn, where: Path | None = None) -> list[Document]:
    """The documents of ``files`` (below ``folder``; ``where``: the one file given instead of a folder)."""
    if not files:
        raise GabaritoError("folder holds no Markdown files (.md, .markdown) and no corpus.jsonl", path=folder)
    docs, ids, first, blanks = [], Ids(where or folder), {}, []
    for i, f in enumerate(files, start=1):
        relative = f.relative_to(folder).as_posix()
        stem = relative[: -len(_extension(relative))]
        did = ids(blanks_made_underscores(stem), _label(i, relative), "the file name")
        if did in first:
            raise GabaritoError(f"the files {first[did]!r} and {relative!r} both have the id {did!r} (the "
                                f"extension left out, blanks made _): rename one", path=where or folder)
        first[did] = relative
        if blanks_made_underscores(stem) != stem:
            blanks.append(f"{relative!r} -> {did!r}")
        text = _read_text(f, "Markdown file").replace("\r\n", "\n").replace("\r", "\n")
        if "\x00" in text:
            raise GabaritoError("holds NUL bytes: not a text file", path=f, record=_label(i, did))
        if not text.strip():
            raise GabaritoError("document text is empty", path=f, record=_label(i, did))
        docs.append((str(i), Document(did, text, markdown_title(text))))
    if blanks:
        more = f" and {len(blanks) - 3} more" if len(blanks) > 3 else ""
        warn(f"{where or folder}: {len(blanks)} file name(s) hold blanks, made _ in their document ids: "
             f"{', '.join(blanks[:3])}{more}")
    ids.notice(warn)
    return _check_documents(where or folder, docs)


# --- hashes ----------------------------------------------------------------------------------

def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def corpus_sha256(documents: Iterable[Document]) -> str:
    """sha256 of the documents' canonical JSON (id, title, text; order counts)."""
    return sha256_text(_canonical([{"id": d.id, "title": d.title, "text": d.text} for d in documents]))


def evaluation_sha256(queries: Iterable[EvalQuery]) -> str:
    """sha256 of the queries' canonical JSON (every field, ``extra`` included; order counts)."""
    return sha256_text(_canonical([
        {"id": q.id, "query": q.query, "relevant_ids": list(q.relevant_ids), "type": q.type,
         "severity": q.severity, "answer": q.answer, "extra": q.extra}
        for q in queries
    ]))
