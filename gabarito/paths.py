"""Where things are: the installed package and the project checkout around it."""

from __future__ import annotations

import os
from pathlib import Path

#: The ``gabarito`` package folder.
PACKAGE = Path(__file__).resolve().parent
#: The project checkout (the folder holding ``case-studies/``, ``notebooks/``, ``data/``).
ROOT = PACKAGE.parent
#: Where caches go: ``.cache/`` of the checkout; for an installed package (the wheel, with no
#: checkout around it), the user's cache folder, never the installation's own folder.
CACHE = (ROOT / ".cache" if (ROOT / "pyproject.toml").is_file()
         else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gabarito")
