#!/usr/bin/env bash
# Make .venv-peers: the peers the benchmarks run beside this project (benchmarks/requirements-peers.txt: PyTorch,
# Hugging Face transformers, ONNX Runtime; no TensorFlow), each benchmark running them in their own processes.
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [[ ! -x .venv-peers/bin/python ]]; then
  "$PYTHON" -m venv .venv-peers
fi
.venv-peers/bin/python -m pip install -q --disable-pip-version-check -r benchmarks/requirements-peers.txt \
  2> >(grep -v "^WARNING: Location" >&2)
