"""The offline search: its index, and the one normalisation of its words.

A reader types Portuguese as they speak it: with or without accents, "instalar" where the page says
"instale" or "instalação". Index and query go through the same steps:

1. :func:`fold`: lower case, then every accent and cedilla dropped (NFD, combining marks
   U+0300–U+036F removed): "Instalação" → "instalacao";
2. :func:`words`: the runs of letters and digits of the folded text ("ERR-PIX-002" → ``err``,
   ``pix``, ``002``; "pip install" → ``pip``, ``install``);
3. :func:`stem`: a light Portuguese stemmer, for words of four or more letters a–z only (codes,
   numbers and names with digits are kept whole): a plural made singular, then one verb or noun
   ending removed, else a final vowel ("instalar", "instale", "instalação", "instalado" → ``instal``).

The reader's browser does the same to what they type (``assets/search.js``); the two are checked word
for word against each other on a word list (``tests/publish/test_search_text.py``). A query word
matches a section when its stem begins one of the section's stems, so a word half typed finds too.
Words like "de" or "para" (:data:`STOPWORDS`) are left out of a query that has other words.

The index (``search-index.js``) holds one entry per section of every page: the page's title, the
section's heading, its whole text (folds and code blocks included: an install command is found) and
its stems, each once; a hit links to the section.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from pathlib import Path, PurePosixPath

from gabarito.publish.site.markup import page_sections

SEARCH_INDEX = PurePosixPath("site_libs/gabarito/search-index.js")

_MARKS = re.compile("[\u0300-\u036f]")
_WORD = re.compile(r"[^\W_]+")
_LETTERS = re.compile(r"[a-z]+")
#: Function words left out of a query that has other words (folded).
STOPWORDS = frozenset("a o e as os de da do das dos em no na nos nas um uma uns umas ao aos para por pelo pela "
                      "pelos pelas com sem que se ou como mais".split())
#: Plural endings and what they become, tried in order on words longer than four letters.
PLURALS = (("oes", "ao"), ("aes", "ao"), ("ais", "al"), ("eis", "el"), ("ois", "ol"), ("ns", "m"),
           ("res", "r"), ("zes", "z"), ("ses", "s"))
#: Verb and noun endings, longest first; the first that leaves at least three letters is removed.
SUFFIXES = ("amentos", "imentos", "amento", "imento", "adora", "ador", "acao", "icao", "cao", "mente",
            "ando", "endo", "indo", "aram", "eram", "iram", "ado", "ido", "ada", "ida", "ar", "er", "ir",
            "ou", "eu", "iu", "am", "em")
#: The shortest stem a rule may leave.
MIN_STEM = 3


def fold(text: str) -> str:
    """Lower case without accents: ``"Instalação"`` → ``"instalacao"``."""
    return _MARKS.sub("", unicodedata.normalize("NFD", text.lower()))


def words(text: str) -> list[str]:
    """The folded words of ``text``: runs of letters and digits."""
    return _WORD.findall(fold(text))


def stem(word: str) -> str:
    """The light Portuguese stem of one folded word (see the module docstring)."""
    if len(word) < 4 or not _LETTERS.fullmatch(word):
        return word
    for end, new in PLURALS:
        if len(word) > 4 and word.endswith(end):
            word = word[:-len(end)] + new
            break
    else:
        if word.endswith("s"):
            word = word[:-1]
    for end in SUFFIXES:
        if word.endswith(end) and len(word) - len(end) >= MIN_STEM:
            return word[:-len(end)]
    if len(word) > MIN_STEM and word[-1] in "aeo":
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The stems of ``text``'s words, in order."""
    return [stem(w) for w in words(text)]


def query_terms(query: str) -> list[str]:
    """The stems a query looks for: its words without :data:`STOPWORDS` (unless it has nothing else)."""
    ws = words(query)
    kept = [w for w in ws if w not in STOPWORDS] or ws
    return [stem(w) for w in kept]


def index_entries(site: Path, pages: list[Path]) -> list[dict]:
    """One entry per section of every page: ``page``, ``section``, ``text``, ``terms``, ``href``."""
    entries = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        m = re.search(r"<title>(.*?)</title>", text, re.S)
        title = html.unescape(m.group(1)).split(" – ")[0].strip() if m else page.stem
        href = page.relative_to(site).as_posix()
        for sec in page_sections(text):
            entries.append({"page": title, "section": sec["title"], "text": sec["text"],
                            "terms": " ".join(sorted(set(terms(sec["text"])))),
                            "href": href + (f"#{sec['id']}" if sec["id"] else "")})
    return entries


def write_search_index(site: Path, pages: list[Path]) -> int:
    """``search-index.js`` (a script, not a fetched JSON file, so it works from ``file://``); returns
    the number of entries."""
    entries = index_entries(site, pages)
    body = json.dumps(entries, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    dest = Path(site) / SEARCH_INDEX
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(f"window.GABARITO_SEARCH = {body};\n", encoding="utf-8")
    return len(entries)
