"""Every chapter's "Reproduzir": download the whole report, check it, unpack it, ``make report``.

:func:`reproduce_block` is what a chapter shows under its "Reproduzir" heading (the chapter's own
commands follow in its Markdown). Which archive it names is known only when the site is built
(:mod:`gabarito.publish.source_archive`), after the chapter ran, so the block holds slots
(``<span data-gabarito-slot="...">``) and :func:`fill_pages` fills them in the rendered pages: the
archive's name and link, its top folder, and the note when the tree had uncommitted changes.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.publish.formatting import Html, code, text
from gabarito.publish.provenance import DOWNLOADS, project_root
from gabarito.publish.source_archive import FOLDER, MIRROR_EXAMPLE, SHORT, SourceArchive

#: A slot of the block, as the rendered page holds it.
SLOT = re.compile(r'<span data-gabarito-slot="(?P<slot>[a-z]+)" data-href="(?P<href>[^"<>]*)"></span>')
#: What a page shows for an archive it cannot name.
UNNAMED = ("gabarito-<commit>.tar.gz", "gabarito-<commit>")


def _slot(name: str, href: str) -> str:
    return f'<span data-gabarito-slot="{name}" data-href="{text(href)}"></span>'


def reproduce_block(page_dir: str | Path = ".") -> Html:
    """The steps from the site alone to the same site, for the page whose notebook runs in
    ``page_dir``: the archive to download (a slot), the commands, what ``make report`` does and
    the optional data mirror."""
    root = project_root(page_dir)
    up = Path(os.path.relpath(root, Path(page_dir).resolve())).as_posix()
    href = ("" if up == "." else up + "/") + f"{DOWNLOADS}/{FOLDER}/"
    name, folder = _slot("name", href), _slot("folder", href)
    commands = f"sha256sum -c {name}.sha256\ntar -xzf {name}\ncd {folder}\nmake report"
    return Html(
        '<div class="gabarito-reproduce">'
        f'<p>{_slot("download", href)}</p>'
        f'<pre class="sourceCode bash"><code>{commands}</code></pre>'
        '<details><summary>Detalhes</summary>'
        f'<p>{code("make report")} cria o ambiente do projeto ({code(".venv")}) com o que falta, baixa os dados '
        f'dos endereços de origem listados em {code("data/datasets.json")} e confere cada arquivo pelo sha256, '
        'sobe um ArcadeDB embutido, roda de novo os estudos cujos resultados estiverem velhos, executa os cadernos '
        f'e gera o site em {code("_site/")}. {code(".venv/bin/gabarito studies")} diz, estudo por estudo, se os '
        'resultados estão atuais.</p>'
        '<p>Opcional: se você já guarda os dados numa pasta, com uma subpasta por conjunto e os nomes de '
        f'{code("data/datasets.json")}, aponte para ela e nada é baixado; os arquivos passam pela mesma '
        f'conferência: {code(f"GABARITO_DATA_MIRROR={MIRROR_EXAMPLE} make report")}.</p></details>'
        f'{_slot("note", href)}</div>')


def _download(source: SourceArchive, href: str) -> str:
    if source.origin == "none":
        return ("Esta cópia do site não foi gerada de um commit nem de um arquivo do gabarito, e por isso não "
                f"oferece o arquivo do relatório. Com um arquivo {code(UNNAMED[0])} e a sua soma numa pasta:")
    commit, name, total = code(source.commit[:SHORT]), source.name, source.name + ".sha256"
    if not source.offered:
        return (f"Estas páginas foram geradas do arquivo {code(name)} (o commit {commit}), que não está entre os "
                f"arquivos para baixar desta cópia do site. Com ele e a sua soma, {code(total)}, numa pasta:")
    return (f'Baixe o relatório inteiro, <a href="{text(href + name)}" download>{code(name)}</a> (o commit {commit}), '
            f'e a soma <a href="{text(href + total)}" download>{code(total)}</a>; numa pasta com os dois:')


def _note(source: SourceArchive) -> str:
    if not source.dirty:
        return ""
    return (f'<p class="gabarito-note">Atenção: o arquivo é o commit {code(source.commit[:SHORT])}; estas páginas '
            "saíram de uma cópia com mudanças ainda fora de um commit.</p>")


def fill(html_text: str, source: SourceArchive) -> str:
    """``html_text`` with every slot of :func:`reproduce_block` filled for ``source``."""
    def one(m: re.Match) -> str:
        slot, href = m["slot"], html.unescape(m["href"])
        if slot == "name":
            return text(source.name or UNNAMED[0])
        if slot == "folder":
            return text(source.folder or UNNAMED[1])
        if slot == "download":
            return _download(source, href)
        if slot == "note":
            return _note(source)
        return m[0]

    return SLOT.sub(one, html_text)


def fill_pages(site: str | Path, source: SourceArchive) -> int:
    """Fill the slots of every page of a rendered site; return how many pages had any. A slot left
    unfilled (one this module does not know) stops the build."""
    n = 0
    for page in sorted(Path(site).rglob("*.html")):
        before = page.read_text(encoding="utf-8")
        if "data-gabarito-slot" not in before:
            continue
        after = fill(before, source)
        if "data-gabarito-slot" in after:
            raise GabaritoError("a Reproduzir block has a slot the build cannot fill", path=page)
        page.write_text(after, encoding="utf-8")
        n += 1
    return n
