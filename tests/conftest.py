import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A suite started in the background (``nohup … &``) inherits SIGINT and SIGHUP ignored, and every
# command a test starts would inherit that too (an ignored signal survives exec): the tests that
# interrupt a command would then test the launcher, not the command. Restore the defaults here, so
# the children start as they do from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
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
