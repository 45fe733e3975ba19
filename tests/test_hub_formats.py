"""Every hub format read through the one loader, against what the reference tool chains wrote: the real hub
artifacts in ../shared/hub_artifacts reproduce their recorded outputs, a TF1 module's config is read from its graph,
our export_to_tfhub.py output reads back, albert.convert writes the release layout from a hub model, a BERT module
is refused, pytorch_model.bin is read without PyTorch and tf_model.h5 gives transformers' TensorFlow outputs.
Fetching them from hubs: tests/test_hub.py."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import HUB_ARTIFACTS as SHARED
from tests.helpers import ROOT, WEIGHT_FIXTURES as WEIGHTS

TF1 = os.path.join(SHARED, "tf1_module")
TF2 = os.path.join(SHARED, "tf2_model_garden")
assert os.path.isdir(SHARED), f"{SHARED}: required (CI lays ../shared beside the clone); never skipped"


def test_the_hub_artifacts_reproduce_their_recorded_outputs():
    """The TF1 module (all 30 variables, SOP head included) and the Model Garden encoder (28: no SOP head) give the
    outputs the reference tool chains recorded, within 1e-5."""
    import albert

    tf1 = np.load(os.path.join(TF1, "io_module.npz"))
    tf2 = np.load(os.path.join(TF2, "io_saved_model.npz"))
    for directory, variables in ((os.path.join(TF1, "module"), 30), (os.path.join(TF2, "encoder"), 28)):
        model = albert.AlbertPretrainer.from_pretrained(directory)
        assert len(model.load_report.loaded) == variables
        out = model.with_hidden_states({"input_ids": tf1["input_ids"], "input_mask": tf1["input_mask"],
                                        "segment_ids": tf1["segment_ids"], "masked_lm_positions": tf1["mlm_positions"]},
                                       training=False)
        for name, want in (("sequence_output", tf1["sequence_output"]), ("pooled_output", tf1["pooled_output"]),
                           ("sequence_output", tf2["sequence_output"]), ("pooled_output", tf2["pooled_output"])):
            np.testing.assert_allclose(np.asarray(out[name]), want, atol=1e-5)
        np.testing.assert_allclose(np.asarray(out["mlm_logits"]).reshape(12, 500), tf1["mlm_logits"], atol=1e-5)
        np.testing.assert_allclose(np.asarray(out["mlm_logits"]), tf2["mlm_logits"], atol=1e-5)
        for layer, want in enumerate(tf2["encoder_outputs"]):
            np.testing.assert_allclose(np.asarray(out["encoder_outputs"][layer]), want, atol=1e-5)
        if variables == 30:
            log_probs = np.asarray(out["sop_logits"]) - np.log(np.exp(np.asarray(out["sop_logits"])).sum(-1,
                                                                                                        keepdims=True))
            np.testing.assert_allclose(log_probs, tf1["sop_log_probs"], atol=1e-5)


def test_a_module_without_its_config_is_read_from_its_graph(tmp_path):
    """Some /1 modules carry no albert_config.json: layers, heads and activation come from the module's graph."""
    from albert.config import AlbertConfig
    from albert.weights.formats import directory_files

    module = tmp_path / "module"
    shutil.copytree(os.path.join(TF1, "module"), module)
    os.remove(module / "assets" / "albert_config.json")
    files = directory_files(str(module))
    assert files.config.endswith("saved_model.pb") and files.layout == "tf1_hub"
    inferred = AlbertConfig.from_json_file(files.config)
    recorded = AlbertConfig.from_json_file(os.path.join(TF1, "module", "assets", "albert_config.json"))
    assert inferred.to_dict() | {k: v for k, v in recorded.extra.items()} == recorded.to_dict() | {
        "initializer_range": inferred.initializer_range}


@pytest.mark.slow
def test_our_tfhub_export_reads_back_with_the_same_outputs(tmp_path):
    """export_to_tfhub.py (here from the TF1 module) -> from_pretrained of the export, its mlm/ and its encoder/:
    the same outputs (the export's variables matched by their Keras paths; encoder/ has no heads)."""
    import albert

    out = tmp_path / "hub"
    result = subprocess.run([sys.executable, os.path.join(ROOT, "export_to_tfhub.py"),
                             f"--albert_directory={os.path.join(TF1, 'module')}", f"--export_path={out}",
                             "--seq_length=16"], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    batch = np.load(os.path.join(TF1, "io_module.npz"))
    features = {k: batch[k][:, :16] for k in ("input_ids", "input_mask", "segment_ids")}
    features["masked_lm_positions"] = batch["mlm_positions"]
    want = albert.AlbertPretrainer.from_pretrained(os.path.join(TF1, "module")).with_hidden_states(features)
    for reference, missing in ((out, 0), (out / "mlm", 0), (out / "encoder", 7)):
        model = albert.AlbertPretrainer.from_pretrained(str(reference))
        assert len(model.load_report.missing) == missing
        assert len(model.load_report.loaded) == 30 - missing
        got = model.with_hidden_states(features)
        np.testing.assert_array_equal(np.asarray(got["sequence_output"]), np.asarray(want["sequence_output"]))
        if not missing:
            np.testing.assert_array_equal(np.asarray(got["mlm_logits"]), np.asarray(want["mlm_logits"]))
            np.testing.assert_array_equal(np.asarray(got["sop_logits"]), np.asarray(want["sop_logits"]))


@pytest.mark.parametrize("source", ["tf1_module/module", "tf2_model_garden/encoder"])
def test_convert_to_release_from_a_hub_model(tmp_path, source):
    """python -m albert.convert --to=release turns a TF Hub module or a Model Garden encoder into the release layout
    (original TF1 names) that every older tool reads; the weights come back unchanged."""
    import tensorflow as tf

    out = tmp_path / "release"
    result = subprocess.run([sys.executable, "-m", "albert.convert", f"--input={os.path.join(SHARED, source)}",
                             f"--output={out}", "--to=release"], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(out))[:2] == ["30k-clean.model", "30k-clean.vocab"] or (out / "30k-clean.model").exists()
    written = tf.train.load_checkpoint(str(out / "model.ckpt-best"))
    module = tf.train.load_checkpoint(os.path.join(TF1, "module", "variables", "variables"))
    names = [n for n in module.get_variable_to_shape_map() if not n.startswith("cls/seq_relationship")]
    for name in names:  # Model Garden's kernels, reshaped back per head, equal the TF1 module's
        np.testing.assert_array_equal(written.get_tensor(name), module.get_tensor(name))
    assert json.loads((out / "albert_config.json").read_text())["num_hidden_layers"] == 2


def test_a_module_of_another_family_is_refused_in_one_line(tmp_path):
    """A TF1 Hub module of BERT (no albert_config.json, BERT's variable names) is not read as ALBERT."""
    import tensorflow as tf

    from albert.ground.errors import AlbertError
    from albert.tasks.classification.model import AlbertClassifier

    module = tmp_path / "bert_module"
    shutil.copytree(os.path.join(TF1, "module"), module)
    os.remove(module / "assets" / "albert_config.json")
    tensors = {"bert/embeddings/word_embeddings": tf.zeros([500, 32]),
               "bert/encoder/layer_0/attention/self/query/kernel": tf.zeros([32, 32])}
    prefix = str(module / "variables" / "variables")
    for name in os.listdir(module / "variables"):
        os.remove(module / "variables" / name)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=sorted(tensors), shape_and_slices=[""] * 2,
                      tensors=[tensors[k] for k in sorted(tensors)])
    with pytest.raises(AlbertError) as raised:
        AlbertClassifier.from_pretrained(str(module), num_labels=2)
    assert str(raised.value) == (f"{module}: not an ALBERT TF Hub module (no bert/embeddings/position_embeddings "
                                 "variable): a module of another model family (BERT, ELECTRA, ...)?")


def test_pytorch_model_bin_is_read_without_torch_and_runs_nothing(tmp_path):
    """pytorch_model.bin (torch.save's zip format, tools/make_pytorch_fixture.py) gives the safetensors file's
    tensors bit for bit, strides and bfloat16 included; a pickle that names anything else is refused before it
    runs."""
    import pickle
    import zipfile

    from safetensors.numpy import load_file

    from albert.ground.errors import AlbertError
    from albert.weights import torch_pickle

    directory = os.path.join(WEIGHTS, "hf_classifier_pytorch")
    got = torch_pickle.load(os.path.join(directory, "pytorch_model.bin"))
    want = load_file(os.path.join(WEIGHTS, "hf_classifier", "model.safetensors"))
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and np.array_equal(got[name], value), name
    odd = torch_pickle.load(os.path.join(directory, "strided_bf16.bin"))
    np.testing.assert_array_equal(odd["a"], np.arange(6, dtype=np.float32).reshape(2, 3).T)
    np.testing.assert_array_equal(odd["b"], np.array([1.5, -2.25], np.float32))
    np.testing.assert_array_equal(odd["c"], np.array([1, 2, 3]))
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    evil = tmp_path / "pytorch_model.bin"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps({"x": Evil()}, protocol=2))
    with pytest.raises(AlbertError) as raised:
        torch_pickle.load(str(evil))
    assert str(raised.value) == (f"{evil}: its pickle names posix.system, which a PyTorch state dict does not: "
                                 "refused, nothing run (save the weights as model.safetensors)")
    assert not marker.exists()


@pytest.mark.parametrize("fixture", ["tf_h5_classifier", "tf_h5_pretraining"])
def test_tf_model_h5_gives_transformers_tensorflow_outputs(fixture):
    """tf_model.h5 as transformers 4.46.3's TensorFlow classes wrote it (tools/make_tf_h5_fixture.py: every weight
    random, 4 layers over 2 groups x 2 inner groups, E < H) gives those classes' outputs within 1e-5."""
    import albert

    directory = os.path.join(WEIGHTS, fixture)
    golden = np.load(os.path.join(directory, "golden.npz"))
    features = {k: golden[k] for k in ("input_ids", "input_mask", "segment_ids")}
    if fixture == "tf_h5_classifier":
        model = albert.AlbertClassifier.from_pretrained(directory, num_labels=3)
        np.testing.assert_allclose(np.asarray(model(features)), golden["logits"], atol=1e-5)
        outputs = model.encoder(features)
    else:
        model = albert.AlbertPretrainer.from_pretrained(directory)
        positions = np.tile(np.arange(12, dtype=np.int32), (3, 1))
        outputs = model.with_hidden_states(dict(features, masked_lm_positions=positions))
        np.testing.assert_allclose(np.asarray(outputs["mlm_logits"]), golden["prediction_logits"], atol=1e-5)
        np.testing.assert_allclose(np.asarray(outputs["sop_logits"]), golden["sop_logits"], atol=1e-5)
        assert model.load_report.ignored == ["predictions.decoder.bias"]  # tied to predictions.bias, checked equal
    np.testing.assert_allclose(np.asarray(outputs["sequence_output"]), golden["sequence_output"], atol=1e-5)
    assert model.load_report.missing == []
    assert model.load_report.unused == []


def test_a_model_garden_encoder_with_its_default_gelu_gives_its_own_outputs():
    """tests/fixtures/model_garden_gelu: written by Model Garden's own exporter (tools/make_model_garden_fixture.py,
    tf-models-official 2.20) with its default activation, serialized as the registered function "Text>gelu". Read as
    the original's tanh gelu, the encoder and its MLM head give the SavedModel's own outputs within 1e-5."""
    import albert

    directory = os.path.join(ROOT, "tests", "fixtures", "model_garden_gelu")
    with open(os.path.join(directory, "made.json")) as f:
        assert json.load(f)["activation_in_config"] == {"module": "builtins", "class_name": "function",
                                                        "config": "Text>gelu", "registered_name": "function"}
    io = np.load(os.path.join(directory, "io.npz"))
    inputs = {"input_ids": io["input_word_ids"], "input_mask": io["input_mask"], "segment_ids": io["input_type_ids"]}
    encoder = albert.AlbertEncoder.from_pretrained(os.path.join(directory, "encoder"))
    assert encoder.config.hidden_act == "gelu" and encoder.config.embedding_size != encoder.config.hidden_size
    outputs = encoder(inputs, training=False)
    np.testing.assert_allclose(np.asarray(outputs["sequence_output"]), io["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(np.asarray(outputs["pooled_output"]), io["pooled_output"], atol=1e-5)
    pretrainer = albert.AlbertPretrainer.from_pretrained(os.path.join(directory, "encoder"))
    out = pretrainer.with_hidden_states(dict(inputs, masked_lm_positions=io["masked_lm_positions"]), training=False)
    np.testing.assert_allclose(np.asarray(out["mlm_logits"]).reshape(io["mlm_logits"].shape), io["mlm_logits"],
                               atol=1e-5)
