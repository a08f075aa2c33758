import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The local dataset mirror (``../shared/datasets`` or $GABARITO_DATA_MIRROR)."""
    path = Path(os.environ.get("GABARITO_DATA_MIRROR") or SHARED)
    if not (path / "social_acceptance").exists():
        pytest.skip(f"no dataset mirror at {path}")
    return path


@pytest.fixture(scope="session")
def corpus_path(mirror, tmp_path_factory) -> Path:
    from gabarito.inputs.datasets import fetch

    return fetch("social_acceptance", mirror=mirror, dest=tmp_path_factory.mktemp("data")) / "social_acceptance.syno"


@pytest.fixture(scope="session")
def arcade_server(tmp_path_factory):
    """One real ArcadeDB server (from arcadedb-embedded) shared by the integration tests."""
    from gabarito.retrieval.arcadedb import ArcadeServer

    with ArcadeServer(tmp_path_factory.mktemp("arcade"), heap="1g") as srv:
        yield srv
