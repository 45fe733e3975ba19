#!/usr/bin/env bash
# The GPU table (benchmarks/gpu.py): run first on any machine lent with a GPU, under 8 minutes. Makes .venv if
# needed and installs requirements.txt; where `nvidia-smi` sees a GPU, also TensorFlow's CUDA libraries
# (tensorflow[and-cuda] at the pinned version; a machine that cannot reach a package index keeps what it has and
# says so). On a machine without a GPU it skips the GPU rows, says so, and runs the CPU check. Arguments go to
# benchmarks/gpu.py; the table's rows also go to benchmarks/gpu.json.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
pip_install() {
  .venv/bin/python -m pip install -q --disable-pip-version-check "$@" 2> >(grep -v "^WARNING: Location" >&2) \
    || echo "benchmarks/gpu.sh: could not install $*; going on with what .venv has" >&2
}
pip_install -r requirements.txt
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  nvidia-smi -L
  pip_install "tensorflow[and-cuda]==$(sed -n 's/^tensorflow==\([^ ]*\).*/\1/p' requirements.txt)"
fi
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec timeout 480 .venv/bin/python benchmarks/gpu.py --json benchmarks/gpu.json "$@"
