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
