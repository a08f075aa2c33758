
import pytest

from gabarito.inputs.datasets import fetch
from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_bytes


def _manifest(data: bytes):
    return {"toy": {"files": {"toy.txt": {"url": "http://127.0.0.1:9/none", "sha256": sha256_bytes(data)}}}}


def test_fetch_from_mirror_verifies_and_is_idempotent(tmp_path):
    (tmp_path / "m" / "toy").mkdir(parents=True)
    (tmp_path / "m" / "toy" / "toy.txt").write_bytes(b"hello")
    folder = fetch("toy", mirror=tmp_path / "m", dest=tmp_path / "d", manifest=_manifest(b"hello"))
    assert (folder / "toy.txt").read_bytes() == b"hello"
    (tmp_path / "m" / "toy" / "toy.txt").unlink()  # already present and verified: no copy needed
    assert fetch("toy", mirror=tmp_path / "m", dest=tmp_path / "d", manifest=_manifest(b"hello")) == folder


def test_sha_mismatch_leaves_nothing(tmp_path):
    (tmp_path / "m" / "toy").mkdir(parents=True)
    (tmp_path / "m" / "toy" / "toy.txt").write_bytes(b"tampered")
    with pytest.raises(GabaritoError, match="sha256 mismatch"):
        fetch("toy", mirror=tmp_path / "m", dest=tmp_path / "d", manifest=_manifest(b"hello"))
    assert list((tmp_path / "d" / "toy").iterdir()) == []


def test_download_failure_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("GABARITO_DATA_MIRROR", raising=False)
    with pytest.raises(GabaritoError) as err:
        fetch("toy", dest=tmp_path / "d", manifest=_manifest(b"hello"))
    assert "download failed" in str(err.value) and "\n" not in str(err.value)


def test_unknown_dataset(tmp_path):
    with pytest.raises(GabaritoError, match="unknown dataset"):
        fetch("nope", dest=tmp_path, manifest={})
