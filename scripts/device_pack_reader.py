"""Pack what the reader-curve study needs on a lent GPU machine (issue 45, item 3) into one ignored
folder that travels with the device call (at most 64 MiB per call, files and carried folders
together; the machine cannot download):

- the base model, all-MiniLM-L6-v2's transformer with its weights cast to float16 (about 45 MB,
  :func:`gabarito.retrieval.rerank.transport.half_copy`);
- the five classic collections from the data mirror, with their lines of ``SHA256SUMS`` (the
  fetch there verifies them as here);
- ``pack.json``: what was packed, each file's sha256, and the command to run there.

    python scripts/device_pack_reader.py                      # into .gpu/ (add "/.gpu/" to .git/info/exclude)
    python scripts/device_pack_reader.py --out "$(mktemp -d)"  # anywhere

The committed tree travels too, and it is larger than the transport allows; ``docs/rebuild_budget.md``
("The reader curve on a GPU") says which tracked folders to take out of the index for the length of
the device calls, and how to put them back.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gabarito.hashing import atomic_write_json, sha256_file  # noqa: E402
from gabarito.inputs.collections.registry import names  # noqa: E402
from gabarito.retrieval.rerank.resumable import CurveConfig  # noqa: E402
from gabarito.retrieval.rerank.transport import half_copy  # noqa: E402

#: The device command (the ``run`` tool's ``command``): ``studies`` importable without installing
#: (the image has torch and transformers, not this project), train one fold for at most ``HOURS``
#: (the state stays in the ignored cache, kept between calls while the machine is warm), then bring
#: the curve back under $OUT. Rerun it to resume; a finished fold is never trained again.
HOURS = 0.14
COMMAND = ("S=$(mktemp -d) && ln -s \"$PWD/case-studies\" \"$S/studies\" && export PYTHONPATH=\"$S:$PWD\" "
           "GABARITO_CACHE_DIR=\"$PWD/.cache/gpu\" && python3 case-studies/standard_collections/train_reader_curve.py "
           "--device cuda --base-folder {pack}/model --mirror {pack}/datasets --folds {fold} --losses {loss} "
           "--hours {hours} --train-only; cp case-studies/standard_collections/rerankers_curve_progress.json "
           "case-studies/standard_collections/results.sha256.json \"$OUT\"/")


def pack(out: Path, mirror: Path, collections: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    model = half_copy(CurveConfig().base_model, out / "model")
    data = out / "datasets"
    shutil.rmtree(data, ignore_errors=True)
    sums = [line for line in (mirror / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
            if line.split()[-1].split("/")[0] in collections]
    for c in collections:
        shutil.copytree(mirror / c, data / c, ignore=shutil.ignore_patterns("SOURCE.txt"))
    (data / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    files = {p.relative_to(out).as_posix(): sha256_file(p) for p in sorted(out.rglob("*")) if p.is_file()}
    size = sum((out / f).stat().st_size for f in files)
    record = {"model": model, "collections": collections, "files": files, "bytes": size,
              "command": COMMAND.format(pack=os.path.relpath(out, ROOT), fold="cranfield", loss="bce", hours=HOURS)}
    atomic_write_json(out / "pack.json", record)
    return record


def merge(returned: Path, local: Path) -> list[str]:
    """Take the runs another device trained (their entries in the ledger the device call brought
    back, ``returned``) into the local ledger; the local CPU runs stay as they are. Both ledgers
    are checked against their manifests first; returns the keys taken."""
    from gabarito.study.integrity import verify
    from gabarito.study.records import now_iso, write_measurement

    verify(returned)
    verify(local)
    theirs = json.loads(returned.read_text(encoding="utf-8"))
    ours = json.loads(local.read_text(encoding="utf-8"))
    taken = sorted(k for k, f in theirs["folds"].items() if f["device"] != "cpu")
    ours["folds"].update({k: theirs["folds"][k] for k in taken})
    ours["provenance"] = {**ours["provenance"], "date": now_iso(),
                          "merged": {"from": returned.name, "git": theirs["provenance"]["git"], "runs": taken}}
    write_measurement(local, ours)
    return taken


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / ".gpu"), help="the folder to pack into (default .gpu/)")
    ap.add_argument("--mirror", default=os.environ.get("GABARITO_DATA_MIRROR", str(ROOT.parent / "shared" / "datasets")),
                    help="the data mirror holding the collections and SHA256SUMS")
    ap.add_argument("--merge", default=None, metavar="LEDGER",
                    help="instead of packing: take the GPU runs of the ledger a device call brought back "
                         "(with its results.sha256.json beside it) into the study's own")
    a = ap.parse_args(argv)
    if a.merge:
        local = ROOT / "case-studies" / "standard_collections" / "rerankers_curve_progress.json"
        print(f"merged {', '.join(merge(Path(a.merge), local)) or 'nothing'} into {local.name}")
        return 0
    record = pack(Path(a.out), Path(a.mirror), list(names()))
    print(f"packed {record['bytes'] / 2**20:.1f} MiB into {a.out}; on the device:\n{record['command']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
