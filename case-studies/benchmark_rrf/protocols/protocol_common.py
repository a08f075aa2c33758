"""What the protocol scripts share: the two protocols, their files, ids, and draft checking.

Imported by ``sample_protocols.py``, ``check_questions.py`` and ``freeze_protocols.py``
(all in this folder). The checks themselves are the library's:
:func:`gabarito.measure.leakage.question_problems`.
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.measure.leakage import indexed_text, question_problems

HERE = Path(__file__).resolve().parent
STUDY = HERE.parent

#: Each protocol: id prefix, instruction file, packet, output gold file, shared-stem limit.
PROTOCOLS = {
    "name_only": {"prefix": "n", "instructions": "protocol_name_only.md",
                  "packet": "packet_name_only.json", "out": "questions_name_only.json",
                  "max_shared": None},
    "disjoint": {"prefix": "d", "instructions": "protocol_disjoint.md",
                 "packet": "packet_disjoint.json", "out": "questions_disjoint.json",
                 "max_shared": 1},
}
THEME = "theme.md"
CHECKER = ".venv/bin/python case-studies/benchmark_rrf/protocols/check_questions.py"


def protocol(name: str) -> dict:
    if name not in PROTOCOLS:
        raise GabaritoError(f"unknown protocol {name!r} (choose {', '.join(PROTOCOLS)})")
    return PROTOCOLS[name]


def item_id(prefix: str, i: int) -> str:
    """``n01``, ``d80``: the i-th concept (1-based) of the sample under a protocol."""
    return f"{prefix}{i:02d}"


def read_json(path: Path, what: str):
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise GabaritoError(f"{what} not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno}: {exc.msg}", path=path) from None


def load_draft(path: Path) -> list[dict]:
    """A writer's draft: a JSON list of ``{"id", "question"}``; one-line error on a bad record."""
    data = read_json(path, "draft")
    if not isinstance(data, list):
        raise GabaritoError("a draft is a JSON list of {id, question}", path=path)
    seen: set[str] = set()
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise GabaritoError("expected an object with a string 'id'", path=path, record=i)
        if not isinstance(rec.get("question"), str):
            raise GabaritoError("expected a string 'question'", path=path, record=f"{i} ({rec['id']})")
        if rec["id"] in seen:
            raise GabaritoError(f"duplicate id {rec['id']!r}", path=path, record=i)
        seen.add(rec["id"])
    return data


def check_draft(name: str, packet: dict, draft: list[dict], *, partial: bool = False) -> list[dict]:
    """One row per packet item in the draft: ``{"id", "question", "problems"}``.

    Ids the packet does not hold are rows with a problem; unless ``partial``, so are
    packet ids the draft lacks.
    """
    spec = protocol(name)
    items = {it["id"]: it for it in packet["concepts"]}
    rows = []
    for rec in draft:
        it = items.get(rec["id"])
        if it is None:
            rows.append({"id": rec["id"], "question": rec["question"], "problems": ["unknown id"]})
            continue
        problems = question_problems(it["name"], rec["question"], it.get("indexed_text"),
                                     spec["max_shared"])
        rows.append({"id": rec["id"], "question": rec["question"].strip(), "problems": problems})
    if not partial:
        have = {r["id"] for r in draft}
        rows += [{"id": i, "question": "", "problems": ["missing from the draft"]}
                 for i in items if i not in have]
    return rows


def packets(sample: dict, folder: Path) -> dict[str, dict]:
    """The two writer packets, built from the sample and the instruction files."""
    out = {}
    for name, spec in PROTOCOLS.items():
        items = []
        for i, c in enumerate(sample["concepts"], start=1):
            item = {"id": item_id(spec["prefix"], i), "name": c["search_name"]}
            if spec["max_shared"] is not None:
                item |= {"description": c["description"], "indexed_text": indexed_text(c["fields"])}
            items.append(item)
        packet = {"protocol": name,
                  "instructions": (folder / spec["instructions"]).read_text(encoding="utf-8"),
                  "checker": f"{CHECKER} --protocol {name} YOUR_DRAFT.json"}
        if spec["max_shared"] is None:
            packet["theme"] = (folder / THEME).read_text(encoding="utf-8").strip()
        out[spec["packet"]] = packet | {"concepts": items}
    return out
