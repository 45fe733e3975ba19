"""The one loader: any format in (albert.weights' list), a LoadReport out."""

import os

import numpy as np
import tensorflow as tf

from albert.errors import AlbertError
from albert.weights import SPM_FILES, check_checkpoint_path, directory_format
from albert.weights.original import (CheckpointTensors, LoadReport, _encoder_of, is_original_checkpoint,
                                     load_tensors, resolve_checkpoint_path)


def detect_format(path: str) -> str:
    """"original", "ours", "huggingface" or "keras_hub" for a checkpoint path, a model directory or a file."""
    if path.endswith(".safetensors") or path.endswith(".safetensors.index.json"):
        return "huggingface"
    if path.endswith(".weights.h5"):
        return "keras_hub"
    kind = directory_format(path)
    if kind in SPM_FILES:
        return kind
    return "original" if is_original_checkpoint(resolve_checkpoint_path(_checkpoint_path(path))) else "ours"


def _checkpoint_path(path: str) -> str:
    """A release-layout directory without a `checkpoint` file stands for its model.ckpt-best."""
    if directory_format(path) == "release" and not tf.io.gfile.exists(os.path.join(path, "checkpoint")):
        return os.path.join(path, "model.ckpt-best")
    return path


def _source(model, path: str, kind: str):
    config = _encoder_of(model).config
    if kind == "huggingface":
        from albert.weights.huggingface import HuggingFaceTensors
        return HuggingFaceTensors(path, config)
    if kind == "keras_hub":
        from albert.weights.keras_hub import KerasHubTensors
        return KerasHubTensors(path if os.path.isdir(path) else os.path.dirname(path), config)
    return CheckpointTensors(_checkpoint_path(path))


def load_weights(model, path: str, init_from_group0: bool = False) -> LoadReport:
    """Load weights of any format into an encoder or any model of `albert.models`. The report's `missing` lists
    what the source lacks (a task head, or the pooler of a token-level Hugging Face class), which keeps its
    initialisation; `ignored` optimizer slots, buffers and tied copies; `unused` what the model has no place for.
    For our TF2 checkpoints `missing` is found exactly: each head variable holds NaN during the restore, and one
    still all NaN after it was not in the checkpoint and gets its value back."""
    kind = detect_format(path)
    if kind != "ours":
        return load_tensors(model, _source(model, path, kind), init_from_group0)
    path = resolve_checkpoint_path(path)
    own = {id(v) for v in _encoder_of(model).weights}
    heads = [v for v in model.weights if id(v) not in own]
    kept = [np.asarray(v) for v in heads]
    for variable in heads:
        variable.assign(tf.fill(variable.shape, float("nan")))
    _restore_ours(model, path)
    missing = []
    for variable, value in zip(heads, kept):
        if np.isnan(np.asarray(variable)).all():
            variable.assign(value)
            missing.append(variable.path)
    return LoadReport(path, [v.path for v in model.weights if v.path not in missing], missing, [], [])


def _restore_ours(model, path: str):
    encoder = _encoder_of(model)
    try:
        status = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder)).read(path)
        status.expect_partial()
        status.assert_existing_objects_matched()
        if encoder is not model:  # heads of the same name (a fine-tuned checkpoint of the same task)
            tf.train.Checkpoint(model=model).read(path).expect_partial()
    except (AssertionError, ValueError, tf.errors.OpError) as e:
        raise AlbertError(f"{path}: the checkpoint does not fit this model ({str(e).splitlines()[0][:200]}); use "
                          "the albert_config.json it was trained with") from None


def init_from_checkpoint(model, path: str, init_from_group0: bool = False) -> str:
    """Warm-start any model (the runners' --init_checkpoint) from weights of any format; for our TF2 checkpoints
    the shared `encoder` and any head of the same name are restored. Returns a summary."""
    kind = detect_format(path)
    if kind != "ours":
        return str(load_tensors(model, _source(model, path, kind), init_from_group0))
    path = resolve_checkpoint_path(path)
    _restore_ours(model, path)
    return f"{path}: restored the encoder (and any head of the same name) from a TF2 checkpoint"


CLI_NAMES = {"directory": "--albert_directory", "checkpoint": "--checkpoint_name", "spm": "--spm_model_file"}


def model_directory_files(directory: str, checkpoint_name: str = "model.ckpt-best",
                          spm_model_file: str | None = None, names: dict = CLI_NAMES) -> dict:
    """{format, config, spm_model, spm_vocab (or None), checkpoint} of a model directory: the release layout
    (albert_config.json, 30k-clean.model / .vocab, `checkpoint_name`), a Hugging Face directory (config.json,
    spiece.model, model.safetensors) or a keras-hub preset (config.json, assets/tokenizer/vocabulary.spm,
    model.weights.h5); each checked to exist. `names` are how the errors call the three arguments."""
    if not os.path.isdir(directory):
        raise AlbertError(f"{directory}: {names['directory']} not found")
    kind = directory_format(directory)
    if kind is None:
        raise AlbertError(f"{directory}/albert_config.json: not found; {names['directory']} must hold "
                          "albert_config.json, the SentencePiece .model and the checkpoint (or be a Hugging Face "
                          "or keras-hub ALBERT directory, with its config.json)")
    if kind in SPM_FILES:
        spm_model_file = spm_model_file or os.path.join(directory, SPM_FILES[kind])
        if not os.path.isfile(spm_model_file):
            raise AlbertError(f"{spm_model_file}: not found; pass {names['spm']}")
        if kind == "huggingface":
            from albert.weights.huggingface import weight_files
            weight_files(directory)
        elif not os.path.isfile(os.path.join(directory, "model.weights.h5")):
            raise AlbertError(f"{directory}: no model.weights.h5 (a keras-hub preset holds config.json, "
                              "model.weights.h5 and assets/tokenizer/vocabulary.spm)")
        return {"format": kind, "config": os.path.join(directory, "config.json"), "spm_model": spm_model_file,
                "spm_vocab": None, "checkpoint": directory}
    config = os.path.join(directory, "albert_config.json")
    if spm_model_file is None:
        models = sorted(f for f in os.listdir(directory) if f.endswith(".model"))
        if not models:
            raise AlbertError(f"{directory}: no SentencePiece .model file; pass {names['spm']}")
        if len(models) > 1:
            raise AlbertError(f"{directory}: {len(models)} SentencePiece .model files ({', '.join(models)}); pass "
                              f"{names['spm']}")
        spm_model_file = os.path.join(directory, models[0])
    elif not os.path.isfile(spm_model_file):
        raise AlbertError(f"{spm_model_file}: {names['spm']} not found")
    vocab = spm_model_file[:-len(".model")] + ".vocab" if spm_model_file.endswith(".model") else None
    checkpoint = os.path.join(directory, checkpoint_name)
    if not tf.io.gfile.exists(checkpoint + ".index"):
        found = sorted(f[:-len(".index")] for f in os.listdir(directory) if f.endswith(".index"))
        raise AlbertError(f"{checkpoint}.index: checkpoint not found; pass {names['checkpoint']}"
                          + (f" (found: {', '.join(found)})" if found else ""))
    checkpoint = resolve_checkpoint_path(checkpoint)
    check_checkpoint_path(checkpoint, names["checkpoint"])
    return {"format": "original" if is_original_checkpoint(checkpoint) else "ours", "config": config,
            "spm_model": spm_model_file, "spm_vocab": vocab if vocab and os.path.isfile(vocab) else None,
            "checkpoint": checkpoint}


def check_vocabulary(files: dict, config) -> None:
    """The SentencePiece model and the config of a model directory must agree on the vocabulary size."""
    from albert.tokenization import load_sentencepiece

    pieces = load_sentencepiece(files["spm_model"]).GetPieceSize()
    if pieces != config.vocab_size:
        raise AlbertError(f"{files['spm_model']} has {pieces} pieces but {files['config']} says vocab_size "
                          f"{config.vocab_size}: they are not from the same model")


def model_class_for(files: dict) -> tuple:
    """(albert.models class name, constructor arguments, Hugging Face architecture or None) that the weights of
    a model directory hold: from config.json's `architectures` (Hugging Face), task.json (keras-hub), or the head
    variables of a checkpoint."""
    from albert.weights import huggingface, keras_hub

    directory = files["checkpoint"]
    if files["format"] == "huggingface":
        values = huggingface.read_config(directory)
        name = huggingface.architecture_of(values) or "AlbertModel"
        if name not in huggingface.ARCHITECTURES:
            raise AlbertError(f"{files['config']}: architecture {name} has no counterpart here (supported: "
                              f"{', '.join(huggingface.ARCHITECTURES)})")
        model_class = huggingface.ARCHITECTURES[name].model_class
        arguments = {"num_labels": huggingface.num_labels(values)} if model_class == "AlbertClassifier" else {}
        if model_class in ("AlbertClassifier", "AlbertMultipleChoice"):
            arguments["dropout_prob"] = values.get("classifier_dropout_prob", 0.1)
        return model_class, arguments, name
    if files["format"] == "keras_hub":
        task, classes = keras_hub.task_of(directory)
        if task is None:
            return "AlbertEncoder", {}, None
        if task not in keras_hub.TASKS:
            raise AlbertError(f"{directory}/task.json: keras-hub task {task} has no counterpart here (supported: "
                              f"{', '.join(keras_hub.TASKS)})")
        model_class = keras_hub.TASKS[task][0]
        return model_class, ({"num_labels": classes} if model_class == "AlbertClassifier" else {}), None
    return _class_from_checkpoint(files["checkpoint"])


def _class_from_checkpoint(path: str) -> tuple:
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    names = " ".join(shapes)
    for marker, model_class in (("cls/predictions", "AlbertPretrainer"), ("mlm_head", "AlbertPretrainer"),
                                ("start_logits", "AlbertSquadV2"), ("squad_head/end_dense_0", "AlbertSquadV2"),
                                ("cls/squad", "AlbertSquadV1"), ("squad_head", "AlbertSquadV1"),
                                ("choice_head", "AlbertMultipleChoice")):
        if marker in names:
            return model_class, {}, None
    for name, shape in shapes.items():
        if name == "output_weights" or ("classifier_head/output_weights" in name and "OPTIMIZER" not in name):
            if shape[0] == 1 and name == "output_weights":
                raise AlbertError(f"{path}: output_weights [1, H] is a multiple-choice (RACE) head or a regression "
                                  "classifier; pass --architecture AlbertForMultipleChoice or "
                                  "AlbertForSequenceClassification")
            return "AlbertClassifier", {"num_labels": shape[0]}, None
    return "AlbertEncoder", {}, None
