"""One-off migration: the build machine's absolute paths in committed results become portable ids.

    python scripts/migrate_portable_ids.py [--root DIR] [--check]

Until 2026-12-06 a trained cross-encoder was recorded under the absolute path of its cached
folder (``<checkout>/.cache/cross-encoders/heldout-cranfield-…``) and the SPLADE reader under
its folder in the virtual environment (``<checkout>/.venv/lib/python3.11/site-packages/…``).
Those strings name the machine that ran the study, and they are keys of the reranking results:
a rerun from a clone in another folder, or with another cache folder, wrote other keys and
differed everywhere. Readers now record
:func:`gabarito.retrieval.models.sources.portable_location` (``cache:cross-encoders/…``,
``site-packages:cognition/model``). This script rewrites the committed files the same way.

Only the results files a study run recorded (``results.sha256.json``) are read, and only strings
that hold one of the two prefixes under ``--root`` change, in keys and values alike; every number
stays identical. Each changed file is written through
:func:`gabarito.study.records.write_measurement` (its new sha256 recorded), and its provenance
gains ``migrations: [{"what": "portable_ids", "date": ...}]``. ``--check`` only reports.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from gabarito.errors import run_main
from gabarito.study.integrity import MANIFEST, read_manifest, verify
from gabarito.study.records import write_migrated

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "case-studies"
MIGRATION = "portable_ids"


def rewriter(root: str):
    """``text -> text`` with ``<root>/.cache/`` made ``cache:`` and a site-packages folder under
    ``<root>`` made ``site-packages:``."""
    base = re.escape(root.rstrip("/"))
    patterns = [(re.compile(base + r"/\.cache/"), "cache:"),
                (re.compile(base + r"/[^\"\s]*?/site-packages/"), "site-packages:")]

    def rewrite(text: str) -> str:
        for pattern, by in patterns:
            text = pattern.sub(by, text)
        return text
    return rewrite


def migrate(node, rewrite) -> tuple[object, int]:
    """``node`` with every string (keys included) rewritten, and how many changed."""
    if isinstance(node, dict):
        out, count = {}, 0
        for key, value in node.items():
            new_key = rewrite(key) if isinstance(key, str) else key
            new_value, n = migrate(value, rewrite)
            out[new_key] = new_value
            count += n + (new_key != key)
        return out, count
    if isinstance(node, list):
        pairs = [migrate(v, rewrite) for v in node]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(node, str):
        new = rewrite(node)
        return new, int(new != node)
    return node, 0


def recorded_results(studies: Path) -> list[Path]:
    """Every JSON results file a study run recorded in its folder's manifest."""
    return [manifest.parent / name for manifest in sorted(studies.rglob(MANIFEST))
            for name in sorted(read_manifest(manifest)) if name.endswith(".json")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(ROOT), help="the checkout the studies ran in (default: this one)")
    ap.add_argument("--studies", type=Path, default=STUDIES)
    ap.add_argument("--check", action="store_true", help="report what would change, write nothing")
    args = ap.parse_args(argv)
    rewrite = rewriter(args.root)
    plans = []
    for path in recorded_results(args.studies):
        verify(path)  # only a file its run wrote (and recorded) is migrated
        data, changed = migrate(json.loads(path.read_text(encoding="utf-8")), rewrite)
        if changed:
            plans.append((path, data))
            print(f"{path.relative_to(args.studies)}: {changed} strings")
    if args.check:
        return 0
    write_migrated(plans, MIGRATION)
    return 0


if __name__ == "__main__":
    run_main(main)
