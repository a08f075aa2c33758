import re

import pytest

from gabarito.inputs.documents import Document
from gabarito.errors import GabaritoError
from gabarito.inputs.segment import (
    SEGMENTER_VERSION,
    Chunk,
    chunk_containing,
    collapse_to_documents,
    describe,
    segment,
)

TEXT = """# Field Guide

This guide covers the basics. Read it first.

## Install

Download the package from the mirror.

| option | meaning |
|--------|---------|
| -q     | quiet   |
| -v     | verbose |

- unpack the archive
- run the installer

- restart the machine

## Usage

```
example

## not a section
```

Start the tool! It prints a banner. Then type a command and press enter to see the result.
"""

DOC = Document("guide", TEXT, "Field Guide")
OTHER = Document("notes/plain", "Just one line of plain text.", "")


def _bodies(chunks):
    return [TEXT[c.start:c.end] for c in chunks if c.doc_id == "guide"]


def _check_offsets(chunks, docs=(DOC, OTHER)):
    by_id = {d.id: d for d in docs}
    for c in chunks:
        body = by_id[c.doc_id].text[c.start:c.end]
        assert body and body == body.strip()
        assert c.text.endswith(body)
        prefix = c.text[: len(c.text) - len(body)]
        assert prefix == ((" > ".join(p for p in (c.title, c.section) if p) + ": ") if (c.title or c.section) else "")


def test_document_mode():
    chunks = segment([DOC, OTHER], "document")
    assert [c.id for c in chunks] == ["guide#0000", "notes/plain#0000"]
    _check_offsets(chunks)
    assert chunks[0].text == "Field Guide: " + TEXT.strip()
    assert chunks[1].text == OTHER.text  # no title, no section: no prefix
    assert segment([DOC], "document", prefix_title=False)[0].text == TEXT.strip()


def test_paragraph_mode_keeps_tables_lists_and_attaches_headings():
    chunks = segment([DOC], "paragraph")
    _check_offsets(chunks)
    bodies = _bodies(chunks)
    assert bodies[0] == "# Field Guide\n\nThis guide covers the basics. Read it first."
    assert bodies[1] == "## Install\n\nDownload the package from the mirror."
    assert bodies[2].startswith("| option") and bodies[2].endswith("| verbose |")  # table whole
    assert bodies[3] == "- unpack the archive\n- run the installer\n\n- restart the machine"  # list whole
    assert bodies[4].startswith("## Usage\n\n```") and "## not a section\n```" in bodies[4]  # fence whole
    assert bodies[5].startswith("Start the tool!")
    assert len(chunks) == 6
    assert [c.section for c in chunks] == ["", "Install", "Install", "Install", "Usage", "Usage"]
    assert chunks[2].text.startswith("Field Guide > Install: | option")
    assert [c.id for c in chunks] == [f"guide#{i:04d}" for i in range(6)]


def test_section_mode_with_intro_and_prefix():
    chunks = segment([DOC], "section")
    _check_offsets(chunks)
    assert [c.section for c in chunks] == ["", "Install", "Usage"]
    assert chunks[0].text == "Field Guide: # Field Guide\n\nThis guide covers the basics. Read it first."
    assert chunks[1].text.startswith("Field Guide > Install: ## Install\n")
    assert chunks[1].text.endswith("- restart the machine")
    assert chunks[2].text.startswith("Field Guide > Usage: ## Usage")  # '## not a section' is in a code fence
    assert "Start the tool!" in chunks[2].text
    plain = segment([DOC], "section", prefix_title=False)
    assert [c.text for c in plain] == _bodies(chunks)


def test_section_mode_title_only_intro_joins_first_section():
    doc = Document("d", "# Title\n\n## A\n\nalpha\n\n## B\n\nbeta", "Title")
    chunks = segment([doc], "section")
    assert [(c.section, doc.text[c.start:c.end]) for c in chunks] == [
        ("A", "# Title\n\n## A\n\nalpha"), ("B", "## B\n\nbeta")]
    nosec = Document("n", "no sections at all", "")
    assert [(c.section, c.text) for c in segment([nosec], "section")] == [("", "no sections at all")]


@pytest.mark.parametrize("n", [1, 3, 5, 8, 12, 40, 1000])
def test_recursive_respects_n_and_covers_every_word(n):
    chunks = segment([DOC, OTHER], f"recursive:{n}")
    _check_offsets(chunks)
    for c in chunks:
        assert len(TEXT[c.start:c.end].split() if c.doc_id == "guide" else OTHER.text[c.start:c.end].split()) <= n
    bodies = _bodies(chunks)
    # without overlap, the chunks are disjoint, in order, and hold every word exactly once
    assert sum(len(b.split()) for b in bodies) == len(TEXT.split())
    guide = [c for c in chunks if c.doc_id == "guide"]
    assert all(a.end <= b.start for a, b in zip(guide, guide[1:]))


def test_recursive_never_crosses_a_section_and_prefixes():
    chunks = segment([DOC], "recursive:6")
    for c in chunks:
        body = TEXT[c.start:c.end]
        assert body.count("## Install") + body.count("## Usage") <= 1
        if c.section:
            assert c.text.startswith(f"Field Guide > {c.section}: ")
    assert {c.section for c in chunks} == {"", "Install", "Usage"}
    # one big chunk per section when N is large
    big = segment([DOC], "recursive:1000", prefix_title=False)
    assert [c.text for c in big] == [c.text for c in segment([DOC], "section", prefix_title=False)]


@pytest.mark.parametrize("n, o", [(5, 1), (6, 2), (10, 3), (4, 3)])
def test_recursive_overlap(n, o):
    chunks = segment([DOC], f"recursive:{n}:{o}")
    _check_offsets(chunks)
    for c in chunks:
        assert len(TEXT[c.start:c.end].split()) <= n
    for a, b in zip(chunks, chunks[1:]):
        if a.section != b.section:
            assert a.end <= b.start  # no overlap across sections
            continue
        words_a = TEXT[a.start:a.end].split()
        words_b = TEXT[b.start:b.end].split()
        assert words_b[:o] == words_a[-o:]  # exactly o shared words
        assert b.start < a.end <= b.end
        assert TEXT[b.start:a.end].split() == words_a[-o:]
    # every word still covered
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(m.start() in covered for m in re.finditer(r"\S+", TEXT))


def test_recursive_splits_long_sentence_into_words():
    doc = Document("w", " ".join(f"w{i}" for i in range(25)), "")
    chunks = segment([doc], "recursive:10:2")
    assert [len(doc.text[c.start:c.end].split()) for c in chunks] == [10, 10, 9]
    assert doc.text[chunks[1].start:chunks[1].end].split()[:2] == ["w8", "w9"]


@pytest.mark.parametrize("spec", ["words", "recursive", "recursive:0", "recursive:5:5", "recursive:x",
                                  "recursive:5:1:2", "", "sections"])
def test_unknown_spec_lists_valid_ones(spec):
    with pytest.raises(GabaritoError) as err:
        segment([DOC], spec)
    msg = str(err.value)
    assert "\n" not in msg
    for name in ("document", "paragraph", "section", "recursive:N", "recursive:N:O"):
        assert name in msg


def test_duplicate_document_ids_are_refused():
    with pytest.raises(GabaritoError, match="duplicate document id 'guide'"):
        segment([DOC, DOC], "document")


def test_describe_and_version():
    assert SEGMENTER_VERSION == "1"
    assert describe("recursive:200") == {"spec": "recursive:200:0", "version": "1", "prefix_title": True}
    assert describe(" Section ", prefix_title=False) == {"spec": "section", "version": "1", "prefix_title": False}
    with pytest.raises(GabaritoError):
        describe("nope")


def test_chunk_containing():
    chunks = segment([DOC, OTHER], "paragraph")
    assert chunk_containing(chunks, "guide", "| -v     | verbose |", TEXT) == ["guide#0002"]
    assert chunk_containing(chunks, "guide", "press enter", TEXT) == ["guide#0005"]
    assert chunk_containing(chunks, "guide", "not in there", TEXT) == []
    assert chunk_containing(chunks, "notes/plain", "press enter", TEXT) == []  # other doc's chunks only
    # a phrase spanning two chunks belongs to both; with overlap, to every chunk that holds part of it
    phrase = "first.\n\n## Install"
    assert chunk_containing(segment([DOC], "section"), "guide", phrase, TEXT) == ["guide#0000", "guide#0001"]
    over = segment([DOC], "recursive:5:2")
    hits = chunk_containing(over, "guide", "press enter", TEXT)
    assert hits and all("press" in TEXT[c.start:c.end] or "enter" in TEXT[c.start:c.end]
                        for c in over if c.id in hits)


def test_collapse_to_documents_keeps_first_occurrence():
    chunks = segment([DOC, OTHER], "paragraph")
    by_id = {c.id: c for c in chunks}
    ranked = [("guide#0003", 9.0), ("guide#0001", 8.5), ("notes/plain#0000", 7.0), ("guide#0000", 6.0)]
    assert collapse_to_documents(ranked, by_id) == [("guide", 9.0), ("notes/plain", 7.0)]
    assert collapse_to_documents([], by_id) == []
    with pytest.raises(GabaritoError, match="'x#0000'"):
        collapse_to_documents([("x#0000", 1.0)], by_id)


def test_chunk_is_frozen():
    c = segment([OTHER], "document")[0]
    assert isinstance(c, Chunk)
    with pytest.raises(Exception):
        c.text = "changed"  # type: ignore[misc]
