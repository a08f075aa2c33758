"""The Markdown line patterns, stated once: what segmentation cuts by (``inputs/segment``) and what
a quoted file is rendered by (``publish/rawtext``) read the same lines the same way.

Each pattern is matched against one line (no newline in it):

- :data:`FENCE`: a code fence, up to three spaces of indent then three backticks or tildes;
- :data:`HEADING`: up to three spaces, one to six ``#`` (group ``marks``), then a blank and the
  heading's words (group ``text``, closing ``#`` dropped) or nothing (``text`` is None);
- :data:`BULLET` / :data:`NUMBERED`: a list item, ``-``/``*``/``+`` or a number with ``.``/``)``,
  then a blank; the item's words in group ``text`` (:func:`list_item` is either);
- :data:`QUOTE`, :data:`RULE`, :data:`TABLE_ROW`, :data:`TABLE_RULE`: a quote, a thematic break, a
  table row, a table's header rule.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*?)[ \t#]*)?$")
BULLET = re.compile(r"^\s*[-*+][ \t]+(?P<text>.*)$")
NUMBERED = re.compile(r"^\s*\d{1,9}[.)][ \t]+(?P<text>.*)$")
QUOTE = re.compile(r"^\s*>\s?(?P<text>.*)$")
RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
TABLE_ROW = re.compile(r"^\s*\|")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def list_item(line: str) -> re.Match | None:
    """The match of ``line`` as a list item (bulleted or numbered), else None."""
    return BULLET.match(line) or NUMBERED.match(line)


def section_name(line: str) -> str | None:
    """The words of a level-two heading (``## Name``), else None."""
    m = HEADING.match(line)
    return m["text"] if m and len(m["marks"]) == 2 and m["text"] is not None else None
