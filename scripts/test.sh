#!/usr/bin/env bash
# Create .venv if needed, install requirements.txt, requirements-dev.txt and requirements-beam.txt (the optional
# Beam runner of create_pretraining_data.py is tested too), run the whole test suite.
# Idempotent: a second run reuses the venv and reinstalls nothing that is already satisfied.
# The tests run in PYTEST_WORKERS processes (default 2, pytest-xdist; a test file stays in one process, so its
# module fixtures are built once; PYTEST_WORKERS=0 runs them in this process). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -r requirements-dev.txt \
  -r requirements-beam.txt \
  2> >(grep -v "^WARNING: Location" >&2)
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile "$@"
