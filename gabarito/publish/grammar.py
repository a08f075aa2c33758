"""Portuguese that reads as written: counts in words, and articles that agree with a name.

A generated sentence never writes ``"melhora 0 e piora 8 das 9"`` nor ``"na coleções
clássicas"``. It asks here:

- :func:`count` writes a count the way Portuguese does (``0`` is ``"nenhuma"`` or ``"nenhum"``,
  with the gender of what is counted), :func:`counted` writes it with its noun
  (``"nenhuma pergunta"``, ``"1 pergunta"``, ``"8 perguntas"``); both live in
  :mod:`gabarito.publish.formatting` with the other numbers (``fmt.count``);
- :class:`Name` is a name of the registry (:mod:`gabarito.publish.labels`) with its gender and
  number, so that :func:`the` and :func:`contract` give ``"a central de ajuda"``, ``"na central de
  ajuda"``, ``"nas coleções clássicas"``, ``"nos julgamentos"``, ``"do estudo principal"``.
"""

from __future__ import annotations

from gabarito.publish.formatting import GENDERS, count, counted  # noqa: F401  (counts live with the numbers)


class Name(str):
    """A name the pages print (``"central de ajuda"``), with its ``gender`` (``"f"``/``"m"``) and
    whether it is ``plural``. It is the name itself wherever a plain string is expected."""

    def __new__(cls, value: str, gender: str, plural: bool = False):
        if gender not in GENDERS:
            raise ValueError(f"gender must be one of {GENDERS}, not {gender!r}")
        out = super().__new__(cls, value)
        out.gender, out.plural = gender, bool(plural)
        return out

    def __reduce__(self):
        return Name, (str(self), self.gender, self.plural)


def _gender(name: object, gender: str | None = None) -> str:
    g = gender or getattr(name, "gender", None)
    if g not in GENDERS:
        raise ValueError(f"no gender known for {name!r}: make it a Name")
    return g


#: The definite article, by (gender, plural).
_ARTICLE = {("f", False): "a", ("f", True): "as", ("m", False): "o", ("m", True): "os"}
#: A preposition joined with the article: em + a = na, de + os = dos, a + a = à, por + o = pelo.
_CONTRACTED = {"em": "n", "de": "d", "por": "pel"}
_CRASE = {"a": "à", "as": "às", "o": "ao", "os": "aos"}


def article(name: Name, gender: str | None = None, plural: bool | None = None) -> str:
    """The definite article of ``name``: ``'a'``, ``'as'``, ``'o'`` or ``'os'``."""
    many = getattr(name, "plural", False) if plural is None else plural
    return _ARTICLE[_gender(name, gender), bool(many)]


def the(name: Name) -> str:
    """``name`` with its article: ``'a central de ajuda'``, ``'os julgamentos'``."""
    return f"{article(name)} {name}"


def contract(preposition: str, name: Name) -> str:
    """``name`` after a preposition joined with its article: ``contract('em', central de ajuda) ->
    'na central de ajuda'``, ``('em', coleções clássicas) -> 'nas coleções clássicas'``,
    ``('de', julgamentos) -> 'dos julgamentos'``, ``('a', estudo principal) -> 'ao estudo principal'``,
    ``('por', ...) -> 'pela ...'``; any other preposition is written before the article."""
    art = article(name)
    if preposition == "a":
        return f"{_CRASE[art]} {name}"
    if preposition in _CONTRACTED:
        return f"{_CONTRACTED[preposition]}{art} {name}"
    return f"{preposition} {art} {name}"
