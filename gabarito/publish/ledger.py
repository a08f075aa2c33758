"""The ledger of shown numbers: every number a page states passes through :func:`show`.

A number on a page has an identity (:class:`Identity`: everything that changes its value — the
study, the collection or gold set, the method, the measure, the judgment key, the unit of
retrieval, the depth and a variant), a value, the text the page prints (made by a function of
:mod:`gabarito.publish.formatting`), the file it was read from and the key path inside that
file. :func:`show` records all of it and returns the printed text marked up with its source:

- ``title`` and ``data-`` attributes name the file, the key and the commit the file records
  (shown on hover, or on tap: the element takes the focus);
- where the site serves the file (one of :func:`gabarito.publish.provenance.all_downloads`) the
  number links to the downloadable copy, so an auditor goes from a figure to its value in one step.

While the site build runs a notebook, ``$GABARITO_LEDGER`` names the JSON file that collects that
page's records (:mod:`gabarito.publish.site.execute` sets it, and the build writes the file next
to the built page); elsewhere the records are kept in memory only (:func:`records`).
:mod:`gabarito.publish.ledger_check` reads the book's ledgers and names what disagrees.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json
from gabarito.publish.formatting import Html

#: The environment variable naming the page's ledger file (set by the site build).
LEDGER_ENV = "GABARITO_LEDGER"
#: The environment variable naming the page (its path in the project), set beside :data:`LEDGER_ENV`.
PAGE_ENV = "GABARITO_LEDGER_PAGE"
#: The schema of a ledger file.
SCHEMA = "gabarito.ledger/1"
#: Where a number stands on its page.
WHERE = ("prose", "table", "figure")
#: The units of retrieval a measure can count in.
UNITS = ("", "document", "passage")


@dataclass(frozen=True)
class Identity:
    """Everything that changes a shown number's value; two numbers with equal identities must be
    equal. ``measure`` is the measure's canonical name (``hit@1``, ``R@10``, ``kappa``,
    ``build_s``); ``unit``: ``document`` or ``passage`` where the measure counts either;
    ``variant`` names what else differs (``linear, either non-zero``, ``median``)."""

    study: str
    measure: str
    collection: str = ""
    method: str = ""
    judgment: str = ""
    unit: str = ""
    depth: int | None = None
    variant: str = ""

    def __post_init__(self):
        if not self.study or not self.measure:
            raise ValueError("an identity names at least its study and its measure")
        if self.unit not in UNITS:
            raise ValueError(f"unit {self.unit!r} is not one of {UNITS}")

    def __str__(self) -> str:
        """The canonical key: ``study/collection/method/measure[@depth]/judgment/unit/variant``."""
        depth = "" if self.depth is None else f"@depth={self.depth}"
        parts = (self.study, self.collection, self.method, f"{self.measure}{depth}", self.judgment, self.unit,
                 self.variant)
        return "/".join(parts)

    @classmethod
    def from_dict(cls, data: Mapping) -> "Identity":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


#: The page's folder: the working directory the kernel started in (a page may change it later).
_PAGE_DIR = Path.cwd()
_records: list[dict] = []
_commits: dict[str, str | None] = {}
_downloads: dict[Path, frozenset[Path]] = {}


def records() -> list[dict]:
    """This process's records, in the order shown."""
    return list(_records)


def reset() -> None:
    """Forget this process's records (tests)."""
    _records.clear()
    _commits.clear()
    _downloads.clear()


def _root(page_dir: Path) -> Path:
    from gabarito.publish.provenance import project_root

    return project_root(page_dir)


def _commit(path: Path) -> str | None:
    """The commit the file records (its ``provenance.git.commit``, or ``git.commit`` at the top)."""
    key = str(path)
    if key not in _commits:
        from gabarito.publish.provenance import provenance_of

        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        git = provenance_of(data).get("git") if isinstance(data, Mapping) else None
        _commits[key] = git.get("commit") if isinstance(git, Mapping) else None
    return _commits[key]


def _served(path: Path, root: Path) -> str | None:
    """The site path of the file's downloadable copy, or ``None`` where the site does not serve it."""
    from gabarito.publish.provenance import all_downloads, download_path

    if root not in _downloads:
        _downloads[root] = frozenset(p.resolve() for p in all_downloads(root))
    resolved = path.resolve()
    return download_path(resolved, root) if resolved in _downloads[root] else None


def resolve(data: Any, key: Sequence) -> Any:
    """The value at ``key`` (a path of dict keys and list indexes) inside ``data``; ``KeyError``
    naming the first step that is not there."""
    node = data
    for step in key:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"no {step!r} at {list(key)}") from None
    return node


def _page(page_dir: Path, root: Path) -> str:
    env = os.environ.get(PAGE_ENV)
    if env:
        return env
    try:
        return page_dir.resolve().relative_to(root).as_posix()
    except ValueError:
        return page_dir.as_posix()


def show(identity: Identity, value: float | int | None, formatter: Callable[..., str], *args,
         source: str | Path, key: Sequence, label: str, where: str = "prose", page_dir: str | Path | None = None,
         **kwargs) -> Html:
    """``formatter(value, *args, **kwargs)`` (a function of :mod:`gabarito.publish.formatting`),
    recorded in the ledger under ``identity`` and marked up with its source.

    ``source`` is the file the value was read from, ``key`` the path inside it (``["groups",
    "tuning", "top1"]``; for a value a findings function derives, the path of what it derives it
    from), ``label`` the words the page names the number by (on one page, one label names one
    identity), ``where`` ``prose``, ``table`` or ``figure``. ``page_dir`` is the page's folder
    (the notebook's working directory), from which the project and the served files are found.
    """
    if not isinstance(identity, Identity):
        raise TypeError(f"show() takes an Identity, not {type(identity).__name__}")
    if where not in WHERE:
        raise ValueError(f"where must be one of {WHERE}, not {where!r}")
    shown = str(formatter(value, *args, **kwargs))
    page_dir = _PAGE_DIR if page_dir is None else Path(page_dir).resolve()
    root = _root(page_dir)
    path = Path(source)
    path = (path if path.is_absolute() else page_dir / path).resolve()
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        raise GabaritoError("a shown number's source must live inside the project", path=path) from None
    record = {"identity": asdict(identity), "id": str(identity), "value": value, "text": shown, "label": label,
              "where": where, "source": rel, "key": list(key), "commit": _commit(path), "page": _page(page_dir, root)}
    _records.append(record)
    _write()
    return _markup(record, _served(path, root), page_dir, root)


_READ = object()


class Source:
    """One file a page reads numbers from: :meth:`show` takes the value at a key of the file itself,
    so what the page prints is what the file holds.

    ``Source("../case-studies/fusion/results.json").show(identity, ["corpora", "npl", ...],
    fmt.times, 2, label="...")``; a value a findings function derives from the file is passed as
    ``value=`` with the key of what it is derived from.
    """

    def __init__(self, path: str | Path, page_dir: str | Path | None = None):
        from gabarito.publish.provenance import load_json

        self.path = Path(path)
        self.page_dir = _PAGE_DIR if page_dir is None else Path(page_dir).resolve()
        self.data = load_json(self.path if self.path.is_absolute() else self.page_dir / self.path)

    def value(self, key: Sequence) -> Any:
        """The value at ``key``; a key that is not there is a :class:`GabaritoError` naming the file."""
        try:
            return resolve(self.data, key)
        except KeyError as exc:
            raise GabaritoError(f"a page reads a key the file does not have: {exc.args[0]}", path=self.path) from None

    def show(self, identity: Identity, key: Sequence, formatter: Callable[..., str], *args, label: str,
             where: str = "prose", value: Any = _READ, **kwargs) -> Html:
        """:func:`show` of the value at ``key`` (or of ``value``, derived from what ``key`` holds)."""
        shown = self.value(key) if value is _READ else value
        return show(identity, shown, formatter, *args, source=self.path, key=key, label=label, where=where,
                    page_dir=self.page_dir, **kwargs)


def _markup(record: Mapping, served: str | None, page_dir: Path, root: Path) -> Html:
    key = "/".join(str(k) for k in record["key"])
    commit = record["commit"]
    title = f"{record['label']}: fonte {record['source']}, chave {key}" + (f", commit {commit[:12]}" if commit else "")
    attrs = (f' class="gabarito-num" title="{html.escape(title)}" data-source="{html.escape(record["source"])}"'
             f' data-key="{html.escape(key)}" data-commit="{html.escape(commit or "")}"'
             f' data-identity="{html.escape(record["id"])}"')
    shown = html.escape(record["text"], quote=False)
    if served:
        up = Path(os.path.relpath(root, page_dir.resolve())).as_posix()
        href = served if up == "." else f"{up}/{served}"
        return Html(f'<a{attrs} href="{html.escape(href)}">{shown}</a>')
    return Html(f'<span{attrs} tabindex="0">{shown}</span>')


def _write() -> None:
    path = os.environ.get(LEDGER_ENV)
    if path:
        atomic_write_json(Path(path), {"schema": SCHEMA, "records": _records})


def read(path: str | Path) -> list[dict]:
    """The records of one ledger file; a damaged one is a :class:`GabaritoError` naming it."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GabaritoError(f"cannot read the ledger: {exc}", path=path) from None
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA or not isinstance(data.get("records"), list):
        raise GabaritoError(f"not a ledger of schema {SCHEMA}", path=path)
    return data["records"]
