"""Reading the distributed files: strict UTF-8, members of a tarball read in place, lines."""

from __future__ import annotations

import tarfile
from pathlib import Path

from gabarito.errors import GabaritoError


def _lines(text: str) -> list[str]:
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return [line.rstrip("\r") for line in out]


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=source) from None


class _Tarball:
    def __init__(self, path: Path):
        self.path = path
        try:
            self._tar = tarfile.open(path, "r:*")
        except (OSError, tarfile.TarError) as exc:
            raise GabaritoError(f"cannot open tarball ({exc})", path=path) from None
        self.names = [m.name for m in self._tar.getmembers() if m.isfile()]

    def read(self, member: str) -> tuple[str, str]:
        source = f"{self.path}:{member}"
        try:
            fh = self._tar.extractfile(member)
        except KeyError:
            raise GabaritoError(f"tarball has no member {member!r} (has: {', '.join(self.names)})",
                                path=self.path) from None
        if fh is None:
            raise GabaritoError(f"member {member!r} is not a file", path=self.path)
        return _decode(fh.read(), source), source

    def close(self) -> None:
        self._tar.close()


def _read(path: Path) -> tuple[str, str]:
    try:
        return _decode(path.read_bytes(), str(path)), str(path)
    except OSError as exc:
        raise GabaritoError(f"cannot read file ({exc.strerror or exc})", path=path) from None
