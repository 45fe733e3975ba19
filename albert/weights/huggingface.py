"""Hugging Face ALBERT weights in and out (`config.json` + `model.safetensors` + `spiece.model`), no PyTorch.

Each row pairs a Hugging Face state-dict name with an original TF1 name (albert.weights.original's table) and the
layout change between them: PyTorch `Linear.weight` is [out, in], the original's Dense kernel [in, out]
(`TRANSPOSE`); everything else is `SAME`. Base-model rows are relative to the base model (`albert.` inside the
task classes, nothing in `AlbertModel`); block rows to `encoder.albert_layer_groups.<g>.albert_layers.<k>.`
(the original's `bert/encoder/transformer/group_<g>/inner_group_<k>/`). Checked against transformers 5.23.0.
"""

import dataclasses
import os
import re

import numpy as np

from albert.ground.errors import AlbertError
from albert.hub import huggingface_files
from albert.ground.textfiles import load_config
from albert.weights import torch_pickle
from albert.weights.keras_hub import read_h5
from albert.weights.original import encoder_of, original_variable_map

SAME, TRANSPOSE = "same", "transpose"
CHECKED_TRANSFORMERS_VERSION = "5.23.0"

BASE_TABLE = [
    ("embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", SAME),
    ("embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", SAME),
    ("embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", SAME),
    ("embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", SAME),
    ("embeddings.LayerNorm.bias", "bert/embeddings/LayerNorm/beta", SAME),
    ("encoder.embedding_hidden_mapping_in.weight", "bert/encoder/embedding_hidden_mapping_in/kernel", TRANSPOSE),
    ("encoder.embedding_hidden_mapping_in.bias", "bert/encoder/embedding_hidden_mapping_in/bias", SAME),
    ("pooler.weight", "bert/pooler/dense/kernel", TRANSPOSE),
    ("pooler.bias", "bert/pooler/dense/bias", SAME),
]
BLOCK_HF = "encoder.albert_layer_groups.{g}.albert_layers.{k}."
BLOCK_ORIGINAL = "bert/encoder/transformer/group_{g}/inner_group_{k}/"
BLOCK_TABLE = [
    ("attention.query.weight", "attention_1/self/query/kernel", TRANSPOSE),
    ("attention.query.bias", "attention_1/self/query/bias", SAME),
    ("attention.key.weight", "attention_1/self/key/kernel", TRANSPOSE),
    ("attention.key.bias", "attention_1/self/key/bias", SAME),
    ("attention.value.weight", "attention_1/self/value/kernel", TRANSPOSE),
    ("attention.value.bias", "attention_1/self/value/bias", SAME),
    ("attention.dense.weight", "attention_1/output/dense/kernel", TRANSPOSE),
    ("attention.dense.bias", "attention_1/output/dense/bias", SAME),
    ("attention.LayerNorm.weight", "LayerNorm/gamma", SAME),
    ("attention.LayerNorm.bias", "LayerNorm/beta", SAME),
    ("ffn.weight", "ffn_1/intermediate/dense/kernel", TRANSPOSE),
    ("ffn.bias", "ffn_1/intermediate/dense/bias", SAME),
    ("ffn_output.weight", "ffn_1/intermediate/output/dense/kernel", TRANSPOSE),
    ("ffn_output.bias", "ffn_1/intermediate/output/dense/bias", SAME),
    ("full_layer_layer_norm.weight", "LayerNorm_1/gamma", SAME),
    ("full_layer_layer_norm.bias", "LayerNorm_1/beta", SAME),
]
HEAD_TABLES = {  # top-level names of the task classes; keys are albert.weights.original.HEAD_TABLES'
    "mlm": [
        ("predictions.dense.weight", "cls/predictions/transform/dense/kernel", TRANSPOSE),
        ("predictions.dense.bias", "cls/predictions/transform/dense/bias", SAME),
        ("predictions.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma", SAME),
        ("predictions.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", SAME),
        ("predictions.bias", "cls/predictions/output_bias", SAME),
    ],
    "sop": [
        ("sop_classifier.classifier.weight", "cls/seq_relationship/output_weights", SAME),  # [2, H] both
        ("sop_classifier.classifier.bias", "cls/seq_relationship/output_bias", SAME),
    ],
    "classifier": [("classifier.weight", "output_weights", SAME), ("classifier.bias", "output_bias", SAME)],
    "squad_v1": [("qa_outputs.weight", "cls/squad/output_weights", SAME),  # [2, H]: start row, end row
                 ("qa_outputs.bias", "cls/squad/output_bias", SAME)],
    "choice": [("classifier.weight", "output_weights", SAME), ("classifier.bias", "output_bias", SAME)],
    "token": [("classifier.weight", "cls/token/output_weights", SAME), ("classifier.bias", "cls/token/output_bias",
                                                                        SAME)],
}
# Copies that transformers ties to another tensor (written by older versions): checked equal, then ignored.
TIED = {"predictions.decoder.weight": "albert.embeddings.word_embeddings.weight",
        "predictions.decoder.bias": "predictions.bias"}
BUFFERS = re.compile(r"(^|\.)embeddings\.(position_ids|token_type_ids)$")


@dataclasses.dataclass(frozen=True)
class Architecture:
    model_class: str  # the task model class (albert.tasks.<task>.model) that holds the same weights
    heads: tuple  # head tables (albert.weights.original.HEAD_TABLES keys)
    prefix: str  # of the base model's names
    pooler: bool  # the base model has the pooler (transformers drops it in the token-level classes)


ARCHITECTURES = {
    "AlbertModel": Architecture("AlbertEncoder", (), "", True),
    "AlbertForPreTraining": Architecture("AlbertPretrainer", ("mlm", "sop"), "albert.", True),
    "AlbertForMaskedLM": Architecture("AlbertPretrainer", ("mlm",), "albert.", False),
    "AlbertForSequenceClassification": Architecture("AlbertClassifier", ("classifier",), "albert.", True),
    "AlbertForQuestionAnswering": Architecture("AlbertSquadV1", ("squad_v1",), "albert.", False),
    "AlbertForMultipleChoice": Architecture("AlbertMultipleChoice", ("choice",), "albert.", True),
    "AlbertForTokenClassification": Architecture("AlbertTokenClassifier", ("token",), "albert.", False),
}
# The class each of our models is written as (AlbertSquadV2's decoder has no Hugging Face class).
DEFAULT_ARCHITECTURE = {a.model_class: name for name, a in reversed(ARCHITECTURES.items())}

# config.json: `hidden_act` -> the original's name ("gelu" there is the exact erf GELU, which ALBERT never used).
ACTIVATIONS = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "relu": "relu", "tanh": "tanh", "linear": "linear"}
ACTIVATION_OUT = {"gelu": "gelu_new", "relu": "relu", "tanh": "tanh", "linear": "linear"}
NETWORK_KEYS = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups",
                "num_attention_heads", "intermediate_size", "inner_group_num", "hidden_dropout_prob",
                "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size", "initializer_range")
# What transformers writes beside the network keys (token ids of the released SentencePiece models).
WRITTEN_DEFAULTS = {"bos_token_id": 2, "eos_token_id": 3, "pad_token_id": 0, "classifier_dropout_prob": 0.1,
                    "dtype": "float32", "layer_norm_eps": 1e-12, "model_type": "albert", "tie_word_embeddings": True}


# ---------------------------------------------------------------------------------------------------- config
def config_values(values: dict, source: str) -> dict:
    """The original's config keys of a Hugging Face `config.json` (AlbertConfig.from_json_file builds the config):
    the keys that describe the network map to the original's; the rest (architectures, token ids, dtype, versions,
    labels) say nothing about the weights."""
    kind = values.get("model_type")
    if kind != "albert":
        raise AlbertError(f"{source}: a Hugging Face `{kind}` config, not ALBERT (model_type must be "
                          "\"albert\"); pass an ALBERT model's directory")
    act = values.get("hidden_act", "gelu_new")
    if act not in ACTIVATIONS:
        raise AlbertError(f"{source}: `hidden_act` {act!r} is not implemented (ALBERT's GELU is the tanh "
                          f"approximation, Hugging Face's \"gelu_new\"); supported: {', '.join(ACTIVATIONS)}")
    eps = values.get("layer_norm_eps", 1e-12)
    if eps != 1e-12:
        raise AlbertError(f"{source}: `layer_norm_eps` {eps!r} is not supported: every ALBERT LayerNorm uses 1e-12")
    position = values.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise AlbertError(f"{source}: `position_embedding_type` {position!r} is not supported: ALBERT uses "
                          "\"absolute\" positions")
    ours = {k: values[k] for k in NETWORK_KEYS if k in values}
    ours["hidden_act"] = ACTIVATIONS[act]
    return ours


def architecture_of(values: dict) -> str | None:
    names = values.get("architectures") or []
    return names[0] if names else None


def label_names(values: dict) -> tuple | None:
    """The label names of a config.json's id2label in logits order, or None (none, or transformers' LABEL_<i>)."""
    names = values.get("id2label")
    if not isinstance(names, dict) or not names:
        return None
    try:
        ordered = tuple(str(names[key]) for key in sorted(names, key=int))
    except (TypeError, ValueError):
        return None
    return None if ordered == tuple(f"LABEL_{i}" for i in range(len(ordered))) else ordered


def num_labels(values: dict) -> int:
    return len(values["id2label"]) if values.get("id2label") else values.get("num_labels", 2)


def config_to_dict(config, architecture: str, labels: int | None = None, base: dict | None = None,
                   classifier_dropout: float | None = None, label_names: tuple | None = None) -> dict:
    """The `config.json` transformers writes for `config` and `architecture`; keys of `base` (a source
    config.json) that do not describe the network -- label names, token ids, problem_type -- are kept.
    `label_names` (a fine-tuning run's, in logits order) become id2label / label2id."""
    if config.sharing != "all":
        raise AlbertError(f"sharing {config.sharing!r} has no Hugging Face form (transformers shares whole "
                          "blocks by group); write the release layout instead")
    out = dict(WRITTEN_DEFAULTS)
    out.update({k: v for k, v in (base or {}).items() if k not in NETWORK_KEYS and k != "hidden_act"})
    out.update({k: getattr(config, k) for k in NETWORK_KEYS})
    out.update(architectures=[architecture], hidden_act=ACTIVATION_OUT[config.hidden_act],
               transformers_version=CHECKED_TRANSFORMERS_VERSION)
    if classifier_dropout is not None:
        out["classifier_dropout_prob"] = classifier_dropout
    if label_names:
        out["id2label"] = {str(i): name for i, name in enumerate(label_names)}
        out["label2id"] = {name: i for i, name in enumerate(label_names)}
    elif labels is not None and labels != 2 and "id2label" not in (base or {}):
        out["id2label"] = {str(i): f"LABEL_{i}" for i in range(labels)}
        out["label2id"] = {f"LABEL_{i}": i for i in range(labels)}
    return out


# ---------------------------------------------------------------------------------------------------- names
def _block_rows(config):
    for g in range(config.num_hidden_groups):
        for k in range(config.inner_group_num):
            for hf, original, layout in BLOCK_TABLE:
                yield BLOCK_HF.format(g=g, k=k) + hf, BLOCK_ORIGINAL.format(g=g, k=k) + original, layout


def rows(config, architecture: Architecture):
    """(Hugging Face name, original name, layout) of every tensor of `architecture` for `config`."""
    for hf, original, layout in BASE_TABLE:
        if original.startswith("bert/pooler/") and not architecture.pooler:
            continue
        yield architecture.prefix + hf, original, layout
    for hf, original, layout in _block_rows(config):
        yield architecture.prefix + hf, original, layout
    for head in architecture.heads:
        yield from HEAD_TABLES[head]


def _convert(value: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(value.T) if layout == TRANSPOSE else value


# ---------------------------------------------------------------------------------------------------- files
WEIGHT_FILES = huggingface_files.WEIGHT_FILES


def weight_files(directory: str) -> list:
    """The weight file(s) of a Hugging Face directory: model.safetensors, else pytorch_model.bin (read without
    PyTorch: albert.weights.torch_pickle); sharded ones through their index."""
    for single in (os.path.join(directory, name) for name in WEIGHT_FILES):
        index = single + ".index.json"
        if os.path.isfile(single):
            return [single]
        if os.path.isfile(index):
            return shard_files(index, directory)
    raise AlbertError(f"{directory}: no model.safetensors, pytorch_model.bin or tf_model.h5 (a Hugging Face model "
                      "directory holds config.json, model.safetensors and spiece.model)")


def shard_files(index: str, directory: str) -> list:
    """The shards a `*.index.json` names (its `weight_map`: {tensor: file name}): plain file names inside
    `directory`, each there; anything else (a missing or malformed map, `../`, an absolute path, a sub-folder) is one
    line naming the index and the entry."""
    values = load_config(index)
    weight_map = values.get("weight_map") if isinstance(values, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise AlbertError(f"{index}: no \"weight_map\" of tensor names to shard files")
    shards = []
    for tensor, name in weight_map.items():
        if not (isinstance(name, str) and name and name == os.path.basename(name) and name not in (".", "..")
                and "\\" not in name):
            raise AlbertError(f"{index}: tensor {tensor!r} maps to {name!r}, not a file name inside {directory}: "
                              "refused")
        if name not in shards:
            if not os.path.isfile(os.path.join(directory, name)):
                raise AlbertError(f"{index}: tensor {tensor!r} is in {name}, which {directory} does not hold")
            shards.append(name)
    return [os.path.join(directory, name) for name in sorted(shards)]


def read_weights(path: str) -> dict:
    """{name: NumPy array} of one safetensors, PyTorch or transformers-TensorFlow weight file, in the PyTorch
    state dict's names and layouts."""
    if path.endswith(".bin"):
        return torch_pickle.load(path)
    if path.endswith(".h5"):
        return _from_tensorflow(read_h5(path, _is_tensorflow_weight), path)
    from safetensors.numpy import load_file  # noqa: PLC0415 -- not the package's own module

    try:
        return load_file(path)
    except Exception as e:  # safetensors raises its own error types for a damaged header
        raise AlbertError(f"{path}: not a readable safetensors file ({str(e).splitlines()[0][:120]})") from None


def _tensorflow_to_pytorch(name: str) -> tuple:
    """(state-dict name, transposed?) of a weight of transformers' TensorFlow classes, as transformers maps them:
    the model's own scope dropped (`tf_albert_for_.../`), `_._` -> `.`, `/` -> `.`, Keras' `kernel` -> `weight`
    (transposed: Keras [in, out], PyTorch [out, in]), `gamma` / `beta` -> `weight` / `bias`, an embedding table's
    `embeddings` -> `weight`."""
    parts = name.split(":")[0].split("/")
    for at, part in enumerate(parts):
        if part.startswith("tf_albert"):
            parts = parts[at + 1:]
            break
    parts = [p.replace("_._", ".") for p in parts]
    last = {"kernel": "weight", "gamma": "weight", "beta": "bias", "embeddings": "weight"}.get(parts[-1], parts[-1])
    return ".".join(parts[:-1] + [last]), parts[-1] == "kernel"


def _is_tensorflow_weight(name: str) -> bool:
    """A dataset of transformers' tf_model.h5 that holds a weight (not an optimizer's slot or step)."""
    return name.split("/")[-1].endswith(":0") and "optimizer" not in name.split("/")[0]


def _from_tensorflow(tensors: dict, path: str) -> dict:
    out = {}
    for name, value in tensors.items():
        if value is None:
            continue
        torch_name, transposed = _tensorflow_to_pytorch(name)
        out[torch_name] = np.ascontiguousarray(value.T) if transposed else value
    if not out:
        raise AlbertError(f"{path}: no weights of transformers' TensorFlow classes in it")
    return out


def read_config(directory: str) -> dict:
    return load_config(os.path.join(directory, huggingface_files.CONFIG))


class HuggingFaceTensors:
    """A Hugging Face directory (or its model.safetensors / pytorch_model.bin) seen as original names, for
    `load_tensors`."""

    config_name = huggingface_files.CONFIG
    optional = ("bert/pooler/",)  # AlbertForMaskedLM / AlbertForQuestionAnswering have no pooler

    def __init__(self, path: str, config):
        directory = path if os.path.isdir(path) else os.path.dirname(path) or "."
        files = weight_files(directory) if os.path.isdir(path) else [path]
        self.path = files[0] if len(files) == 1 else directory
        values = read_config(directory) if os.path.isfile(os.path.join(directory, huggingface_files.CONFIG)) else {}
        self.architecture = architecture_of(values)
        tensors = {}
        for file in files:
            tensors.update(read_weights(file))
        known = ARCHITECTURES.get(self.architecture)
        heads = known.heads if known else tuple(HEAD_TABLES)
        prefix = "albert." if any(name.startswith("albert.") for name in tensors) else ""
        table = {hf: (original, layout) for hf, original, layout in rows(config, Architecture("", heads, prefix, True))}
        self._expected = {original: hf for hf, (original, _) in table.items()}  # for the error messages
        self.shapes, self._values, self.ignored, self.unused, self._hf = {}, {}, [], [], {}
        for name, value in sorted(tensors.items()):
            if BUFFERS.search(name):
                self.ignored.append(name)
            elif name in TIED:
                self._check_tied(name, value, tensors)
            elif name in table:
                original, layout = table[name]
                self._values[original] = (value, layout)
                self.shapes[original] = tuple(reversed(value.shape)) if layout == TRANSPOSE else value.shape
                self._hf[original] = name
            elif "albert_layer_groups" in name:
                raise AlbertError(f"{self.path}: {name} has no place in a model of num_hidden_groups "
                                  f"{config.num_hidden_groups} / inner_group_num {config.inner_group_num}: use the "
                                  "config.json that came with the weights")
            else:
                self.unused.append(name)
        self._drop_identity_mapping(config)

    def _check_tied(self, name, value, tensors):
        target = TIED[name]
        other = tensors.get(target, tensors.get(target[len("albert."):]))
        if other is not None and not np.array_equal(other, value):
            raise AlbertError(f"{self.path}: {name} differs from {target}: an untied MLM decoder, which ALBERT "
                              "does not have (it reuses the word embeddings)")
        self.ignored.append(name)

    def _drop_identity_mapping(self, config):
        """transformers always has the E->H mapping; the original has none when E == H. Identity: dropped."""
        kernel = "bert/encoder/embedding_hidden_mapping_in/kernel"
        if config.embedding_size != config.hidden_size or kernel not in self._values:
            return
        bias = kernel[:-len("kernel")] + "bias"
        w, b = self._values[kernel][0], self._values.get(bias, (np.zeros(1),))[0]
        if w.shape != (config.hidden_size,) * 2 or not (np.array_equal(w, np.eye(len(w))) and not b.any()):
            raise AlbertError(f"{self.path}: embedding_size == hidden_size but embedding_hidden_mapping_in is not "
                              "the identity: the original ALBERT has no E->H mapping then, so it cannot hold "
                              "these weights")
        for name in (kernel, bias):
            self.ignored.append(self._hf.pop(name))
            self._values.pop(name), self.shapes.pop(name)

    def get(self, name: str) -> np.ndarray:
        value, layout = self._values[name]
        return _convert(value, layout)

    def describe(self, name: str) -> str:
        hf = self._hf.get(name, self._expected.get(name))
        return f"{name} (Hugging Face: {hf})" if hf else name


def state_dict(model, architecture: str) -> dict:
    """{Hugging Face name: NumPy array} of `model` written as `architecture`."""

    spec = ARCHITECTURES[architecture]
    config = encoder_of(model).config
    missing_heads = set(spec.heads) - set(getattr(model, "checkpoint_heads", ()))
    if missing_heads:
        raise AlbertError(f"{type(model).__name__} has no {', '.join(sorted(missing_heads))} head: it cannot be "
                          f"written as {architecture}; pick --architecture "
                          f"{DEFAULT_ARCHITECTURE.get(type(model).__name__, 'AlbertModel')}")
    variables = original_variable_map(model)
    out = {}
    for hf, original, layout in rows(config, spec):
        if original in variables:
            out[hf] = _convert(np.asarray(variables[original]).astype(np.float32), layout)
        elif "embedding_hidden_mapping_in" in original:  # E == H: transformers' mapping is the identity
            out[hf] = (np.eye(config.hidden_size, dtype=np.float32) if hf.endswith("weight")
                       else np.zeros(config.hidden_size, np.float32))
        else:
            raise AlbertError(f"{type(model).__name__} has no variable {original} ({hf}) for {architecture}")
    return out
