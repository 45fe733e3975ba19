"""Real released artifacts, read in place from ../shared (never copied into the repository): the released ALBERT
SentencePiece model `30k-clean.model` and real GLUE files (SST-2, CoLA, RTE train/dev, QNLI dev) in the release
layout.

- The four tokenization paths give the same ids on every dev sentence and pair, truncation at 128 included:
  `FullTokenizer` + run_classifier's feature conversion (the cached feature records, which are also what
  `model.tflite` is fed), `AlbertPreprocessor` (in the graph), and the exported TF Hub preprocessor.
- run_classifier reads each file as it is (CoLA: no header, dev without a final newline) with the release's
  example counts (a short fine-tuning on real SST-2 text, and its export in MediaPipe: tests/test_tflite_metadata.py).

Set ALBERT_SHARED to read them from elsewhere; without them (outside this project's CI) the tests skip, saying so.
"""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import shared_directory

SHARED = shared_directory()
SPM = os.path.join(SHARED, "albert_30k_clean", "30k-clean.model")
GLUE = os.path.join(SHARED, "glue_real")
SPM_SHA256 = "fefb02b667a6c5c2fe27602d28e5fb3428f66ab89c7d6f388e7c8d44a02d0336"
# Required, never skipped: CI lays ../shared beside the clone (ALBERT_SHARED names another place).
assert os.path.isfile(SPM) and os.path.isdir(GLUE), f"{SHARED}: the released 30k-clean.model and real GLUE files"

# The GLUE release's example counts (../shared/glue_real/README.md).
COUNTS = {("sst-2", "train"): 67349, ("sst-2", "dev"): 872, ("cola", "train"): 8551, ("cola", "dev"): 1043,
          ("rte", "train"): 2490, ("rte", "dev"): 277, ("qnli", "dev"): 5463}
DEV_TASKS = ("sst-2", "cola", "rte", "qnli")
SEQ = 128
PACKED = ("input_ids", "input_mask", "segment_ids")


def test_the_released_sentencepiece_model_is_the_one_named():
    with open(SPM, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == SPM_SHA256


def test_run_classifier_reads_each_real_file_as_it_is():
    from albert.tasks.classification.glue import get_task, read_examples

    for (task, split), count in COUNTS.items():
        examples = read_examples(get_task(task), GLUE, split)
        assert len(examples) == count, (task, split)
        assert all(e.text_a for e in examples) and all((e.text_b is not None) == (task in ("rte", "qnli"))
                                                       for e in examples), (task, split)
    with open(os.path.join(GLUE, "CoLA", "dev.tsv"), "rb") as f:
        raw = f.read()
    assert not raw.endswith(b"\n")  # as upstream: the last row still counts
    last = read_examples(get_task("cola"), GLUE, "dev")[-1]
    assert raw.decode("utf-8").rsplit("\n", 1)[1].split("\t")[3] == last.text_a


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """{task: (examples, {feature: [N, 128] array})} of every dev set, from run_classifier's cached feature
    records (FullTokenizer with the released model), read back as model.tflite is fed them."""
    from albert.data.readers import classifier_dataset
    from albert.tasks.classification.features import cached_features
    from albert.tasks.classification.glue import get_task
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, SPM)
    directory = str(tmp_path_factory.mktemp("real_features"))
    out = {}
    for name in DEV_TASKS:
        task = get_task(name)
        path, examples = cached_features(task, GLUE, "dev", tokenizer, SEQ, directory)
        batches = list(classifier_dataset([path], SEQ, False, 256, False).take(-(-len(examples) // 256)))
        out[name] = examples, {k: np.concatenate([b[k].numpy() for b in batches])[:len(examples)] for k in PACKED}
    return out


def texts(examples):
    a = [e.text_a for e in examples]
    return (a, [e.text_b for e in examples]) if examples[0].text_b is not None else (a,)


def assert_same_ids(name, got: dict, expected: dict):
    for key in PACKED:
        differs = np.flatnonzero((np.asarray(got[key]) != expected[key]).any(-1))
        assert not len(differs), f"{name} {key}: {len(differs)} examples differ, first row {differs[:5]}"


def test_records_are_the_python_tokenizers_ids_truncated_at_128(records):
    from albert.tasks.classification.glue import convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, SPM)
    compared = truncated = 0
    for name, (examples, features) in records.items():
        ids = np.array([convert_example(e, get_task(name), SEQ, tokenizer).input_ids for e in examples])
        np.testing.assert_array_equal(ids, features["input_ids"], err_msg=name)
        compared += len(examples)
        truncated += int((features["input_mask"][:, -1] == 1).sum())
    assert compared == 872 + 1043 + 277 + 5463
    assert truncated > 0  # some RTE / QNLI pairs are longer than 128 pieces: the truncation rule is exercised


def test_albert_preprocessor_in_the_graph_gives_the_same_ids(records):
    import tensorflow as tf

    from albert import AlbertPreprocessor

    preprocessor = AlbertPreprocessor(SPM, seq_length=SEQ)
    strings = tf.TensorSpec([None], tf.string)
    packs = {1: tf.function(preprocessor, input_signature=[strings]),
             2: tf.function(lambda a, b: preprocessor((a, b)), input_signature=[strings, strings])}
    for name, (examples, expected) in records.items():
        columns = texts(examples)
        parts = [packs[len(columns)](*[tf.constant(t[i:i + 1024]) for t in columns])
                 for i in range(0, len(examples), 1024)]
        assert_same_ids(name, {k: np.concatenate([p[k].numpy() for p in parts]) for k in PACKED}, expected)


@pytest.mark.slow
def test_the_exported_hub_preprocessor_gives_the_same_ids(records, tmp_path):
    """Exported, then loaded in a fresh process that imports only TensorFlow and tensorflow-text."""
    from albert.export.hub import export_preprocessor

    export_preprocessor(SPM, True, str(tmp_path / "preprocessor"), SEQ)
    arrays = {}
    for name, (examples, _) in records.items():
        for i, column in enumerate(texts(examples)):
            arrays[f"{name}_{i}"] = np.array(column, dtype=object)
    np.savez(tmp_path / "texts.npz", **arrays)
    code = f"""
import numpy as np, tensorflow as tf, tensorflow_text  # noqa: F401
hub = tf.saved_model.load({str(tmp_path / 'preprocessor')!r})
texts = np.load({str(tmp_path / 'texts.npz')!r}, allow_pickle=True)
out = {{}}
for name in {list(DEV_TASKS)!r}:
    segments = [hub.tokenize(tf.constant(list(texts[f"{{name}}_{{i}}"])))
                for i in range(2) if f"{{name}}_{{i}}" in texts]
    packed = hub.bert_pack_inputs(segments, tf.constant({SEQ}))
    for key, value in packed.items():
        out[f"{{name}}/{{key}}"] = value.numpy()
np.savez({str(tmp_path / 'ids.npz')!r}, **out)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path),
                            env=dict(env, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    ids = np.load(tmp_path / "ids.npz")
    hub_names = {"input_ids": "input_word_ids", "input_mask": "input_mask", "segment_ids": "input_type_ids"}
    for name, (_, expected) in records.items():
        assert_same_ids(name, {k: ids[f"{name}/{hub_names[k]}"] for k in PACKED}, expected)
