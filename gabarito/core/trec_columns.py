"""The fast TREC run reader: a run file's bytes to the columns of a
:class:`~gabarito.core.columnar.ColumnarRun`, with no Python object per line but the doc ids.

A file in the canonical form -- ``qid Q0 doc rank score tag``, one space between fields, lines
ended by ``\n`` -- is split in C: by Arrow's CSV reader (threads) where pyarrow is installed (it
comes with the extras), else by pandas' C reader (the core install). A file with tabs, runs of
blanks or ``\r\n`` endings is first rewritten to that form (two byte-level regex passes). A
file holding any other separator Python's ``str.split``/``splitlines`` knows (``\v``, ``\f``,
``\x1c``-``\x1f``, Unicode spaces and line breaks), a line that is not six fields, an empty
field or a score the C parser refuses is left to the line reader
(:meth:`ColumnarRun._from_lines <gabarito.core.columnar.ColumnarRun>`), which reads it as it
always did and names the file and the first bad line.

Scores are exactly Python's ``float`` of their text: Arrow's cast (``fast_float``) and numpy's
both round correctly, as ``float`` does, so every finite value is the same double; a text read
as infinite or NaN is read again by ``float`` (which refuses ``nan(...)``), and a text the C
parser refuses (Arrow: ``1_000``, ``+nan``) sends the file to the line reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError

#: Separators that Python's ``str.split``/``splitlines`` know and the canonical form does not.
_ODD_BYTES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_ODD_TEXT = re.compile("[\v\f\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_LINE_END = re.compile(rb"[ \t]*(?:\r\n?|\n)[ \t]*")
_BLANKS = re.compile(rb"[ \t]+")

COLUMNS = 6
_NAMES = [str(i) for i in range(COLUMNS)]


def read_bytes(path: Path) -> bytes:
    """The file's bytes, checked to be UTF-8 text; a missing file or other bytes are one line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise GabaritoError("file not found", path=path) from None
    except IsADirectoryError:
        raise GabaritoError("is a folder, not a file", path=path) from None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GabaritoError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    return data


def odd_separators(data: bytes) -> bool:
    """True when ``data`` holds a separator that Python's ``split``/``splitlines`` know besides
    space, tab, ``\r`` and ``\n`` (left to the line reader)."""
    return any(odd in data for odd in _ODD_BYTES) or (not data.isascii() and bool(_ODD_TEXT.search(data.decode("utf-8"))))


def normalized(data: bytes) -> bytes:
    """``data`` (no odd separator) with one space between fields and ``\n`` line ends: the
    lines and fields Python's ``splitlines`` and ``split`` give."""
    return _BLANKS.sub(b" ", _LINE_END.sub(b"\n", data)).strip(b" ")


def arrow():
    """``(pyarrow, pyarrow.csv, pyarrow.compute)``, or None where pyarrow is not installed (the
    core install: it comes with the extras): the reader then splits with pandas."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyarrow import csv
    except ImportError:
        return None
    return pa, csv, pc


def _split_arrow(data: bytes, modules) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The columns of ``data`` split at single spaces by Arrow's CSV reader (threads, C++), the
    scores parsed by Arrow's cast; None when a line is not six fields, a field is empty or a
    score is no number to Arrow."""
    pa, csv, pc = modules
    try:
        table = csv.read_csv(
            pa.py_buffer(data),
            read_options=csv.ReadOptions(column_names=_NAMES),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                           double_quote=False, ignore_empty_lines=True),
            convert_options=csv.ConvertOptions(column_types={n: pa.string() for n in _NAMES},
                                               strings_can_be_null=False, quoted_strings_can_be_null=False))
        if any(pc.min(pc.binary_length(table.column(n))).as_py() == 0 for n in _NAMES):
            return None
        table = table.select(["0", "2", "4"])  # the other columns' memory goes now
        scores = np.array(pc.cast(table.column("4"), pa.float64()).to_numpy(), dtype=np.float64)
    except pa.ArrowInvalid:
        return None
    scores = _checked(scores, lambda rows: pc.take(table.column("4"), pa.array(rows)).to_pylist())
    if scores is None:
        return None
    codes = table.column("0").combine_chunks().dictionary_encode()
    queries = np.empty(len(codes.dictionary), dtype=object)
    queries[:] = codes.dictionary.to_pylist()
    return queries, codes.indices.to_numpy().astype(np.int64), _objects(table.column("2")), scores


def _objects(column) -> np.ndarray:
    """An Arrow text column as an object array of ``str`` in row order (pandas' conversion, which
    shares one object among equal nearby texts: less memory, and faster to hash than one object
    per distinct text spread over the whole run)."""
    if not len(column):
        return np.empty(0, dtype=object)
    return np.asarray(column.to_pandas(deduplicate_objects=True).to_numpy(), dtype=object)


def _split_pandas(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The columns of ``data`` split at single spaces by pandas' C reader, the scores cast by
    numpy (which rounds correctly, as ``float`` does); None when a line is not six fields, a
    field is empty or a score is no number to numpy."""
    import csv
    from io import BytesIO

    import pandas as pd

    try:
        frame = pd.read_csv(BytesIO(data), sep=" ", header=None, names=range(COLUMNS), quoting=csv.QUOTE_NONE,
                            dtype=str, keep_default_na=False, na_filter=False, skip_blank_lines=True,
                            engine="c", encoding="utf-8")
    except (pd.errors.ParserError, ValueError):
        return None
    if (frame == "").to_numpy().any():
        return None
    texts = frame[4].to_numpy(dtype=object)
    try:
        scores = texts.astype(str).astype(np.float64)
    except ValueError:
        return None
    scores = _checked(scores, lambda rows: texts[rows].tolist())
    if scores is None:
        return None
    codes, queries = pd.factorize(frame[0], sort=False)
    return np.asarray(queries, dtype=object), codes.astype(np.int64), frame[2].to_numpy(dtype=object), scores


def _checked(scores: np.ndarray, texts_of) -> np.ndarray | None:
    """``scores`` with each infinite or NaN value read again by Python's ``float`` from its text
    (``texts_of(rows)``); None when ``float`` refuses one (the line reader then names it)."""
    odd = np.flatnonzero(~np.isfinite(scores))
    if len(odd):
        try:
            scores[odd] = [float(t) for t in texts_of(odd)]
        except ValueError:
            return None
    return scores


def _split(data: bytes):
    modules = arrow()
    return _split_pandas(data) if modules is None else _split_arrow(data, modules)


def read_trec_columns(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(queries, query, docs, score)`` of a TREC run file -- the query ids in order of first
    appearance, each row's index into them, its doc id and score -- or None when the file needs
    the line reader (an odd separator, a line that is not six fields, a score that is no number)."""
    data = read_bytes(path)
    if odd_separators(data):
        return None
    columns = None if b"\t" in data or b"\r" in data else _split(data)
    if columns is None:
        data = normalized(data)
        if not data.strip(b"\n"):
            empty = np.empty(0, dtype=object)
            return empty, np.zeros(0, dtype=np.int64), empty.copy(), np.zeros(0, dtype=np.float64)
        columns = _split(data)
    return columns


def repeated_line(path: Path) -> tuple[int, str, str]:
    """``(line number, query id, doc id)`` of the first line of a TREC run file whose doc id
    already appeared in its query (read by the line reader: only an error is looked up so)."""
    from gabarito.files import columns

    seen: set = set()
    for lineno, parts in columns(path, COLUMNS, "a TREC run line"):
        if (parts[0], parts[2]) in seen:
            return lineno, parts[0], parts[2]
        seen.add((parts[0], parts[2]))
    raise GabaritoError("no doc id appears twice in one query here", path=path)
