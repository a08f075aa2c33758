"""One build of the repository's own site per test session, shared by the site and browser tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # browser.py, beside the tests

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def real_site(tmp_path_factory) -> Path:
    """The repository's site, built once with smalldocs (``$GABARITO_SITE_PROJECT`` names another
    project folder to build instead, e.g. a copy). Results computed on a dirty tree are published
    on purpose here (``allow_dirty``): the pages must then say so, which the tests check."""
    from gabarito.publish.site import build

    out = tmp_path_factory.mktemp("real-site") / "site"
    root = Path(os.environ.get("GABARITO_SITE_PROJECT") or REPO)
    return build(root, out=out, renderer="smalldocs", allow_dirty=True)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where the browser tests write their screenshots: ``$GABARITO_ARTIFACTS`` or ``.cache/browser``."""
    path = Path(os.environ.get("GABARITO_ARTIFACTS") or REPO / ".cache" / "browser")
    path.mkdir(parents=True, exist_ok=True)
    return path
