"""albert/ground/cpu.py: a command line loads TensorFlow with oneDNN's kernels on any x86-64 CPU (TensorFlow's
wheels choose Eigen on CPUs without AVX-512 VNNI / BF16 or AMX); a value the user set wins; `import albert` sets
nothing."""

import os
import platform
import subprocess
import sys

from albert.ground.cpu import X86_64
from tests.helpers import ROOT

CLI = f"""
import os, sys
sys.path.insert(0, {ROOT!r})
from albert.ground import cli

def main(argv):
    from tensorflow.python.util import _pywrap_util_port
    print("ONEDNN", os.environ.get("TF_ENABLE_ONEDNN_OPTS"), _pywrap_util_port.IsMklEnabled())

cli.run(main)
"""


def onednn(script: str, **env) -> list:
    environment = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env=dict(environment, TF_CPP_MIN_LOG_LEVEL="2", **env))
    assert result.returncode == 0, result.stderr
    return next(line.split()[1:] for line in result.stdout.splitlines() if line.startswith("ONEDNN "))


def test_a_command_line_loads_tensorflow_with_onednn_on_x86_and_the_users_value_wins():
    if platform.machine().lower() in X86_64:
        assert onednn(CLI) == ["1", "True"]
    else:  # left to TensorFlow
        assert onednn(CLI)[0] == "None"
    assert onednn(CLI, TF_ENABLE_ONEDNN_OPTS="0") == ["0", "False"]


def test_import_albert_sets_nothing():
    script = (f"import os, sys; sys.path.insert(0, {ROOT!r}); import albert, albert.ground.cli; "
              "print('ONEDNN', os.environ.get('TF_ENABLE_ONEDNN_OPTS'), 'tensorflow' in sys.modules)")
    assert onednn(script) == ["None", "False"]
