"""albert/ground/stderr_filter.py: TensorFlow's native start-up lines are dropped, everything else passes, in order."""

import os
import subprocess
import sys

from tests.helpers import ROOT

NOISE = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795501725.813644    2818 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders.",
    "I0000 00:00:1795501725.814139    2818 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will "
    "not be used.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the "
    "appropriate compiler flags.",
    "E0000 00:00:1795501727.755745    2818 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed "
    "call to cuInit: UNKNOWN ERROR (303)",
    "W0000 00:00:1795501727.755745    2818 some_file.cc:7] a native warning",
    "normalizer.cc(51) LOG(INFO) precompiled_charsmap is empty. use identity normalization.",
]
KEPT = [
    "E0000 00:00:1795501727.755745    2818 op_kernel.cc:1857] OP_REQUIRES failed: a real native error",
    "Traceback (most recent call last):",
    "prog.py: error: something the user must fix",
]

SCRIPT = f"""
import os, sys
sys.path.insert(0, {ROOT!r})
from albert.ground import stderr_filter
with stderr_filter.filtered():
    lines = {NOISE + KEPT!r}
    for i, line in enumerate(lines):
        os.write(2, (line + "\\n").encode()) if i % 2 else print(line, file=sys.stderr)
    sys.stderr.write("\\r[###.] 75%")  # a progress bar redraws its line without a newline
    sys.stderr.flush()
print("done", file=sys.stderr)
"""


def test_noise_dropped_the_rest_kept_in_order():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode() == "\n".join(KEPT) + "\n\r[###.] 75%done\n"  # bytes: text mode turns \r to \n


def test_a_user_asking_for_native_logs_gets_them():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=60)
    assert result.stderr.splitlines()[:len(NOISE)] == NOISE
