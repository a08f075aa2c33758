"""A study's declared plan of claims (the ``claims`` block of ``study.json``), checked.

For each results file the study writes, ``claims`` declares, before a page reads it:

* ``selection`` -- a list of ``{"what", "on", "note", "shared"?}``: each choice behind the file
  (a configuration, N, a weight, a checkpoint, an input) and what it was selected on: ``"none"``
  (fixed in advance), ``"validation"`` (held-out halves or validation queries, never the judged test
  queries shown), ``"training collections"`` (the collections a reader was trained on, never the one
  it is tested on) or ``"test"`` (on the very judgments the file reports). A choice on the test is
  allowed only for a file declared exploratory as a whole, or with ``"shared": true`` when the same
  choice feeds every method compared (it favours none of them); ``note`` says it in one English
  sentence and, for a choice on the test, ``page`` in the Portuguese the page shows;
* ``families`` -- the comparison families the file's p-values were corrected over (or, with
  ``"computed": "library"``, the family a findings function corrects them over with
  :func:`holm_family`). Each is ``{"name", "at", "split"?, "size", "members"?, "correction",
  "computed"?, "p"?, "primary"?}``: ``at`` is a path into the results (a list of keys, ``"*"`` for
  any key) reaching either test rows (dicts holding a raw p and ``p_holm``) or lists of them;
  ``split`` lists the positions of the ``*`` whose keys separate one family from another (the rest
  are members of one family); rows that name a ``measure`` form one family per measure; ``size``
  is the number of comparisons in each family (``stored``: how many of them the file keeps, when it
  keeps only the ones a page reads); ``correction`` is ``"holm"`` or ``"none"`` (the p
  shown is unadjusted: a family of one is never called Holm);
* ``exploratory`` -- ``true`` (the whole file) or a list of paths (as ``at``) of the parts a page
  may show only marked "exploratória", never in "O essencial" or on the home page.

:func:`parse_claims` refuses, in one line naming the ``study.json``, an unknown field, an empty
family, a family of one called Holm or a selection on the test of a file not declared exploratory.
:func:`check_family` compares a declared family with the one the results file's Holm actually ran
over (the groups at ``at``, their sizes and members, and the stored Holm p recomputed from the raw p
over exactly those members) and returns what does not match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.measure import stats

SELECTIONS = ("none", "validation", "training collections", "test")
CORRECTIONS = ("holm", "none")
#: How close a stored Holm p must be to the one recomputed from the raw p over the declared family.
TOLERANCE = 1e-9

_FILE_FIELDS = {"selection", "families", "exploratory"}
_SELECTION_FIELDS = {"what", "on", "note", "shared", "page"}
_FAMILY_FIELDS = {"name", "at", "split", "size", "stored", "members", "correction", "computed", "p", "primary"}


@dataclass(frozen=True)
class Family:
    name: str
    at: tuple[str, ...]
    size: int
    correction: str
    split: tuple[int, ...] = ()
    members: tuple[str, ...] | None = None
    stored: int | None = None
    computed: str = "results"
    p: str | list | None = None
    primary: bool = True


@dataclass(frozen=True)
class Selection:
    what: str
    on: str
    note: str
    shared: bool = False
    page: str | None = None


@dataclass(frozen=True)
class FileClaims:
    results: str
    selection: tuple[Selection, ...]
    families: tuple[Family, ...] = ()
    exploratory: bool | tuple[tuple[str, ...], ...] = ()

    @property
    def all_exploratory(self) -> bool:
        return self.exploratory is True

    @property
    def on_test(self) -> list[Selection]:
        """The choices made on the test's own judgments."""
        return [s for s in self.selection if s.on == "test"]

    def family(self, name: str) -> Family:
        for f in self.families:
            if f.name == name:
                return f
        raise GabaritoError(f"{self.results}: no declared family {name!r}")


def _path(value, where: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(k, str) and k for k in value):
        raise GabaritoError(f"claims: {where} must be a non-empty list of keys", path=path)
    return tuple(value)


def _family(raw, results: str, path: Path) -> Family:
    where = f"{results!r} family {raw.get('name') if isinstance(raw, dict) else raw!r}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise GabaritoError(f"claims: {where} must be an object with a 'name'", path=path)
    unknown = sorted(set(raw) - _FAMILY_FIELDS)
    if unknown:
        raise GabaritoError(f"claims: {where}: unknown field {unknown[0]!r}", path=path)
    size, members = raw.get("size"), raw.get("members")
    if members is not None and (not isinstance(members, list) or not all(isinstance(m, str) for m in members)):
        raise GabaritoError(f"claims: {where}: 'members' must be a list of names", path=path)
    if members is not None and size is None:
        size = len(members)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1 or members == []:
        raise GabaritoError(f"claims: {where} is an empty family (declare its 'size' or 'members')", path=path)
    if members is not None and len(members) != size:
        raise GabaritoError(f"claims: {where}: 'size' {size} but {len(members)} members", path=path)
    correction = raw.get("correction")
    if correction not in CORRECTIONS:
        raise GabaritoError(f"claims: {where}: 'correction' must be one of {', '.join(CORRECTIONS)}", path=path)
    if correction == "holm" and size == 1:
        raise GabaritoError(f"claims: {where} is a family of one called Holm (declare 'correction': 'none')",
                            path=path)
    at = _path(raw.get("at"), f"{where} 'at'", path)
    split = raw.get("split", [])
    stars = sum(k == "*" for k in at)
    if not isinstance(split, list) or not all(isinstance(i, int) and 0 <= i < stars for i in split):
        raise GabaritoError(f"claims: {where}: 'split' must list positions of the '*' in 'at'", path=path)
    stored = raw.get("stored")
    if stored is not None and (not isinstance(stored, int) or isinstance(stored, bool) or not 1 <= stored < size):
        raise GabaritoError(f"claims: {where}: 'stored' must be a count below 'size'", path=path)
    computed = raw.get("computed", "results")
    if computed not in ("results", "library"):
        raise GabaritoError(f"claims: {where}: 'computed' must be 'results' or 'library'", path=path)
    return Family(name=raw["name"], at=at, size=size, correction=correction, split=tuple(split),
                  members=None if members is None else tuple(members), stored=stored, computed=computed, p=raw.get("p"),
                  primary=bool(raw.get("primary", True)))


def _selection(raw, results: str, path: Path) -> tuple[Selection, ...]:
    shape = f"claims: {results!r}: 'selection' must be a non-empty list of {{what, on: {' | '.join(SELECTIONS)}, note}}"
    if not isinstance(raw, list) or not raw:
        raise GabaritoError(shape, path=path)
    out = []
    for x in raw:
        if not isinstance(x, dict) or not {"what", "on", "note"} <= set(x) or x["on"] not in SELECTIONS:
            raise GabaritoError(shape, path=path)
        unknown = sorted(set(x) - _SELECTION_FIELDS)
        if unknown:
            raise GabaritoError(f"claims: {results!r} selection: unknown field {unknown[0]!r}", path=path)
        if not all(isinstance(x[k], str) and x[k] for k in ("what", "note")):
            raise GabaritoError(shape, path=path)
        if x["on"] == "test" and not (isinstance(x.get("page"), str) and x["page"]):
            raise GabaritoError(f"claims: {results!r} selection {x['what']!r} was made on the test: "
                                "'page' must say it in Portuguese, as the page shows it", path=path)
        out.append(Selection(x["what"], x["on"], x["note"], bool(x.get("shared", False)), x.get("page")))
    return tuple(out)


def parse_claims(raw, path: Path) -> dict[str, FileClaims]:
    """``{results file: FileClaims}`` from a ``claims`` block; one error line naming ``path``."""
    if not isinstance(raw, dict) or not raw:
        raise GabaritoError("'claims' must be an object keyed by results file", path=path)
    out = {}
    for results, entry in raw.items():
        if not isinstance(entry, dict):
            raise GabaritoError(f"claims: {results!r} must be an object", path=path)
        unknown = sorted(set(entry) - _FILE_FIELDS)
        if unknown:
            raise GabaritoError(f"claims: {results!r}: unknown field {unknown[0]!r}", path=path)
        selection = _selection(entry.get("selection"), results, path)
        expl = entry.get("exploratory", [])
        if expl is not True:
            if not isinstance(expl, list):
                raise GabaritoError(f"claims: {results!r}: 'exploratory' must be true or a list of paths", path=path)
            expl = tuple(_path(p, f"{results!r} exploratory path", path) for p in expl)
        if any(x.on == "test" and not x.shared for x in selection) and expl is not True:
            raise GabaritoError(f"claims: {results!r} was selected on its test: declare it exploratory "
                                "('exploratory': true)", path=path)
        fams = entry.get("families", [])
        if not isinstance(fams, list):
            raise GabaritoError(f"claims: {results!r}: 'families' must be a list", path=path)
        families = tuple(_family(f, results, path) for f in fams)
        names = [f.name for f in families]
        if len(set(names)) != len(names):
            raise GabaritoError(f"claims: {results!r}: two families named alike", path=path)
        out[results] = FileClaims(results=results, selection=selection, families=families,
                                  exploratory=expl)
    return out


# --- reading a declared family out of a results file

def _walk(node, at: Sequence[str], keys: tuple[str, ...] = ()):
    """``(keys of the '*', node)`` for every node ``at`` reaches."""
    if not at:
        yield keys, node
        return
    head, rest = at[0], at[1:]
    if not isinstance(node, Mapping):
        return
    if head == "*":
        for k, v in node.items():
            yield from _walk(v, rest, keys + (k,))
    elif head in node:
        yield from _walk(node[head], rest, keys)


def _raw_p(row: Mapping, key):
    if isinstance(key, list):
        for k in key[:-1]:
            row = row.get(k, {})
        key = key[-1]
    for k in ((key,) if key else ("p_randomization", "p")):
        if k in row:
            return row[k]
    raise GabaritoError(f"a test row holds no raw p ({key or 'p_randomization or p'})")


@dataclass
class Group:
    """One family as the results hold it: its key (the ``split`` keys, the measure) and members."""

    key: tuple
    members: dict[str, Mapping] = field(default_factory=dict)


def groups(results: Mapping, fam: Family) -> list[Group]:
    """The families ``fam`` names in ``results``: one per ``split`` key (and per measure)."""
    out: dict[tuple, Group] = {}
    found = False
    for keys, node in _walk(results, fam.at):
        found = True
        split = tuple(keys[i] for i in fam.split)
        rest = "/".join(k for i, k in enumerate(keys) if i not in fam.split)
        rows = ([(f"{r['a']}|{r['b']}" if isinstance(r, Mapping) and "a" in r else str(i), r)
                 for i, r in enumerate(node)] if isinstance(node, list) else [(rest, node)])
        for name, row in rows:
            if not isinstance(row, Mapping) or "p_holm" not in row and fam.computed == "results":
                continue
            name = f"{rest}/{name}" if isinstance(node, list) and rest else name
            gkey = split + ((row["measure"],) if "measure" in row else ())
            members = out.setdefault(gkey, Group(gkey)).members
            members[name if name not in members else f"{name}#{len(members)}"] = row  # every row counts
    if not found:
        raise GabaritoError(f"family {fam.name!r}: nothing at {'/'.join(fam.at)}")
    return list(out.values())


def check_family(results: Mapping, fam: Family) -> list[str]:
    """What does not match between the declared family and the results: a group of another size,
    other members, or a stored Holm p that is not Holm over exactly the declared members."""
    problems = []
    for g in groups(results, fam):
        label = f"{fam.name} {'/'.join(map(str, g.key)) or ''}".strip()
        kept = fam.stored or fam.size
        if len(g.members) != kept:
            problems.append(f"{label}: {len(g.members)} comparisons, declared {kept}"
                            + (f" of {fam.size}" if fam.stored else ""))
            continue
        if fam.members is not None and sorted(g.members) != sorted(fam.members):
            problems.append(f"{label}: members {sorted(g.members)}, declared {sorted(fam.members)}")
        if fam.computed == "library":
            continue
        raw = {k: _raw_p(r, fam.p) for k, r in g.members.items()}
        if fam.stored:
            problems += _bounds(label, g, raw, fam.size)
            continue
        want = stats.holm(raw) if fam.correction == "holm" else raw
        for k, r in g.members.items():
            if abs(float(r["p_holm"]) - want[k]) > TOLERANCE:
                problems.append(f"{label}: {k} p_holm {r['p_holm']:.6g} is not "
                                f"{'Holm over the declared family' if fam.correction == 'holm' else 'unadjusted'} "
                                f"({want[k]:.6g})")
                break
    return problems


def _bounds(label: str, g: Group, raw: dict, size: int) -> list[str]:
    """A family kept in part: each stored Holm p lies between Holm over the kept rows (adding
    comparisons never lowers a Holm p) and ``size`` times its raw p."""
    low = stats.holm(raw)
    for k, r in g.members.items():
        if not low[k] - TOLERANCE <= float(r["p_holm"]) <= min(1.0, size * raw[k]) + TOLERANCE:
            return [f"{label}: {k} p_holm {r['p_holm']:.6g} is not Holm over a family of {size} holding the kept rows"]
    return []


def holm_family(results: Mapping, fam: Family) -> dict[tuple, dict[str, float]]:
    """The Holm p of every member of each declared family, from the raw p the results hold
    (``{group key: {member: p}}``); for a family declared unadjusted, the raw p itself."""
    if fam.stored:
        raise GabaritoError(f"family {fam.name!r}: the results keep {fam.stored} of its {fam.size} raw p")
    problems = [p for p in check_family(results, fam) if "comparisons, declared" in p or "members" in p]
    if problems:
        raise GabaritoError(f"the results do not hold the declared family: {problems[0]}")
    out = {}
    for g in groups(results, fam):
        raw = {k: float(_raw_p(r, fam.p)) for k, r in g.members.items()}
        out[g.key] = stats.holm(raw) if fam.correction == "holm" else raw
    return out


def is_exploratory(claims: FileClaims, at: Sequence[str] = ()) -> bool:
    """Whether the part of the file at ``at`` (a path as in ``at``; the whole file when empty) is
    declared exploratory."""
    if claims.exploratory is True:
        return True
    at = tuple(at)
    return bool(at) and any(len(p) <= len(at) and all(x == "*" or x == y for x, y in zip(p, at))
                            for p in claims.exploratory)
