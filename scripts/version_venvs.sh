#!/usr/bin/env bash
# One bare virtual environment per arcadedb-embedded version, for the engine-version study
# (case-studies/benchmark_rrf/version_sensitivity.py):
#
#     scripts/version_venvs.sh                      # the study's versions
#     scripts/version_venvs.sh 26.8.1 26.9.1        # only these
#
# Each lands in .cache/venvs/arcadedb-<version> and holds only arcadedb-embedded==<version>,
# numpy, requests and tqdm: the worker (case-studies/benchmark_rrf/version_worker.py) imports
# gabarito.retrieval.arcadedb by path from this checkout to start a server, and that package
# needs those three; gabarito itself is not installed there.
# Idempotent: an environment that already has the right version is left alone; one with another
# version (or a broken one) is rebuilt. Installs nothing outside .cache/venvs.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
ROOT=${VENVS_DIR:-.cache/venvs}
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(26.7.2 26.8.1 26.9.1 26.10.2.post1)
mkdir -p "$ROOT"
for version in "${VERSIONS[@]}"; do
  venv="$ROOT/arcadedb-$version"
  have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("arcadedb-embedded"))' 2>/dev/null || true)
  if [ "$have" = "$version" ] && "$venv/bin/python" -c 'import numpy, requests, tqdm' 2>/dev/null; then
    echo "arcadedb-embedded $version: $venv (already there)"
    continue
  fi
  if [ -n "$have" ] && [ "$have" != "$version" ]; then rm -rf "$venv"; fi   # another version: rebuild
  "$venv/bin/python" -c '' 2>/dev/null || { rm -rf "$venv"; "$PYTHON" -m venv "$venv"; }
  "$venv/bin/python" -m pip --disable-pip-version-check -q install "arcadedb-embedded==$version" numpy requests tqdm
  echo "arcadedb-embedded $version: $venv"
done
