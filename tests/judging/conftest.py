"""Fixtures of the judging tests (data in judging_fixtures.py)."""

import pytest

from judging_fixtures import make_collection


@pytest.fixture
def collection(tmp_path) -> dict:
    return make_collection(tmp_path)
