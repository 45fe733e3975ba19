import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TensorFlow keeps allocator statistics (tf.config.experimental.get_memory_info, tests/test_recompute.py) on the CPU
# only with its BFC allocator, which it picks by itself only where oneDNN is on (Intel CPUs): asked for here, so the
# tests do not depend on the machine's CPU. Subprocesses inherit it.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import pytest  # noqa: E402

# The test files that take longest on 2 cores (measured with --durations=0), longest first. pytest-xdist's loadfile
# hands files to the workers in collection order, so starting with these keeps one worker from finishing a long
# file alone at the end (alphabetical order left tests/test_user_paths.py, the longest, near the end).
LONGEST_FIRST = ("test_user_paths.py", "test_run_pretraining.py", "test_readme.py", "test_export.py",
                 "test_faults.py", "test_length_buckets.py", "test_beam_dask.py", "test_bad_inputs.py",
                 "test_tflite_metadata.py", "test_weights_cli.py", "test_keras_api.py")


def pytest_collection_modifyitems(items):
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))  # stable: order kept within


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory):
    """A synthetic English-like corpus (300 documents) and a 1,000-piece ALBERT-style SentencePiece model."""
    from albert.text.tokenization import preprocess_text, train_sentencepiece
    from tools import synthetic_corpus

    directory = tmp_path_factory.mktemp("corpus")
    docs = synthetic_corpus.documents(300, seed=7)
    synthetic_corpus.write(str(directory / "corpus.txt"), docs)
    lowered = directory / "lower.txt"
    lowered.write_text("".join(preprocess_text(s, lower=True) + "\n" for d in docs for s in d), encoding="utf-8")
    train_sentencepiece([str(lowered)], str(directory / "sp"), vocab_size=1000)
    return directory


@pytest.fixture(scope="session")
def spm_model(tmp_path_factory):
    """A 300-piece ALBERT-style SentencePiece model with digit+comma pieces (tests/export_helpers.py)."""
    from tests.export_helpers import train_sentencepiece_with_numbers

    return train_sentencepiece_with_numbers(tmp_path_factory.mktemp("spm"))


@pytest.fixture(scope="session")
def sst2(tmp_path_factory):
    """run_classifier.py trained, evaluated and exported (model.tflite, model.onnx) on real SST-2 text
    (tests/export_helpers.py's sst2_export), once per run for all workers (tests/fixture_cache.py). Read-only."""
    from tests.export_helpers import sst2_export
    from tests.fixture_cache import cached

    return cached("sst2", sst2_export)
