"""TensorFlow's oneDNN kernels on every x86-64 CPU, not only on the ones TensorFlow picks them for.

TensorFlow's Linux x86 wheels turn oneDNN on by default only on CPUs with AVX-512 VNNI / BF16, AVX-VNNI or AMX; on
the rest (AVX2-only machines, AVX-512 without VNNI) its matrix products run on Eigen. On an AVX2-only AMD EPYC (2
threads) oneDNN's fp32 MatMul ran 1.1-1.3x Eigen's at ALBERT-base's shapes and an SST-2 fine-tuning step 1.33x
faster, which put it ahead of PyTorch (docs/benchmarks.md); PyTorch uses its oneDNN / MKL kernels on any x86 CPU.
`TF_ENABLE_ONEDNN_OPTS` is read once, when TensorFlow loads, so `prefer_onednn()` must run before the first
TensorFlow import: every command line calls it in albert.ground.cli.run, before its `main` imports TensorFlow, and
the benchmarks' workers call it for this project's side. A value the user set is kept (`TF_ENABLE_ONEDNN_OPTS=0`
gives Eigen back); other architectures are left to TensorFlow. `import albert` changes nothing: a Python user who
wants this sets the variable before importing TensorFlow.
"""

import os
import platform

X86_64 = ("x86_64", "amd64")


def prefer_onednn():
    """TF_ENABLE_ONEDNN_OPTS=1 unless the user set it, on x86-64; effective only before TensorFlow is imported."""
    if platform.machine().lower() in X86_64:
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


# CPU flags (as /proc/cpuinfo names them) of native bf16 arithmetic: AVX512-BF16's dot products, AMX's tiles.
NATIVE_BF16 = ("avx512_bf16", "amx_bf16")


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset:
    """The CPU's feature flags (the first `flags` line of /proc/cpuinfo); empty where there is no such file."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def fast_precision(flags, gpus: int) -> tuple:
    """(precision, why) for a run that may train in bf16: bf16 on a GPU or on a CPU with native bf16 (AVX512-BF16 or
    AMX), fp32 elsewhere -- a CPU without them emulates bf16 by converting to float32 and back, which is slower than
    float32 alone (1.2x on an AVX2-only EPYC in the demo's pretraining)."""
    if gpus:
        return "bf16", f"{gpus} GPU{'s' if gpus > 1 else ''}"
    native = [flag for flag in NATIVE_BF16 if flag in flags]
    if native:
        return "bf16", f"the CPU has native bf16 ({', '.join(native)})"
    return "fp32", "the CPU has no native bf16 (no avx512_bf16 or amx_bf16 flag), where bf16 is slower than float32"
