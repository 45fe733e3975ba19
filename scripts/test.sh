#!/usr/bin/env bash
# The test suite, in two tiers (docs/architecture.md, "Where a test goes", says which test goes where):
#   bash scripts/test.sh          the fast tier: every module's behaviour, every command at least once
#   bash scripts/test.sh --all    both tiers (what .ci/run runs): adds the tests marked `slow` (clusters, other
#                                 runtimes, base-size conversions, many processes)
# Creates .venv if needed and installs requirements.txt, requirements-dev.txt, requirements-beam.txt and
# requirements-onnx.txt into it (the extras' own tests run in both tiers; tests/test_architecture.py checks that the
# package imports without them). --all also makes .venv-tasklib (requirements-tasklib.txt: the TFLite Task Library,
# which cannot share TensorFlow's protobuf) and takes libusb from Debian where the system lacks it.
# Idempotent: a second run reuses the venvs, reinstalls nothing already satisfied, and reuses the heavy shared
# fixtures of .test-cache/ that the same code built (tests/fixture_cache.py).
# The tests run in PYTEST_WORKERS processes (default 2, pytest-xdist; a test file stays in one process, so its
# module fixtures are built once; PYTEST_WORKERS=0 runs them in this process). Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
tier=(-m "not slow")
if [[ ${1:-} == --all ]]; then
  tier=()
  shift
fi
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -r requirements-dev.txt \
  -r requirements-beam.txt -r requirements-onnx.txt \
  2> >(grep -v "^WARNING: Location" >&2)
if (( ! ${#tier[@]} )); then
  # The TFLite Task Library in its own environment (requirements-tasklib.txt says why).
  if [[ ! -x .venv-tasklib/bin/python ]]; then
    "$PYTHON" -m venv .venv-tasklib
  fi
  .venv-tasklib/bin/python -m pip install -q --disable-pip-version-check -r requirements-tasklib.txt \
    2> >(grep -v "^WARNING: Location" >&2)
  if ! ldconfig -p 2>/dev/null | grep -q "libusb-1.0.so.0" && [[ ! -e .venv-tasklib/system-libs/libusb-1.0.so.0 ]]
  then
    (cd .venv-tasklib && rm -rf deb && mkdir deb && cd deb && apt-get download -q libusb-1.0-0 2>/dev/null \
      && dpkg -x libusb-1.0-0_*.deb root && mkdir -p ../system-libs \
      && cp -P root/usr/lib/*/libusb-1.0.so.0* ../system-libs/ && cd .. && rm -rf deb) \
      || echo "scripts/test.sh: could not fetch Debian's libusb-1.0-0; the Task Library test will fail, naming it" >&2
  fi
fi
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile ${tier[@]+"${tier[@]}"} "$@"
