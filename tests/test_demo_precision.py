"""The demo's precision (albert.ground.cpu.fast_precision, read by scripts/demo.sh through tools/demo_precision.py):
bf16 on a GPU or a CPU with native bf16 (AVX512-BF16, AMX), float32 elsewhere, with the reason."""

import os
import re
import subprocess
import sys

import pytest

from albert.ground.cpu import cpu_flags, fast_precision
from tests.helpers import ROOT

AVX2_EPYC = "fpu vme sse sse2 avx avx2 fma bmi2 sha_ni"
SAPPHIRE_RAPIDS = "fpu sse2 avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8"


@pytest.mark.parametrize("flags,gpus,expected", [
    (AVX2_EPYC, 0, ("fp32", "the CPU has no native bf16 (no avx512_bf16 or amx_bf16 flag), where bf16 is slower "
                            "than float32")),
    ("fpu avx2 avx512f avx512bw avx512_vnni", 0, ("fp32", "the CPU has no native bf16 (no avx512_bf16 or amx_bf16 "
                                                         "flag), where bf16 is slower than float32")),
    ("avx2 avx512f avx512_bf16", 0, ("bf16", "the CPU has native bf16 (avx512_bf16)")),
    (SAPPHIRE_RAPIDS, 0, ("bf16", "the CPU has native bf16 (avx512_bf16, amx_bf16)")),
    ("avx2 amx_tile amx_bf16", 0, ("bf16", "the CPU has native bf16 (amx_bf16)")),
    (AVX2_EPYC, 1, ("bf16", "1 GPU")),
    ("", 4, ("bf16", "4 GPUs")),
])
def test_bf16_only_where_it_is_native(flags, gpus, expected):
    assert fast_precision(frozenset(flags.split()), gpus) == expected


def test_cpu_flags_read_the_first_flags_line(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\nbugs\t\t: sysret_ss_attrs\n\n"
                       "processor\t: 1\nflags\t\t: fpu avx2 fma avx512_bf16\n")
    assert cpu_flags(str(cpuinfo)) == {"fpu", "avx2", "fma"}
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_the_demo_reads_this_machines_answer():
    """tools/demo_precision.py on this machine: its CPU's flags, read here with a regular expression."""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        flags = set(re.search(r"^flags\s*:(.*)$", f.read(), re.M).group(1).split())
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "demo_precision.py")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    precision, why = done.stdout.rstrip("\n").split(" ", 1)
    if not os.path.exists("/dev/nvidia0"):
        assert precision == ("bf16" if flags & {"avx512_bf16", "amx_bf16"} else "fp32")
        assert why == fast_precision(frozenset(flags), 0)[1]
    with open(os.path.join(ROOT, "scripts", "demo.sh"), encoding="utf-8") as f:
        demo = f.read()
    assert demo.count('--mixed_precision="$PRECISION"') == 2 and "--mixed_precision=bf16" not in demo
