"""Gold sets: sampling, the vocabulary rule, loading with checks, and the freeze manifest.

A gold file is JSON: ``{"name", "author", "method", "pairs": [{"id", "question",
"gold"}]}``. ``gold`` is the one relevant document id (concept name). The freeze
manifest records each gold file's sha256; :func:`verify_frozen` refuses to go
on when a file no longer matches, so a question cannot be edited after the
search it judges has run without that being caught.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from gabarito.errors import GabaritoError
from gabarito.files import read_json
from gabarito.hashing import atomic_write_json, sha256_file

#: Function words ignored by the vocabulary rule (a question may share these with the name).
STOP_WORDS = frozenset(
    """the a an of to in and or that is are how what for not it on who which by from with as
    at all just out up so be do does get gets has have they their you we its into than then
    only more most some several through over about before after when where whether while why""".split()
)

_WORD = re.compile(r"[a-z]+")


def content_words(text: str) -> set[str]:
    """Lower-case alphabetic words of three letters or more that are not stop words."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS}


def rule_violations(name: str, question: str) -> set[str]:
    """Content words of the concept ``name`` that appear in ``question`` (empty = rule kept)."""
    return content_words(name.replace("_", " ")) & content_words(question)


def draw_sample(names: Iterable[str], seed: int, n: int, exclude: Iterable[str] = ()) -> list[str]:
    """Simple random sample: sort first (file order must not matter), then draw, then sort."""
    excluded = set(exclude)
    pool = sorted(set(names) - excluded)
    if n > len(pool):
        raise GabaritoError(f"cannot draw {n} from {len(pool)} names")
    return sorted(random.Random(seed).sample(pool, n))


@dataclass(frozen=True)
class Pair:
    id: str
    question: str
    gold: str


def load_gold(path: str | Path, known_ids: Iterable[str] | None = None,
              *, check_rule: bool = True) -> list[Pair]:
    """Load and check a gold file; raise a one-line :class:`GabaritoError` on the first bad record."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise GabaritoError("gold file not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno}: {exc.msg}", path=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise GabaritoError("expected an object with a 'pairs' list", path=path)
    known = set(known_ids) if known_ids is not None else None
    pairs: list[Pair] = []
    seen_ids: set[str] = set()
    for i, rec in enumerate(data["pairs"], start=1):
        if not isinstance(rec, dict):
            raise GabaritoError("pair is not an object", path=path, record=i)
        pid = str(rec.get("id") or f"q{i:03d}")
        label = f"{i} ({pid})"
        question = rec.get("question")
        gold = rec.get("gold")
        if not isinstance(question, str) or not question.strip():
            raise GabaritoError("empty question", path=path, record=label)
        if not isinstance(gold, str) or not gold:
            raise GabaritoError("missing gold concept", path=path, record=label)
        if pid in seen_ids:
            raise GabaritoError(f"duplicate id {pid!r}", path=path, record=label)
        if known is not None and gold not in known:
            raise GabaritoError(f"gold concept {gold!r} is not in the corpus", path=path, record=label)
        if check_rule:
            bad = rule_violations(gold, question)
            if bad:
                raise GabaritoError(
                    f"question repeats content words of {gold!r}: {', '.join(sorted(bad))}",
                    path=path, record=label,
                )
        seen_ids.add(pid)
        pairs.append(Pair(pid, question.strip(), gold))
    if not pairs:
        raise GabaritoError("no pairs", path=path)
    return pairs


# --- freeze manifest -------------------------------------------------------------------------

def freeze(manifest: str | Path, files: Sequence[str | Path], note: str = "") -> dict:
    """Record the sha256 of each gold file in ``manifest`` (paths stored relative to it)."""
    manifest = Path(manifest)
    base = manifest.parent
    entries = {}
    for f in files:
        f = Path(f)
        rel = f.resolve().relative_to(base.resolve()).as_posix()
        entries[rel] = sha256_file(f)
    record = {
        "frozen_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "note": note,
        "files": entries,
    }
    atomic_write_json(manifest, record)
    return record


def verify_frozen(manifest: str | Path) -> dict[str, str]:
    """Check every file in the manifest still has its frozen hash; return {relpath: sha256}."""
    manifest = Path(manifest)
    record = read_json(manifest, missing="freeze manifest not found: freeze the gold before searching")
    out = {}
    for rel, expected in record.get("files", {}).items():
        path = manifest.parent / rel
        if not path.exists():
            raise GabaritoError("frozen gold file is missing", path=path)
        got = sha256_file(path)
        if got != expected:
            raise GabaritoError(
                f"gold changed after it was frozen (sha256 {got[:12]}… != frozen {expected[:12]}…)",
                path=path,
            )
        out[rel] = got
    if not out:
        raise GabaritoError("freeze manifest lists no files", path=manifest)
    return out


def check_not_frozen(manifest: str | Path, files: Sequence[str | Path]) -> None:
    """Raise when ``manifest`` (if it exists) already lists one of ``files``: call before writing them."""
    manifest = Path(manifest)
    if not manifest.exists():
        return
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno}", path=manifest) from None
    base = manifest.parent.resolve()
    for f in files:
        if Path(f).resolve().relative_to(base).as_posix() in listed:
            raise GabaritoError(f"already frozen in {manifest.name}: it cannot be written or frozen again",
                                path=f)


def freeze_more(manifest: str | Path, files: Sequence[str | Path], note: str = "") -> dict:
    """Add ``files`` to a freeze manifest without ever re-freezing an edited file.

    When ``manifest`` exists, every file it lists must still match (:func:`verify_frozen`),
    and a file it already lists cannot be given again. Then :func:`freeze` records the old
    files and the new ones; the earlier freeze (time, note, files) is kept under ``history``.
    """
    manifest = Path(manifest)
    new = [Path(f) for f in files]
    check_not_frozen(manifest, new)
    old: dict = {}
    if manifest.exists():
        verify_frozen(manifest)
        old = json.loads(manifest.read_text(encoding="utf-8"))
    record = freeze(manifest, [manifest.parent / rel for rel in old.get("files", {})] + new, note)
    if old:
        earlier = {k: old.get(k) for k in ("frozen_at", "note")} | {"files": sorted(old["files"])}
        record["history"] = old.get("history", []) + [earlier]
        atomic_write_json(manifest, record)
    return record


def stratified_split(items: Sequence, key, fraction: float, seed: int) -> tuple[list, list]:
    """Split ``items`` into (tuning, held_out) keeping each stratum's share.

    Strata are ``key(item)`` values, visited in sorted order; inside each, items keep their
    order, get shuffled by one ``random.Random(seed)``, and ``round(len * fraction)`` of them
    (at least one when the stratum has two or more) go to the held-out part. Both parts are
    returned in the original order.
    """
    if not 0 < fraction < 1:
        raise GabaritoError(f"held-out fraction must be between 0 and 1, not {fraction}")
    rng = random.Random(seed)
    strata: dict = {}
    for i, item in enumerate(items):
        strata.setdefault(key(item), []).append(i)
    held: set[int] = set()
    for k in sorted(strata, key=str):
        idx = strata[k][:]
        rng.shuffle(idx)
        n = round(len(idx) * fraction)
        if len(idx) >= 2:
            n = min(max(n, 1), len(idx) - 1)
        held.update(idx[:n])
    return ([x for i, x in enumerate(items) if i not in held], [x for i, x in enumerate(items) if i in held])
