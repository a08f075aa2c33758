"""Y40-dup-markdown: one module of Markdown line patterns (``gabarito.inputs.markdown``), read by
segmentation (``inputs/segment``) and by the rendering of quoted files (``publish/rawtext``), so the
two read a line the same way.

Segmentation's patterns were kept as they were (its chunks, hence every chunk id and hash, are
unchanged: checked on 30,000 random Markdown texts and every ``.md`` file of the repository when the
module was made); the rendering took them, which changed nothing in the files the site quotes.
"""

from __future__ import annotations

import ast
import inspect

import pytest

from gabarito.inputs import markdown, segment
from gabarito.publish import rawtext


def _compiled_patterns(module) -> list[str]:
    tree = ast.parse(inspect.getsource(module))
    return [ast.literal_eval(n.args[0]) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and ast.unparse(n.func) == "re.compile" and n.args]


def test_segment_and_rawtext_compile_no_line_pattern_of_their_own():
    assert not [p for p in _compiled_patterns(rawtext)], _compiled_patterns(rawtext)
    # segmentation keeps its own token, sentence and spec patterns; no line of Markdown is read there
    assert not [p for p in _compiled_patterns(segment) if p.startswith("^\\s")], _compiled_patterns(segment)
    for name in ("FENCE", "HEADING", "BULLET", "NUMBERED", "QUOTE", "RULE", "TABLE_ROW", "TABLE_RULE"):
        assert isinstance(getattr(markdown, name), type(markdown.HEADING))


@pytest.mark.parametrize("line, heading, level, text", [
    ("## Passo 2", True, 2, "Passo 2"),
    ("   ## Passo 2 ##", True, 2, "Passo 2"),   # indented up to three spaces: still a heading
    ("    ## código", False, None, None),       # four spaces: code, not a heading
    ("#######", False, None, None),
    ("#hashtag", False, None, None),
    ("#", True, 1, None),                       # a heading with no words
])
def test_one_reading_of_a_heading(line, heading, level, text):
    m = markdown.HEADING.match(line)
    assert bool(m) is heading
    if m:
        assert (len(m["marks"]), m["text"]) == (level, text)


def test_segmentation_and_rendering_agree_on_an_indented_heading():
    doc = "Introdução.\n\n   ## Passo 2\nFaça isto."
    assert [name for name, _, _ in segment._sections(doc)] == ["", "Passo 2"]
    html = str(rawtext.markdown_html(doc))
    assert '<p class="gabarito-quoted-h2"><strong>Passo 2</strong></p>' in html  # before: a paragraph "## Passo 2"
    assert rawtext.plain("   ## Passo 2") == "Passo 2"


@pytest.mark.parametrize("line, item", [("- a", True), ("  * b", True), ("12) c", True), ("3. d", True),
                                        ("1234567890. e", False), ("-x", False), ("---", False)])
def test_one_reading_of_a_list_item(line, item):
    assert bool(markdown.list_item(line)) is item
    assert ("<li>" in str(rawtext.markdown_html(line))) is item
