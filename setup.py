"""The import packages, found at build time: ``gabarito`` and the case studies as ``studies``.

The case studies live in ``case-studies/`` (the name the site and the pages use), which is not a
valid module name, so the folder is installed as the package ``studies``: ``case-studies/fusion/
corpora.py`` imports as ``studies.fusion.corpora``. Everything else is in ``pyproject.toml``.
"""

from setuptools import find_namespace_packages, find_packages, setup

STUDIES = "case-studies"

setup(
    packages=[*find_namespace_packages(include=["gabarito", "gabarito.*"]),
              "studies", *(f"studies.{p}" for p in find_packages(STUDIES))],
    package_dir={"studies": STUDIES},
)
