"""ALBERT weights converted between layouts (`python -m albert.convert`): any supported input, the release layout
or Hugging Face out.

--input is a model directory: the release layout (albert_config.json, the SentencePiece .model, a checkpoint with
the original TF1 names or one of ours), a Hugging Face directory (config.json, model.safetensors, spiece.model) or
a keras-hub preset. Which model it holds (encoder, pretraining heads, a classifier, ...) is read from the files;
--architecture (a Hugging Face class name) says it where they cannot. The output is written under a temporary
name and moved into place (albert.ground.outputs: over nothing, an empty directory or an earlier conversion of the
same kind, never over a directory holding other files); a bad input is one line and exit status 2.
"""

import dataclasses
import json
import os
import shutil

import keras
from safetensors.numpy import save_file

from albert.ground.outputs import check, writing
from albert.config import AlbertConfig
from albert.ground.errors import AlbertError
from albert.hub import huggingface_files
from albert.tasks.loading import CLASSES
from albert.model.sizing import check_weights_fit
from albert.ground.rundir import BEST_CHECKPOINT
from albert.weights import huggingface
from albert.weights.run_record import read_record, write_record
from albert.weights.formats import ARGUMENTS, check_vocabulary, read_model_directory
from albert.weights.heads import LABELLED, heads_of
from albert.weights.loader import load_located
from albert.weights.original import encoder_of
from albert.weights.tf_checkpoints import save_original_checkpoint

MODEL_CLASSES = {cls.__name__: cls for cls in CLASSES}
TOKENIZER_CONFIG = {"tokenizer_class": "AlbertTokenizer", "do_lower_case": True, "keep_accents": False,
                    "remove_space": True, "bos_token": "[CLS]", "eos_token": "[SEP]", "cls_token": "[CLS]",
                    "sep_token": "[SEP]", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "[MASK]"}


def build_model(files: dict, architecture: str | None = None):
    """(model, LoadReport, Hugging Face architecture or None) of a model directory's weights."""
    config = AlbertConfig.from_json_file(files.config)
    check_weights_fit(config, files.config)
    check_vocabulary(files, config)
    heads = heads_of(files)
    if architecture is not None:
        if architecture not in huggingface.ARCHITECTURES:
            raise AlbertError(f"--architecture {architecture}: not one of {', '.join(huggingface.ARCHITECTURES)}")
        model_class = huggingface.ARCHITECTURES[architecture].model_class
        arguments = {"num_labels": heads.num_labels} if model_class in LABELLED else {}
    elif heads.model_class is None:
        raise AlbertError(heads.unclear)
    else:
        model_class, arguments, architecture = heads.model_class, heads.arguments, heads.architecture
    keras.mixed_precision.set_global_policy("float32")
    model = MODEL_CLASSES[model_class](config, **arguments)
    return model, load_located(model, files.weights, files.format), architecture


def write_release(model, files: dict, directory: str):
    """albert_config.json, 30k-clean.model (and .vocab when there is one), model.ckpt-best (original names)."""
    encoder_of(model).config.to_json_file(os.path.join(directory, "albert_config.json"))
    shutil.copyfile(files.spm_model, os.path.join(directory, "30k-clean.model"))
    if files.spm_vocab:
        shutil.copyfile(files.spm_vocab, os.path.join(directory, "30k-clean.vocab"))
    save_original_checkpoint(model, os.path.join(directory, BEST_CHECKPOINT))
    record = _own_record(model, files)
    if record is not None:  # a fine-tuning run's task, labels and preprocessing travel with its weights
        preprocessing = dict(record.preprocessing, spm_model_file="30k-clean.model")
        write_record(directory, dataclasses.replace(record, preprocessing=preprocessing))


def _own_record(model, files):
    """The run record of the source directory when it describes `model`'s task (a fine-tuning run's), else None."""
    record = read_record(files.path)
    return record if record is not None and record.model_class == type(model).__name__ else None


def write_huggingface(model, files: dict, directory: str, architecture: str | None = None):
    """config.json, model.safetensors and spiece.model (+ tokenizer_config.json) that transformers loads as
    `architecture` (default: the class matching the model) with no missing or unexpected keys."""
    kind = type(model).__name__
    architecture = architecture or huggingface.DEFAULT_ARCHITECTURE.get(kind)
    if architecture is None:
        raise AlbertError(f"{kind} has no Hugging Face class (transformers has no SQuAD 2.0 answer-class head); "
                          "convert it --to=release, or pick --architecture AlbertModel for its encoder")
    base = huggingface.read_config(files.weights) if files.format == "huggingface" else None
    labels = getattr(model, "num_labels", None)
    record = _own_record(model, files)
    config = huggingface.config_to_dict(encoder_of(model).config, architecture, labels, base,
                                        getattr(model, "dropout_prob", None), record and record.labels)
    tensors = huggingface.state_dict(model, architecture)
    save_file(tensors, os.path.join(directory, huggingface_files.WEIGHT_FILES[0]), metadata={"format": "pt"})
    with open(os.path.join(directory, huggingface_files.CONFIG), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    with open(os.path.join(directory, huggingface_files.TOKENIZER_CONFIG), "w") as f:
        f.write(json.dumps(TOKENIZER_CONFIG, indent=2, sort_keys=True) + "\n")
    shutil.copyfile(files.spm_model, os.path.join(directory, huggingface_files.SPM_MODEL))


def convert(source: str, output: str, to: str, architecture: str | None = None,
            checkpoint_name: str = BEST_CHECKPOINT, spm_model_file: str | None = None, names: dict = ARGUMENTS):
    """Convert the model directory `source` into `output` (layout `to`); returns the LoadReport. `names`: how the
    errors call `source`, `checkpoint_name` and `spm_model_file` (python -m albert.convert passes its flags')."""
    command, name = f"albert.convert --to={to}", names.get("output", "output")
    check(output, command, name, (source, spm_model_file))
    files = read_model_directory(source, checkpoint_name, spm_model_file, names)
    model, report, source_architecture = build_model(files, architecture)
    with writing(output, command, name, (source, spm_model_file)) as tmp:
        if to == "release":
            write_release(model, files, tmp)
        else:
            write_huggingface(model, files, tmp, architecture or source_architecture)
    return report
