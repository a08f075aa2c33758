"""The ``gabarito`` command: fetch data, run studies when stale, build the site.

    gabarito report            # fetch + verify data, rerun stale studies, build _site/
    gabarito fetch [NAME ...]  # datasets only
    gabarito study NAME        # one study, always rerun
    gabarito site              # the site only, from committed results
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
from pathlib import Path

from .datasets import MIRROR_ENV, fetch, load_manifest
from .errors import GabaritoError
from .gold import verify_frozen
from .hashing import sha256_file
from .records import stale_reason

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "case-studies"


def studies() -> dict[str, dict]:
    """Every ``case-studies/<name>/study.json``, keyed by name, with its folder."""
    out = {}
    for spec in sorted(STUDIES.glob("*/study.json")):
        meta = json.loads(spec.read_text(encoding="utf-8"))
        meta["dir"] = spec.parent
        out[meta["name"]] = meta
    return out


def study_staleness(meta: dict, mirror: str | None) -> str | None:
    gold = verify_frozen(meta["dir"] / meta["gold_manifest"])
    corpus = meta.get("corpus")
    corpus_sha = None
    if corpus:
        corpus_sha = sha256_file(fetch(corpus["dataset"], mirror=mirror) / corpus["file"])
    return stale_reason(meta["dir"] / meta["results"], gold_sha256=gold, corpus_sha256=corpus_sha)


def run_study(meta: dict, extra: list[str]) -> None:
    script = meta["dir"] / meta["script"]
    saved = sys.argv
    sys.argv = [str(script), *extra]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise GabaritoError(f"study exited with status {exc.code}", path=script) from None
    finally:
        sys.argv = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gabarito", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=os.environ.get(MIRROR_ENV), help="local dataset mirror directory")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("report", help="data, stale studies, site")
    p.add_argument("--force", action="store_true", help="rerun every study")
    p.add_argument("--arcadedb-url", help="an external ArcadeDB server for the studies")
    p = sub.add_parser("fetch", help="fetch and verify datasets")
    p.add_argument("names", nargs="*")
    p = sub.add_parser("study", help="run one study")
    p.add_argument("name")
    p.add_argument("--arcadedb-url")
    p = sub.add_parser("site", help="build the site from the committed results")
    p.add_argument("--renderer", default="auto", choices=["auto", "smalldocs", "quarto"])
    args = ap.parse_args(argv)
    if args.mirror:
        os.environ[MIRROR_ENV] = str(args.mirror)
    try:
        if args.cmd == "fetch":
            for name in args.names or list(load_manifest()):
                print(f"{name}: {fetch(name, mirror=args.mirror)}")
        elif args.cmd == "study":
            meta = studies()[args.name]
            run_study(meta, ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else [])
        elif args.cmd == "report":
            for name, meta in studies().items():
                reason = "forced" if args.force else study_staleness(meta, args.mirror)
                if reason:
                    print(f"{name}: running the study ({reason})")
                    run_study(meta, ["--arcadedb-url", args.arcadedb_url] if args.arcadedb_url else [])
                else:
                    print(f"{name}: results are current")
            from .site import build

            build(ROOT)
        elif args.cmd == "site":
            from .site import build

            build(ROOT, renderer=args.renderer)
    except GabaritoError as exc:
        print(f"gabarito: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
