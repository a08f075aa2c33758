"""External data: fetched from the upstream URL or copied from a local mirror, always sha256-verified.

The manifest ``data/datasets.json`` names each dataset's files with URL and
sha256. A mirror is a directory laid out as ``<mirror>/<dataset>/<file>``
(``../shared/datasets`` is one); it is given by ``--mirror`` or the
``GABARITO_DATA_MIRROR`` environment variable. Files land in the cache
directory (``GABARITO_DATA_DIR``, default ``.cache/data``) and are never
committed.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file

from gabarito.paths import CACHE, ROOT  # noqa: E402
MANIFEST = ROOT / "data" / "datasets.json"
MIRROR_ENV = "GABARITO_DATA_MIRROR"
DATA_DIR_ENV = "GABARITO_DATA_DIR"


#: Datasets added at run time (:func:`register`), beside the committed manifest's.
_REGISTERED: dict[str, dict] = {}


def load_manifest(path: str | Path = MANIFEST) -> dict:
    """The manifest at ``path``; the project's own (the default) with the datasets registered at
    run time after its entries."""
    try:
        manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"cannot read dataset manifest ({exc})", path=path) from None
    return {**manifest, **_REGISTERED} if Path(path) == MANIFEST else manifest


def register(name: str, files: dict[str, dict]) -> None:
    """Add a dataset at run time, as an entry of ``data/datasets.json`` would (a user's own
    collection, a test's fixture; ``docs/architecture.md``, "Adding a collection"): ``files`` is
    ``{file name: {"url": ..., "sha256": ...}}``, fetched from the URL or the mirror's
    ``<mirror>/<name>/<file>`` and verified like any other. A name already known is refused."""
    if name in load_manifest():
        raise GabaritoError(f"dataset {name!r} is already in the manifest", path=MANIFEST)
    for filename, spec in files.items():
        if not isinstance(spec, dict) or not {"url", "sha256"} <= set(spec):
            raise GabaritoError(f"dataset {name!r}: file {filename!r} needs a url and a sha256")
    _REGISTERED[name] = {"files": {f: dict(spec) for f, spec in files.items()}}


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or CACHE / "data")


def fetch(name: str, *, mirror: str | Path | None = None, dest: str | Path | None = None,
          manifest: dict | None = None) -> Path:
    """Make ``name``'s files present and verified under ``dest/name``; return that folder."""
    manifest = manifest if manifest is not None else load_manifest()
    if name not in manifest:
        raise GabaritoError(f"unknown dataset {name!r}", path=MANIFEST)
    mirror = mirror or os.environ.get(MIRROR_ENV) or None
    folder = Path(dest or data_dir()) / name
    folder.mkdir(parents=True, exist_ok=True)
    for filename, spec in manifest[name]["files"].items():
        target = folder / filename
        if target.exists() and sha256_file(target) == spec["sha256"]:
            continue
        tmp = target.with_name(f".{target.name}.part")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        if mirror:
            source = Path(mirror) / name / filename
            if not source.exists():
                raise GabaritoError(f"mirror lacks {name}/{filename}", path=source)
            shutil.copyfile(source, tmp)
            origin = str(source)
        else:
            origin = spec["url"]
            try:
                with urllib.request.urlopen(origin, timeout=60) as resp, open(tmp, "wb") as fh:
                    shutil.copyfileobj(resp, fh)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise GabaritoError(
                    f"download failed ({exc}); set {MIRROR_ENV} to a local mirror", path=origin
                ) from None
        got = sha256_file(tmp)
        if got != spec["sha256"]:
            tmp.unlink(missing_ok=True)
            raise GabaritoError(f"sha256 mismatch: expected {spec['sha256']}, got {got}", path=origin)
        os.replace(tmp, target)
    return folder


def dataset_file(name: str, filename: str, **kwargs) -> Path:
    return fetch(name, **kwargs) / filename
