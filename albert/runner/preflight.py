"""What a runner works out and checks before TensorFlow starts: its model files from a model reference (the
original's --albert_hub_module_handle or --init_checkpoint naming a model directory), then that the config, the
tokenizer and the checkpoint are there, whole and fit each other, and that an export can be written where it is asked
for. Each check is one line naming the flag and the file (AlbertError)."""

import dataclasses
import os

from absl import flags

from albert.config import AlbertConfig
from albert.data.features import boundaries
from albert.export.options import check_onnx_export
from albert.ground import outputs
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.settings_flags import Flags
from albert.hub.resolve import resolve
from albert.runner.settings import SPLIT_FLAGS, check_one_length
from albert.model.sizing import check_weights_fit
from albert.text.tokenization import load_sentencepiece
from albert.text.wordpiece import load_vocab
from albert.weights.formats import check_checkpoint_path, default_model_files, directory_files
from albert.weights.run_record import RUNNER_HEADS, RUNNERS, read_record


def model_files(init_checkpoint: str | None, albert_config_file: str | None, spm_model_file: str | None,
                vocab_file: str | None = None, hub_module: str | None = None, output_dir: str | None = None) -> tuple:
    """(init checkpoint, config file, SentencePiece model) of a run, each model reference resolved to local files
    (albert.hub.resolve: a name, a hub handle or URL is downloaded once into the cache). The config and the
    SentencePiece model are the given ones, else those of the model directory given as --init_checkpoint or, as in
    the original, as --albert_hub_module_handle (which also supplies the weights when --init_checkpoint is not
    given; with both, --init_checkpoint's weights are loaded), else those the run in `output_dir` recorded (a run
    directory is a model directory: evaluating, predicting and exporting it need no model flags)."""
    init_checkpoint = resolve(init_checkpoint) if init_checkpoint else init_checkpoint
    module = resolve(hub_module) if hub_module else None
    if module is not None and directory_files(module) is None:
        raise AlbertError(f"{hub_module}: --albert_hub_module_handle holds no model (a TF Hub module, a SavedModel "
                          "or a model directory)")
    found = default_model_files(module or init_checkpoint or run_directory(output_dir))
    if not albert_config_file:
        albert_config_file = found.get("config")
    if not spm_model_file and not vocab_file:
        spm_model_file = found.get("spm_model")
    return init_checkpoint or module, albert_config_file, spm_model_file


MODEL_FILE_FIELDS = ("init_checkpoint", "albert_config_file", "spm_model_file")  # what a model reference supplies


def run_directory(output_dir: str | None) -> str | None:
    """`output_dir` when it holds a run's model files (its albert_config.json: a model directory), else None."""
    if output_dir and not is_remote(output_dir) and os.path.isdir(output_dir) and directory_files(output_dir):
        return output_dir
    return None


def given_settings(job: Flags, hub_module: str | None = None, values=flags.FLAGS):
    """A runner's settings as its flags give them, before any model reference is resolved (which may download):
    what it checks first (nothing to do, its data files). The model files are left to a model reference when there
    is one; a local model file named but missing is one line now."""
    if getattr(job.cls, "COMMAND", "") and {"do_train", "output_dir", "init_checkpoint"} <= set(job.names):
        check_task_head(job.cls.COMMAND, *(job.value(f, values) for f in ("do_train", "output_dir",
                                                                          "init_checkpoint")))  # before all else
    reference = (hub_module or ("init_checkpoint" in job.names and job.value("init_checkpoint", values))
                 or ("output_dir" in job.names and run_directory(job.value("output_dir", values))))
    given = job.given(values, unchecked=MODEL_FILE_FIELDS if reference else ())
    for name, value in recorded_settings(job, values).items():
        setattr(given, name, value)
    check_local_files(getattr(given, "albert_config_file", None), getattr(given, "spm_model_file", None),
                      getattr(given, "vocab_file", None))
    if {"train_step", "num_train_epochs"} <= set(job.names):
        check_one_length(given)
    for field in dataclasses.fields(job.cls):  # the derived defaults, as the built settings will have them
        if field.metadata.get("derived") and getattr(given, field.name) is None:
            setattr(given, field.name, field.metadata["derived"](given))
    return given


def check_local_files(albert_config_file: str | None, spm_model_file: str | None, vocab_file: str | None):
    """Each model file given as a local path is a file."""
    for name, path in (("albert_config_file", albert_config_file), ("spm_model_file", spm_model_file),
                       ("vocab_file", vocab_file)):
        if path and not is_remote(path) and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} " + ("is a directory; pass the file" if os.path.isdir(path) else
                                                      "not found"))


def settings_with_model_files(job: Flags, hub_module: str | None = None, values=flags.FLAGS):
    """A runner's settings, built from its parsed flags once the model files are worked out (`model_files`): the
    three settings a model reference supplies are overridden, the others are the flags'."""
    fields = job.names
    given = {name: job.value(name, values) if name in fields else None
             for name in ("init_checkpoint", "albert_config_file", "spm_model_file", "vocab_file")}
    output_dir = job.value("output_dir", values) if "output_dir" in fields else None
    init_checkpoint, albert_config_file, spm_model_file = model_files(
        given["init_checkpoint"], given["albert_config_file"], given["spm_model_file"], given["vocab_file"],
        hub_module, output_dir)
    overrides = {"init_checkpoint": init_checkpoint, "albert_config_file": albert_config_file}
    if "spm_model_file" in fields:
        overrides["spm_model_file"] = spm_model_file
    return job.build(values, **recorded_settings(job, values), **overrides)


def recorded_settings(job: Flags, values=flags.FLAGS) -> dict:
    """The settings a run recorded in its --output_dir (albert.weights.run_record) that the flags leave out, for a
    run that does not train there: what it evaluates, predicts or exports was trained with them (its preprocessing,
    its GLUE task, SQuAD's version). Given a run directory and no data, a runner whose --do_train / --do_eval default
    on (run_race.py's, as the original's) only exports or predicts: those two default off."""
    fields = job.names
    if "output_dir" not in fields:
        return {}
    record = read_record(run_directory(job.value("output_dir", values)))
    if record is None:
        return {}
    present = {name for name, flag in fields.items() if values[flag].present}
    found = {}
    if "data_dir" in fields and not any(job.value(f, values) for f in ("data_dir", "train_file") if f in fields):
        found = {name: False for name in ("do_train", "do_eval") if name in fields and name not in present}
    if found.get("do_train", job.value("do_train", values)):
        return found
    found.update(record.preprocessing)
    found.pop("spm_model_file", None), found.pop("vocab_file", None)  # the run's copies: model_files finds them
    if record.model_class in ("AlbertSquadV1", "AlbertSquadV2"):
        found["version_2_with_negative"] = record.model_class == "AlbertSquadV2"
    if record.model_class == "AlbertClassifier" and record.task != "own":
        found["task_name"] = record.task
    return {name: value for name, value in found.items() if name in fields and name not in present}


def check_task_head(command: str, do_train: bool, output_dir: str | None, init_checkpoint: str | None,
                    model_class: str | None = None):
    """A run of `command` that evaluates, predicts or exports without training: the checkpoint it reads holds the
    runner's task head (`model_class`, when known: SQuAD 1.1's or 2.0's). A run directory of another task (a
    classifier run given to run_squad.py) is one line naming the run's task and the missing head; training from
    another run's encoder stays allowed (the head starts fresh, and the loader says so)."""
    if do_train:
        record = read_record(init_checkpoint) if init_checkpoint and os.path.isdir(init_checkpoint) else None
        if model_class and record is not None and record.model_class != model_class:
            print(f"{init_checkpoint}: --init_checkpoint is {record.describe()}: its encoder starts this run, the "
                  f"{RUNNERS[model_class][1]} head starts fresh")
        return
    for source, flag in ((output_dir, "--output_dir"), (init_checkpoint, "--init_checkpoint")):
        record = read_record(source) if source and not is_remote(source) and os.path.isdir(source) else None
        if record is None:
            continue
        if record.runner != command or (model_class and record.model_class != model_class):
            want = RUNNERS[model_class][1] if model_class else RUNNER_HEADS[command]
            raise AlbertError(f"{source}: {flag} is {record.describe()}; it holds no {want} head for {command} to "
                              f"use: pass the --output_dir of a {command} run, or train one from its encoder "
                              f"(--do_train --init_checkpoint={source}, in another --output_dir)")
        return  # the checkpoints read are this run's


def check_tokenizer_given(settings):
    if not settings.spm_model_file and not settings.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")


def check_model_files(albert_config_file: str, max_seq_length: int, spm_model_file: str | None = None,
                      vocab_file: str | None = None, init_checkpoint: str | None = None) -> AlbertConfig:
    """A runner's model files, before any work: the config parses and fits `max_seq_length`, the tokenizer file
    exists, loads and fits the config's vocab_size, and `init_checkpoint` exists and is whole. Returns the config."""
    check_local_files(albert_config_file, spm_model_file, vocab_file)
    config = AlbertConfig.from_json_file(albert_config_file)
    check_weights_fit(config, albert_config_file)
    config.check_sequence_length(max_seq_length, "--max_seq_length", albert_config_file)
    if spm_model_file and not is_remote(spm_model_file):
        pieces, path, name = load_sentencepiece(spm_model_file).get_piece_size(), spm_model_file, "spm_model_file"
    elif vocab_file and not is_remote(vocab_file):
        pieces, path, name = len(load_vocab(vocab_file)), vocab_file, "vocab_file"
    else:
        pieces = None
    if pieces is not None and pieces > config.vocab_size:
        raise AlbertError(f"{path}: --{name} has {pieces} pieces but vocab_size is {config.vocab_size} in "
                          f"{albert_config_file}; pass the tokenizer of this model")
    if init_checkpoint:
        check_checkpoint_path(init_checkpoint, "--init_checkpoint")
    return config


def check_fine_tuning(settings, *inputs: str):
    """What every fine-tuning runner checks once its own checks passed: the length buckets, the model files, the
    ONNX export's extra, and that --export_dir is not, and does not hold, an input of the run (`inputs`: the run's
    data besides its model files and output directory)."""
    s = settings
    vocab_file = getattr(s, "vocab_file", None)
    boundaries(s.max_seq_length, s.length_buckets)  # a malformed value is one line here
    check_task_head(s.COMMAND, s.do_train, s.output_dir, s.init_checkpoint, s.model_class)
    check_model_files(s.albert_config_file, s.max_seq_length, s.spm_model_file, vocab_file, s.init_checkpoint)
    check_onnx_export(s.onnx_export, s.export_dir)
    if s.export_dir:
        outputs.check(s.export_dir, s.export_command, "--export_dir", (s.output_dir, s.albert_config_file,
                                                                      s.spm_model_file, vocab_file,
                                                                      s.init_checkpoint, *inputs))


SPLIT_STEPS = {"train": "do_train", "dev": "do_eval", "test": "do_predict"}  # the step that reads each file


def split_files(settings) -> tuple:
    """(given, read) of a runner that reads --train_file / --dev_file / --test_file: each split's file, and the
    ones its steps read (None where no step reads it); a step without its file is one line."""
    given = {split: getattr(settings, f"{split}_file") for split in SPLIT_STEPS}
    missing = [f"{SPLIT_FLAGS[split]} (for --{step})" for split, step in SPLIT_STEPS.items()
               if getattr(settings, step) and not given[split]]
    if missing:
        raise AlbertError(f"pass {', '.join(missing)}")
    return given, {split: given[split] if getattr(settings, step) else None for split, step in SPLIT_STEPS.items()}

