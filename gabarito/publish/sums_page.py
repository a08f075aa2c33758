"""A sums file (``SHA256SUMS``) as a page a phone reads.

A browser shows a raw text file at its desktop width with no viewport, so on a 390-px phone the
hashes come out unreadably small. :func:`write_sums_page` writes, beside the sums file, a small
HTML page (``SHA256SUMS.html``) with a viewport, the readable type of the site, each file's name and
its sha256 broken to fit the screen, the command that checks them and a link to the raw file
(what ``sha256sum -c`` reads). Pages link the readable page; the raw file stays for the command.
"""

from __future__ import annotations

from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.publish.formatting import text

_STYLE = ("body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:1rem;line-height:1.5;"
          "margin:1rem auto;padding:0 1rem;max-width:46rem;color:#212529}"
          "code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95rem;"
          "overflow-wrap:anywhere;word-break:break-all}"
          "ul{padding-left:1.2rem}li{margin-bottom:.8rem}h1{font-size:1.4rem}")


def sums_entries(sums: Path) -> list[tuple[str, str]]:
    """``(sha256, name)`` of each line of a file in the format ``sha256sum -c`` reads."""
    out = []
    for n, line in enumerate(Path(sums).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise GabaritoError(f"line {n} is not '<sha256>  <name>'", path=sums)
        out.append((digest, name))
    return out


def page_name(sums: Path | str) -> str:
    """The readable page's file name: ``SHA256SUMS -> SHA256SUMS.html``."""
    return Path(sums).name + ".html"


def write_sums_page(sums: Path) -> Path:
    """Write the readable page of ``sums`` beside it; returns its path."""
    sums = Path(sums)
    items = "".join(f"<li><strong>{text(name)}</strong><br><code>{text(digest)}</code></li>"
                    for digest, name in sums_entries(sums))
    raw = text(sums.name)
    page = ('<!DOCTYPE html>\n<html lang="pt-BR"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{raw}: somas sha256</title><style>{_STYLE}</style></head><body>"
            f"<h1>Somas sha256 ({raw})</h1>"
            "<p>O sha256 de cada arquivo, para conferir o que você baixou:</p>"
            f"<ul>{items}</ul>"
            f'<p>Numa pasta com os arquivos e o <a href="{raw}" download>{raw}</a>, o comando '
            f"<code>sha256sum -c {raw}</code> confere todos de uma vez.</p></body></html>\n")
    out = sums.with_name(page_name(sums))
    out.write_text(page, encoding="utf-8")
    return out
