"""Numbers and text for the pages, in Brazilian Portuguese, safe to put in Markdown or HTML.

Every number a page shows goes through one of these functions, so that every chapter writes
``1.388`` (a dot between thousands), ``0,346`` (a comma before decimals), ``3,49 s`` rather
than ``3.491 ms``, and ``—`` for a value that does not exist.

Every piece of text that comes from data (a question, a concept name, a note, a file name)
goes through :func:`md` (for ``display(Markdown(...))``) or :func:`text` (for HTML), so that
``<title>`` in a loader note is shown as text and never opens an element. Markup that a page
builds on purpose is an :class:`Html` string: the table builder and :func:`md` pass it through
unchanged, and escape everything else.
"""

from __future__ import annotations

import html
import re
from typing import Callable, Sequence

#: The minus sign of every negative number a page shows (U+2212), never the hyphen.
MINUS = "\u2212"

#: Months of the year, for :func:`date_pt`.
MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
          "setembro", "outubro", "novembro", "dezembro")


class Html(str):
    """A string of markup built on purpose: :func:`md`, :func:`text` and tables do not escape it."""

    __slots__ = ()

    def __add__(self, other):  # Html + Html stays Html; Html + str escapes the str
        return Html(str.__add__(self, other if isinstance(other, Html) else text(other)))


# --- numbers ------------------------------------------------------------------------------------

def num(value: float | None, digits: int = 3) -> str:
    """``0.3456 -> '0,346'``, ``11429 -> '11.429'`` (with ``digits=0``); ``None -> '—'``."""
    if value is None:
        return "—"
    out = f"{value:,.{digits}f}"
    if out.lstrip("-").strip("0.,") == "":
        out = out.lstrip("-")  # no "-0,000"
    out = out.replace(",", "\u2009").replace(".", ",").replace("\u2009", ".")
    return MINUS + out[1:] if out.startswith("-") else out


def integer(value: int | float | None) -> str:
    """``1388 -> '1.388'``, ``10000 -> '10.000'``; ``None -> '—'``."""
    return "—" if value is None else num(round(value), 0)


def pct(value: float | None, digits: int = 1) -> str:
    """A share as a percentage: ``0.925 -> '92,5%'``."""
    return "—" if value is None else f"{num(100 * value, digits)}%"


def ms(value: float | None, digits: int = 1) -> str:
    """A duration given in milliseconds: ``65.04 -> '65,0 ms'``; from 1000 ms on, in seconds
    (``3491 -> '3,49 s'``), so that a thousands dot is never read as a decimal point."""
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return seconds(value / 1000)
    return f"{num(value, digits)} ms"


#: From this many milliseconds on, :func:`duration` speaks in hours.
HOURS_FROM_MS = 2 * 3_600_000


def duration(value: float | None) -> str:
    """A long duration given in milliseconds: as :func:`ms` below two hours, in hours from
    there on (``24_100_000 -> '6,7 h'``)."""
    if value is not None and abs(value) >= HOURS_FROM_MS:
        return f"{num(value / 3_600_000, 1)} h"
    return ms(value)


def seconds(value: float | None, digits: int | None = None) -> str:
    """A duration in seconds: ``0.259 -> '0,26 s'``, ``196.5 -> '196,5 s'``, ``1118 -> '18,6 min'``."""
    if value is None:
        return "—"
    if abs(value) >= 600 and digits is None:
        return f"{num(value / 60, 1)} min"
    if digits is None:
        digits = 2 if abs(value) < 10 else 1
    return f"{num(value, digits)} s"


#: The units a column of durations may take, smallest first: name, milliseconds in one, and
#: the size from which a value is written in the next unit (as :func:`ms`, :func:`seconds`, :func:`duration`).
_DURATION_UNITS = (("ms", 1.0, 1000.0), ("s", 1000.0, 600_000.0), ("min", 60_000.0, HOURS_FROM_MS),
                   ("h", 3_600_000.0, float("inf")))


def duration_unit(values_ms: Sequence[float | None], digits: int | None = None) -> Callable[[float | None], str]:
    """The formatter of a column of durations (given in milliseconds): every value in ONE unit,
    chosen from the column's largest value by the thresholds of :func:`ms`, :func:`seconds` and
    :func:`duration`, so a column never shows ``'578,6 s'`` beside ``'10,5 min'``:
    ``duration_unit([578_600, 630_000])(578_600) -> '9,6 min'``. ``None`` is ``'—'``."""
    top = max((abs(v) for v in values_ms if v is not None), default=0.0)
    name, size, _ = next(u for u in _DURATION_UNITS if top < u[2])
    if digits is None:
        digits = 2 if name == "s" and top < 10_000 else 1

    def shown(value: float | None) -> str:
        return "—" if value is None else f"{num(value / size, digits)} {name}"
    return shown


def seconds_unit(values_s: Sequence[float | None], digits: int | None = None) -> Callable[[float | None], str]:
    """:func:`duration_unit` for a column given in seconds: ``seconds_unit(column)(value_s)``."""
    in_ms = duration_unit([None if v is None else v * 1000 for v in values_s], digits)
    return lambda value: in_ms(None if value is None else value * 1000)


def duration_column(values_ms: Sequence[float | None], digits: int | None = None) -> list[str]:
    """A whole column of durations in milliseconds, formatted by :func:`duration_unit`."""
    return list(map(duration_unit(values_ms, digits), values_ms))


def seconds_column(values_s: Sequence[float | None], digits: int | None = None) -> list[str]:
    """A whole column of durations in seconds, formatted by :func:`seconds_unit`."""
    return list(map(seconds_unit(values_s, digits), values_s))


def megabytes(value: float | None, digits: int = 0) -> str:
    """``2570.9 -> '2.571 MB'``; from 10.000 MB on, in GB."""
    if value is None:
        return "—"
    if abs(value) >= 10000:
        return f"{num(value / 1000, 1)} GB"
    return f"{num(value, digits)} MB"


def times(value: float | None, digits: int = 1) -> str:
    """A ratio: ``12.34 -> '12,3×'``."""
    return "—" if value is None else f"{num(value, digits)}×"


def pvalue(p: float | None) -> str:
    """``0.0004 -> '< 0,001'``, ``0.21 -> '0,210'``."""
    if p is None:
        return "—"
    return "< 0,001" if p < 0.001 else num(p, 3)


#: What the book calls a 95% confidence interval, in the one format :func:`ci` writes.
CI_LABEL = "IC 95%"


def span_of(low: float | None, high: float | None, shown: Callable[[float | None], str] | None = None) -> str:
    """Two ends of a range in the book's one style: ``'0,775 a 0,975'`` (each end through ``shown``,
    :func:`num` by default; ``'−0,400 a −0,050'``, ``'+0,068 a +0,288'`` with :func:`signed`)."""
    shown = shown or num
    return f"{shown(low)} a {shown(high)}"


def ci(interval: Sequence[float] | None, digits: int = 3, *, shown: Callable[[float | None], str] | None = None,
       bare: bool = False) -> str:
    """A 95% confidence interval, the one format of the book: ``[0.1, 0.25] -> '(IC 95%: 0,100 a
    0,250)'``; ``shown`` formats each end (:func:`pct`, :func:`signed`, ...); ``bare`` leaves out
    the parentheses and the label, for a table column headed ``IC 95%``."""
    if interval is None:
        return "—"
    ends = span_of(interval[0], interval[1], shown or (lambda v: num(v, digits)))
    return ends if bare else f"({CI_LABEL}: {ends})"


def estimate(value: float | None, interval: Sequence[float] | None, digits: int = 3, *,
             shown: Callable[[float | None], str] | None = None) -> str:
    """A value and its interval: ``'0,875 (IC 95%: 0,775 a 0,975)'`` (``shown`` as in :func:`ci`)."""
    shown = shown or (lambda v: num(v, digits))
    return f"{shown(value)} {ci(interval, shown=shown)}" if interval is not None else shown(value)


def rank(value: int | None) -> str:
    """A position in a list: ``1 -> '1º'``; ``None`` (not in the list) ``-> '—'``."""
    return "—" if value is None else f"{integer(value)}º"


def signed(value: float | None, digits: int = 3) -> str:
    """A difference with its sign: ``0.05 -> '+0,050'``, ``-0.05 -> '−0,050'``."""
    if value is None:
        return "—"
    out = num(abs(value), digits)
    if out.strip("0,.") == "":
        return out
    return ("+" if value > 0 else "\u2212") + out


def date_pt(iso: str) -> str:
    """``2026-12-02T18:00:00+00:00 -> '2 de dezembro de 2026'``."""
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", str(iso))
    if not m:
        raise ValueError(f"not an ISO date: {iso!r}")
    y, mo, d = m.groups()
    return f"{int(d)} de {MONTHS[int(mo) - 1]} de {y}"


#: The genders of what a count counts: feminine, masculine.
GENDERS = ("f", "m")


def count(n: int, gender: str) -> str:
    """A count as Portuguese writes it in a sentence: ``0 -> 'nenhuma'`` (``gender='f'``: nenhuma
    das 9 coleções) or ``'nenhum'`` (``'m'``); any other count as :func:`integer` (``8 -> '8'``)."""
    if gender not in GENDERS:
        raise ValueError(f"gender must be one of {GENDERS}, not {gender!r}")
    if n < 0:
        raise ValueError(f"not a count: {n}")
    if n == 0:
        return "nenhuma" if gender == "f" else "nenhum"
    return integer(n)


def counted(n: int, one: str, many: str, gender: str) -> str:
    """A count with its noun: ``(0, 'pergunta', 'perguntas', 'f') -> 'nenhuma pergunta'``,
    ``1 -> '1 pergunta'``, ``8 -> '8 perguntas'``."""
    return f"{count(n, gender)} {agree(n, one, many)}"


def agree(n: int, one: str, many: str) -> str:
    """The word that agrees with a count: ``agree(0, 'melhora', 'melhoram') -> 'melhora'`` (nenhuma
    melhora), ``1 -> 'melhora'``, ``4 -> 'melhoram'``."""
    return one if n in (0, 1) else many


def plural(n: int, one: str, many: str) -> str:
    """``plural(1, 'pergunta', 'perguntas') -> '1 pergunta'``; the number as :func:`integer`."""
    return f"{integer(n)} {one if n == 1 else many}"


_IN_WORDS = {"m": ("nenhum", "um", "dois"), "f": ("nenhuma", "uma", "duas")}
_IN_WORDS_REST = ("três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez")
#: The round sizes a rate is stated per ("por mil documentos"), spelled out.
_IN_WORDS_ROUND = {100: "cem", 1000: "mil"}


def in_words(n: int, gender: str) -> str:
    """A small count spelled out, as a heading or a sentence writes it: ``(2, 'f') -> 'duas'``,
    ``(3, 'm') -> 'três'``, ``(0, 'm') -> 'nenhum'``; a round hundred or thousand too (``1000 ->
    'mil'``, the size a rate is stated per), and up to ten thousands (``10000 -> 'dez mil'``,
    ``(2000, 'f') -> 'duas mil'``); above ten otherwise, :func:`integer` (``11 -> '11'``)."""
    if gender not in GENDERS:
        raise ValueError(f"gender must be one of {GENDERS}, not {gender!r}")
    if n < 0:
        raise ValueError(f"not a count: {n}")
    if n < 3:
        return _IN_WORDS[gender][n]
    if n in _IN_WORDS_ROUND:
        return _IN_WORDS_ROUND[n]
    if n % 1000 == 0 and 1 < n // 1000 <= 10:  # a round number of thousands: 'dez mil'
        return f"{in_words(n // 1000, gender)} mil"
    return _IN_WORDS_REST[n - 3] if n <= 10 else integer(n)


def short_hash(value: str | None, n: int = 12) -> str:
    """The first ``n`` characters of a hash, with an ellipsis."""
    return "—" if not value else f"{value[:n]}…"


# --- text ----------------------------------------------------------------------------------------

def text(value: object) -> Html:
    """``value`` as HTML text: ``<``, ``>``, ``&`` and quotes escaped (an :class:`Html` stays as it is)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value)))


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|$@~^])")


def md(value: object) -> str:
    """``value`` as Markdown text: HTML escaped and Markdown's own marks (``*``, ``_``, backticks,
    ``@``, ``$``, ...) backslash-escaped, so a note or a question shows exactly as written."""
    if isinstance(value, Html):
        return str(value)
    out = html.escape(str(value), quote=False)
    out = _MD_SPECIAL.sub(r"\\\1", out)
    out = re.sub(r"^(\s*)(\d+)\.(\s)", r"\1\2\\.\3", out, flags=re.M)  # "1. " would open a list
    return re.sub(r"^(\s*)([-=>])(\s)", r"\1\\\2\3", out, flags=re.M)


def code(value: object, *, whole: bool = False) -> Html:
    """``value`` in ``<code>``, escaped: for file names, identifiers and commands in text.
    ``whole`` keeps it on one line (a hash or a run id that must not break in a narrow column)."""
    cls = ' class="gabarito-whole"' if whole else ""
    return Html(f"<code{cls}>{html.escape(str(value))}</code>")


def english(value: object) -> Html:
    """Text from the data that is in English (a question of the corpus, a concept name, a title),
    marked ``lang="en"`` so that readers, screen readers and the site's checks know it is quoted."""
    return Html(f'<span lang="en">{html.escape(str(value))}</span>')


def join(items: Sequence[object], last: str = " e ") -> str:
    """``['a', 'b', 'c'] -> 'a, b e c'`` (items already formatted)."""
    items = [str(x) for x in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + last + items[-1]
