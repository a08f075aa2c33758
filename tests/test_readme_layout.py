"""The README's layout table matches the tree: every package and study has a row, and every module,
folder or file a row names exists where the row says."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = (".py", ".json", ".md", ".sh", ".txt", ".lock.json")


def layout_rows(text: str) -> dict[str, str]:
    part = text[text.index("## Layout"):]
    part = part[:part.index("\n## ", 4)]
    rows = {}
    for line in part.splitlines():
        m = re.match(r"\| `([^`]+)`(?:, `[^`]+`)? \| (.+) \|$", line)
        if m:
            rows[m[1]] = m[2]
    return rows


def missing_names(path: str, what: str, root: Path = REPO) -> list[str]:
    """Names in backticks (plain identifiers, optionally ending in ``/`` or with a file suffix) that
    are neither a module, a folder nor a file under ``path``."""
    base = root / path
    if not base.is_dir():
        return []
    out = []
    for name in re.findall(r"`([A-Za-z_][\w.*]*/?)`", what):
        bare = name.rstrip("/")
        if bare[0].isupper() or ("." in bare and not bare.endswith(FILES)):
            continue  # a class (`Run`) or a function of an engine (`vector.fuse`), not a file
        if "*" in bare:
            found = list(base.glob(bare)) or list(base.rglob(bare))
        else:
            here = [base / bare, base / f"{bare}.py", base.parent / f"{bare}.py"]  # or a module beside it
            found = [p for p in here if p.exists()] or list(base.rglob(bare)) or list(base.rglob(f"{bare}.py"))
        if not found:
            out.append(f"{path}: {name}")
    return out


def test_every_package_and_study_has_a_row():
    rows = layout_rows((REPO / "README.md").read_text(encoding="utf-8"))
    packages = {f"gabarito/{p.name}/" for p in (REPO / "gabarito").iterdir() if (p / "__init__.py").exists()}
    studies = {f"case-studies/{p.name}/" for p in (REPO / "case-studies").iterdir() if (p / "study.json").exists()}
    assert packages | studies <= set(rows), sorted((packages | studies) - set(rows))


def test_every_name_a_row_gives_exists():
    rows = layout_rows((REPO / "README.md").read_text(encoding="utf-8"))
    problems = []
    for path, what in rows.items():
        if path.startswith(("gabarito/", "case-studies/", "scripts/", "docs/")) and path.endswith("/"):
            problems += missing_names(path, what.split(" → ")[0] if path.startswith("case-studies/") else what)
    assert problems == []


def test_the_check_finds_a_name_that_is_not_there(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "real.py").write_text("", encoding="utf-8")
    assert missing_names("pkg/", "`real`, `ghost`, `Run`, `vector.fuse` and `real.py`", tmp_path) == ["pkg/: ghost"]
