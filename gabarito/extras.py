"""What ``pip install gabarito`` leaves out, and the one line that names it when a command needs it.

The core install runs ``gabarito evaluate``, ``compare``, ``pool``, ``judge`` and ``judgments
import``. The report's own build (the notebooks, their kernel and plotly), training a reader, and
the peers benchmark are extras (``pyproject.toml``): their modules are imported only inside the
functions that use them, so a core install never loads them. A command that needs a missing one
stops before any work with one line naming the ``pip install`` that brings it.
"""

from __future__ import annotations

from importlib.util import find_spec

from gabarito.errors import GabaritoError

#: Each extra of ``pyproject.toml`` and the top-level modules of its distributions.
EXTRAS: dict[str, tuple[str, ...]] = {
    "site": ("plotly", "nbformat", "nbclient", "ipykernel", "jupyter_client", "IPython"),
    "train": ("accelerate", "datasets"),
    "peers": ("faiss", "hnswlib", "usearch", "tantivy", "pyserini", "ranx"),
}


def install_hint(extra: str) -> str:
    return f'pip install "gabarito[{extra}]"'


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    absent = []
    for module in EXTRAS[extra]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or half-removed install counts as absent
            found = False
        if not found:
            absent.append(module)
    return absent


def require(extra: str, what: str) -> None:
    """Stop with one line when ``extra`` is not installed: ``what`` needs it."""
    absent = missing(extra)
    if absent:
        raise GabaritoError(f"{what} needs the {extra!r} extra ({', '.join(absent)} not installed): "
                            f"{install_hint(extra)}")


def missing_extra(exc: ModuleNotFoundError) -> GabaritoError | None:
    """The one line for an import of an extra's module that failed, or None for any other module."""
    top = (exc.name or "").partition(".")[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return GabaritoError(f"this command needs {top}, from the {extra!r} extra, which is not installed: "
                                 f"{install_hint(extra)}")
    return None
