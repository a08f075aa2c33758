"""Where things are: the installed package and the project checkout around it."""

from __future__ import annotations

from pathlib import Path

#: The ``gabarito`` package folder.
PACKAGE = Path(__file__).resolve().parent
#: The project checkout (the folder holding ``case-studies/``, ``notebooks/``, ``data/``).
ROOT = PACKAGE.parent
