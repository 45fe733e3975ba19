"""Every Python block of the README and of every docs/ page runs as written, in a fresh interpreter, against tiny
models laid out where the pages say (`albert_base/` as a released tarball, `out/hub` from export_to_tfhub.py,
`out/mrpc_serving` from a classifier export, `out/sst2_serving/model.tflite` with TFLite metadata, and
`out/sst2_serving/model.onnx`)."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.hub_server import Hub, tar_gz
from tests.export_helpers import run_script, train_sentencepiece_with_numbers

PAGES = ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs"))
                               if name.endswith(".md"))
BLOCKS = [(page, block) for page in PAGES
          for block in re.findall(r"^```python\n(.*?)^```", open(os.path.join(ROOT, page), encoding="utf-8").read(),
                                  re.S | re.M)]


HUB_ENV = {}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    import keras

    from albert import AlbertClassifier, AlbertConfig, AlbertPretrainer
    from albert.weights.tf_checkpoints import save_original_checkpoint
    from albert.export.serving import export_classifier
    from albert.text.tokenization import load_sentencepiece

    root = tmp_path_factory.mktemp("readme")
    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy("float32")
    # albert_base/: the released layout, with a small SentencePiece model under the release's name.
    base = root / "albert_base"
    base.mkdir()
    small = root / "small"  # small/: the same model, exported to out/hub and out/mrpc_serving
    small.mkdir()
    spm = train_sentencepiece_with_numbers(small)
    shutil.copy(spm, base / "30k-clean.model")
    config = AlbertConfig(vocab_size=load_sentencepiece(spm).GetPieceSize(), embedding_size=16, hidden_size=32,
                          num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                          max_position_embeddings=128)
    for directory in (base, small):
        (directory / "albert_config.json").write_text(config.to_json_string())
        save_original_checkpoint(AlbertPretrainer(config), str(directory / "model.ckpt-best"), global_step=1)
    (root / "out").mkdir()
    result = run_script("export_to_tfhub.py", f"--albert_directory={small}", f"--export_path={root / 'out/hub'}",
                        "--seq_length=16")
    assert result.returncode == 0, result.stderr[-3000:]
    classifier = AlbertClassifier(config, num_labels=2)
    export_classifier(classifier, spm, True, ["0", "1"], True, 16, str(root / "out/mrpc_serving"))
    from albert.export.litert import export_tflite  # as run_classifier.py --export_dir does (any length)

    export_tflite(classifier, str(root / "out/mrpc_serving/model.tflite"), ("input_ids", "input_mask", "segment_ids"),
                  None)
    # out/sst2_serving/model.tflite: a one-text classifier's file with its TFLite metadata (MediaPipe's block)
    from albert.export.tflite_metadata import describe

    sst2 = AlbertClassifier(config, num_labels=2)
    export_tflite(sst2, str(root / "out/sst2_serving/model.tflite"), ("input_ids", "input_mask", "segment_ids"), None,
                  described=describe("tokenizer", "SST-2", "text -> logits", spm, None, True, labels=["0", "1"]))
    from albert.export.onnx import export_onnx  # and its model.onnx (ONNX Runtime's block), as run_classifier.py's:
    from albert.export.serving import classifier_metadata  # its metadata, the SentencePiece model in assets/

    os.makedirs(root / "out/sst2_serving/assets")
    shutil.copy(spm, root / "out/sst2_serving/assets")
    export_onnx(sst2, str(root / "out/sst2_serving/model.onnx"), ("input_ids", "input_mask", "segment_ids"),
                metadata=classifier_metadata("sst-2", ["0", "1"], False, 128, True, spm))
    # hf_albert_sst2/: a Hugging Face AlbertForSequenceClassification directory, written by albert.convert.
    from albert.export.conversion import convert

    save_original_checkpoint(AlbertClassifier(config, num_labels=2), str(small / "classifier" / "model.ckpt-best"))
    for name in ("albert_config.json", "sp.model"):
        shutil.copy(small / name, small / "classifier" / name)
    convert(str(small / "classifier"), str(root / "hf_albert_sst2"), "huggingface")
    # albert_base_v2 by name: the release's tarball, served from 127.0.0.1 (the release endpoint pointed there).
    hub = Hub(lifetime=1200)
    hub.add_file("/albert_models/albert_base_v2.tar.gz", tar_gz(str(base), top="albert_base"))
    HUB_ENV.update(ALBERT_RELEASE_ENDPOINT=hub.url, ALBERT_CACHE=str(root / "cache"))
    return root


def test_the_readme_and_the_manual_have_python_blocks():
    assert len(BLOCKS) >= 8
    assert {page for page, _ in BLOCKS} >= {"README.md", "docs/python-api.md"}


@pytest.mark.slow
@pytest.mark.parametrize("page, block", BLOCKS, ids=[f"{page}-{i}" for i, (page, _) in enumerate(BLOCKS)])
def test_python_block_runs_as_written(sandbox, page, block):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **HUB_ENV)  # `albert` as if installed
    env.pop("TF_USE_LEGACY_KERAS", None)
    result = subprocess.run([sys.executable, "-c", block], cwd=sandbox, capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, f"{page} block:\n{block}\n{result.stderr[-3000:]}"
