"""A Python user's stderr: `import albert` and the first use of its models (albert's lazy names, which start
TensorFlow) print none of TensorFlow's start-up lines (albert.ground.stderr_filter.import_quietly), while what
TensorFlow and Python warn of afterwards still reaches stderr."""

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

USE = """
import sys
import albert
config = albert.AlbertConfig(vocab_size=32, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                             num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)
print("tensorflow" in sys.modules, file=sys.stderr, flush=True)  # AlbertConfig needs no TensorFlow
encoder = albert.AlbertEncoder(config)
import tensorflow as tf
print("tensorflow" in sys.modules, tuple(encoder({"input_ids": tf.ones([1, 4], tf.int32)})["sequence_output"].shape),
      flush=True)
tf.get_logger().warning("a warning of TensorFlow's")
import warnings
warnings.warn("a warning of Python's")
"""


def run(code: str, **env):
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "PYTHONWARNINGS")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(environment, **env))


def test_import_albert_and_first_use_of_a_model_print_no_start_up_lines():
    done = run(USE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True (1, 4, 16)\n"
    assert done.stderr.splitlines() == ["False", "WARNING:tensorflow:a warning of TensorFlow's",
                                        "<string>:13: UserWarning: a warning of Python's"]


@pytest.mark.slow  # two more TensorFlow starts
def test_the_lines_are_tensorflows_own_and_a_user_asking_for_native_logs_gets_them():
    """The same code without albert's lazy names (TensorFlow imported first) shows the lines the filter keeps off;
    TF_CPP_MIN_LOG_LEVEL=0 turns the filter off."""
    bare = run("import tensorflow")
    assert "cudart_stub" in bare.stderr or "port.cc" in bare.stderr or "cpu_feature_guard" in bare.stderr
    asked = run(USE, TF_CPP_MIN_LOG_LEVEL="0")
    assert asked.returncode == 0 and len(asked.stderr.splitlines()) > 4
