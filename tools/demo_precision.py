"""The demo's training precision and why, on one line: `bf16 <why>` or `fp32 <why>` (albert.ground.cpu.fast_precision
decides: bf16 on a GPU or a CPU with native bf16, float32 elsewhere). TensorFlow is asked for its GPUs only where the
machine has an NVIDIA device, so the answer takes a moment elsewhere.

    read -r PRECISION WHY < <(.venv/bin/python tools/demo_precision.py)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from albert.ground.cpu import cpu_flags, fast_precision  # noqa: E402


def nvidia_device() -> bool:
    listed = "/proc/driver/nvidia/gpus"
    return os.path.exists("/dev/nvidia0") or (os.path.isdir(listed) and bool(os.listdir(listed)))


def gpus() -> int:
    """The GPUs TensorFlow can use: none without an NVIDIA device (no TensorFlow start then)."""
    if not nvidia_device():
        return 0
    from albert.ground.stderr_filter import filtered

    with filtered():
        import tensorflow as tf

        return len(tf.config.list_physical_devices("GPU"))


if __name__ == "__main__":
    precision, why = fast_precision(cpu_flags(), gpus())
    print(precision, why)
