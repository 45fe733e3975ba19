"""What every command-line entry point shares: a user mistake is one line on stderr and exit status 2."""

import argparse
import math
import os
import sys

from absl import app, flags, logging

from albert.ground import extras, stderr_filter
from albert.ground.cpu import prefer_onednn
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.rundir import BEST_CHECKPOINT, exclusive

INIT_CHECKPOINT_HELP = ("Warm start from any model reference: a checkpoint (original TF1 or ours), a model directory "
                        "(release layout, Hugging Face, keras-hub, TF1 Hub module, Model Garden SavedModel), an "
                        "archive, a model name (albert_base_v2), a Hugging Face id, a TF Hub handle or a URL "
                        "(downloaded once into the cache: docs/weights.md); a model directory also supplies "
                        "--albert_config_file and --spm_model_file when they are not passed.")
HUB_MODULE_HELP = ("The original's flag: a TF Hub module (a handle such as https://tfhub.dev/google/albert_base/3, "
                   "a directory or any model reference) that supplies the weights, the config and the SentencePiece "
                   "model (--albert_config_file and --spm_model_file then optional); with --init_checkpoint too, "
                   "that checkpoint's weights are loaded.")


def program() -> str:
    return sys.argv[0].rsplit("/", 1)[-1]


def parse_flags(argv, known_only: bool = False):
    """absl's flag parsing with this project's error convention: a bad flag is one line and exit status 2 (absl:
    two lines, status 1); --help / --helpfull print the usage and exit 0 (absl: 1). With `known_only`, flags this
    program does not define are left in the returned argv (Beam's pipeline options)."""
    try:
        return flags.FLAGS(argv, known_only=known_only)
    except flags.Error as e:
        print(f"{program()}: error: {' '.join(str(e).split())}; see --help", file=sys.stderr)
        sys.exit(2)
    except SystemExit as e:  # absl's help flags print the usage, then exit 1
        sys.exit(0 if e.code == 1 else e.code)


def run(main, output_dir_flag: str | None = None, pass_unknown: bool = False):
    """`absl.app.run(main)`, turning an AlbertError into `<program>: error: <message>` and exit status 2. With
    `output_dir_flag`, the directory that flag names is held by this run alone (albert.ground.rundir.exclusive); with
    `pass_unknown`, flags the program does not define reach `main` in its argv. TensorFlow, which the command
    lines import only in `main`, then loads with oneDNN's kernels on any x86-64 CPU (albert.ground.cpu)."""
    prefer_onednn()

    def guarded(argv):
        logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO chatter (checkpoint sharding, ...) stays out
        if "progress" in flags.FLAGS and not flags.FLAGS.progress:
            os.environ["ALBERT_NOPROGRESS"] = "1"  # albert.hub.download reads it (and hands it to child processes)
        with stderr_filter.filtered():
            try:
                if output_dir_flag:
                    with exclusive(getattr(flags.FLAGS, output_dir_flag)):
                        return main(argv)
                return main(argv)
            except AlbertError as e:
                print(f"{program()}: error: {e}", file=sys.stderr)
                sys.stderr.flush()
                code = 2
        sys.exit(code)

    app.run(guarded, flags_parser=lambda argv: parse_flags(argv, known_only=pass_unknown))


class ArgumentParser(argparse.ArgumentParser):
    """argparse with this project's error convention: a usage mistake is `<prog>: error: <message>; see --help`,
    one line, exit status 2 (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}; see --help\n")


def require(flags_values: dict):
    """Raise for the first required flag that is unset: {flag name: value}."""
    for name, value in flags_values.items():
        if value is None or value == "":
            raise AlbertError(f"--{name} is required")


def check_probability(name: str, value: float):
    if not 0.0 <= value <= 1.0:
        raise AlbertError(f"--{name} must be a probability in [0, 1], got {value}")


def check_at_least(name: str, value: int, minimum: int, why: str = ""):
    if value < minimum:
        raise AlbertError(f"--{name} must be at least {minimum}, got {value}" + (f" ({why})" if why else ""))


def check_finite(name: str, value: float, minimum: float = 0.0):
    """A float flag that must be a finite number of at least `minimum` (a learning rate: not NaN, not negative)."""
    if not math.isfinite(value) or value < minimum:
        raise AlbertError(f"--{name} must be a finite number of at least {minimum:g}, got {value}")


def check_output_path(flag: str, path: str, inputs: tuple = (), directory: bool = False):
    """Before any work: a local output `path` (a file, or with `directory` a directory, replaced if it exists) can be
    written: it is not an input, not of the other kind, and its parent is a directory that exists or can be made
    and can be written. Remote paths (gs://...) are left to the writer."""
    if not path or is_remote(path):
        return
    real = os.path.realpath(path)
    for source in inputs:
        if source and not is_remote(source) and os.path.realpath(source) == real:
            raise AlbertError(f"--{flag} {path} is an input of this command: write the output elsewhere")
        if directory and source and not is_remote(source) and os.path.realpath(source).startswith(real + os.sep):
            raise AlbertError(f"--{flag} {path} holds {source}, an input of this command, and would be replaced: "
                              "write the output elsewhere")
    if os.path.isdir(path) and not directory:
        raise AlbertError(f"--{flag} {path} is a directory; pass a file name")
    if os.path.exists(path) and not os.path.isdir(path) and directory:
        raise AlbertError(f"--{flag} {path} is a file; pass a directory")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise AlbertError(f"--{flag} {path}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise AlbertError(f"--{flag} {path}: {parent} is not writable")


def check_output_files(flag: str, paths: list, inputs: tuple = ()):
    """check_output_path for each of a comma-separated flag's files, none named twice."""
    seen = set()
    for path in paths:
        key = path if is_remote(path) else os.path.realpath(path)
        if key in seen:
            raise AlbertError(f"--{flag} names {path} twice; give each output once")
        seen.add(key)
        check_output_path(flag, path, inputs)


def define_runtime_flags():
    """The original's TPU flags and this project's distribution, precision, XLA, recomputation, determinism and
    seed flags (the fields of albert.train.settings.Runtime the runners share; each runner defines its own
    checkpoint and loop cadence flags)."""
    flags.DEFINE_bool("use_tpu", False, "Use a TPU (same as --strategy=tpu).")
    flags.DEFINE_string("tpu_name", None, "Cloud TPU name.")
    flags.DEFINE_string("tpu_zone", None, "Cloud TPU zone.")
    flags.DEFINE_string("gcp_project", None, "Cloud project of the TPU.")
    flags.DEFINE_string("master", None, "TPU master address.")
    flags.DEFINE_integer("num_tpu_cores", 8, "Kept for compatibility (the TPU strategy finds its cores).")
    flags.DEFINE_enum("strategy", None, ["one_device", "mirrored", "multi_worker", "tpu"],
                      "Distribution (default: tpu with --use_tpu, mirrored with several GPUs, else one_device).")
    flags.DEFINE_enum("mixed_precision", "fp32", ["fp32", "bf16", "fp16"], "Compute precision.")
    flags.DEFINE_bool("jit_compile", False, "XLA-compile the forward and backward pass.")
    flags.DEFINE_bool("recompute", False, "Keep only each block application's input for the backward pass and "
                      "recompute its activations there: several times less activation memory for about 1/3 more "
                      "compute, the same numbers (python -m albert.info shows the memory). Under --jit_compile on a "
                      "CPU it saves nothing (XLA's buffers measured the same).")
    flags.DEFINE_bool("deterministic", False, "Deterministic ops (tf.config.experimental.enable_op_determinism): a "
                      "rerun gives the same losses, bit for bit, on the same machine; somewhat slower.")
    flags.DEFINE_integer("random_seed", 12345, "Seed of initialisation and input shuffling.")
    define_download_flag()
    flags.DEFINE_integer("log_every_steps", 0, "A progress line (loss, metrics, examples/s, tokens/s, MFU, ETA) "
                         "every this many steps; 0: about every 30 s.")


def define_download_flag():
    """--[no]progress, for the entry points that may download a model (albert.hub)."""
    flags.DEFINE_bool("progress", True, "Show a progress bar (size, rate) while a model is downloaded, when stderr "
                      "is a terminal; --noprogress: never (also ALBERT_NOPROGRESS=1).")


def define_length_flags(training: bool = True):
    """--length_buckets (and, for the fine-tuning runners, --group_by_length): albert.data.buckets."""
    if not training:
        flags.DEFINE_string("length_buckets", "default",
                            "The preprocessor packs a batch to the smallest of these lengths that holds its longest "
                            "text (at most --seq_length), so the encoder computes no more: default (8, 12, 16, 20, 24, "
                            "28, 32, 40, 48, ...: four per doubling), none (always --seq_length, and a model.tflite of "
                            "that fixed length instead of any length), or comma-separated lengths.")
        return
    flags.DEFINE_string("length_buckets", "default",
                        "Cut each batch to the smallest of these lengths that holds its longest example, so padding "
                        "is not computed: default (four per doubling: 8, 12, 16, 20, 24, 28, 32, 40, 48, ..., 384, "
                        "448, 512, up to --max_seq_length), none (pad every example to --max_seq_length, as the "
                        "original; model.tflite then has that fixed length instead of any length), or "
                        "comma-separated lengths. Training keeps the original's batches (the same examples in the "
                        "same order); under default, a step not compiled by XLA (no --jit_compile) cuts each batch to "
                        "its own longest example instead of its bucket; evaluation and prediction group examples by "
                        "length and give results in the original order.")
    flags.DEFINE_bool("group_by_length", False, "Training batches of examples of neighbouring lengths (windows of "
                      "50 batches sorted by length, as Hugging Face's group_by_length, the batches in random order): "
                      "less padding than --length_buckets alone, but other batches than the original's.")


TFLITE_QUANTIZATIONS = ("none", "dynamic_int8", "float16")
TFLITE_METADATA = ("tokenizer", "none")
TFLITE_LENGTHS = ("default", "fixed", "dynamic")


def define_tflite_flag():
    """--tflite_quantization and --tflite_metadata, for the entry points that write a model.tflite."""
    flags.DEFINE_enum("tflite_quantization", "none", list(TFLITE_QUANTIZATIONS), "Post-training quantization of "
                      "the model.tflite written with the export: none (float32), dynamic_int8 (int8 weights) or "
                      "float16.")
    flags.DEFINE_enum("tflite_metadata", "tokenizer", list(TFLITE_METADATA), "TFLite metadata in the "
                      "model.tflite: tokenizer (input roles, the tokenizer -- a SentencePiece model that does the "
                      "original's preprocessing itself -- and the label names, so that MediaPipe Tasks and the TFLite "
                      "Task Library run it on raw text) or none.")
    flags.DEFINE_enum("tflite_length", "default", list(TFLITE_LENGTHS), "The model.tflite's sequence axis: fixed "
                      "(the export's length), dynamic (any length up to it: a caller feeds each batch cut to its "
                      "longest example) or default: fixed for the files whose runtime needs it (the TF Hub "
                      "encoder: MediaPipe TextEmbedder; SQuAD 1.1: the TFLite Task Library's BertQuestionAnswerer) "
                      "and with --length_buckets=none, dynamic otherwise.")


ONNX_EXPORTS = ("none", "float32", "dynamic_int8")


def define_onnx_flag():
    """--onnx_export, for the runners whose --export_dir writes a task model."""
    flags.DEFINE_enum("onnx_export", "none", list(ONNX_EXPORTS), "With --export_dir, also write model.onnx (the "
                      "packed ids -> outputs endpoint, dynamic batch and sequence axes, for ONNX Runtime): float32, "
                      "dynamic_int8 (int8 MatMul weights) or none. Needs pip install '.[onnx]'.")


def check_onnx_export(choice: str, export_dir: str | None):
    """AlbertError unless --onnx_export `choice` is known, has an --export_dir to write into and its packages are
    installed (no TensorFlow needed)."""
    if choice not in ONNX_EXPORTS:
        raise AlbertError(f"--onnx_export {choice!r} is unknown; use one of {', '.join(ONNX_EXPORTS)}")
    if choice != "none" and not export_dir:
        raise AlbertError(f"--onnx_export={choice} writes model.onnx into the export: pass --export_dir")
    if choice != "none":
        extras.require("onnx", f"--onnx_export={choice}", "pass --onnx_export=none")


class SettingsMismatch(Exception):
    """A settings dataclass and the flags of a command line disagree: the program's mistake, never the user's."""


def settings(cls, values, **overrides):
    """A settings dataclass built from flag values: each field from the flag of its name, `overrides` first (a flag
    of another name, e.g. RACE's --num_keep_checkpoint, or a value parsed from one, e.g. --seeds). The field and its
    flag are one setting declared twice (the library takes the dataclass, the command line the flag): a field with
    no flag, or whose default is not its flag's (unless the field says `runner_default`: each runner's flag has its
    own, the original's), raises SettingsMismatch (so a renamed flag cannot silently leave a field at its default);
    check_every_flag_read checks the other way."""
    import dataclasses

    fields = {}
    for field in dataclasses.fields(cls):
        if field.name in overrides:
            fields[field.name] = overrides[field.name]
            continue
        if field.name not in values:
            raise SettingsMismatch(f"{cls.__name__}.{field.name} has no --{field.name} flag in {program()}")
        default = None if field.default is dataclasses.MISSING else field.default
        if values[field.name].default != default and not field.metadata.get("runner_default"):
            raise SettingsMismatch(f"{cls.__name__}.{field.name} defaults to {default!r} but --{field.name} to "
                                   f"{values[field.name].default!r} in {program()}")
        fields[field.name] = values[field.name].value
    return cls(**fields)


def check_every_flag_read(values, classes: tuple, cli_only: tuple = (), module: str | None = None):
    """SettingsMismatch unless every flag of this program (`module`'s, default the main script's: its own and the
    ones it adopts from this module) is a field of one of `classes` or one only the command line reads (`cli_only`:
    checked there, turned into a field's value, or kept for compatibility)."""
    import dataclasses

    known = {field.name for cls in classes for field in dataclasses.fields(cls)} | set(cli_only)
    defined = {flag.name for flag in values.get_key_flags_for_module(module or sys.argv[0])}
    unread = sorted(defined - known)
    if unread:
        raise SettingsMismatch(f"{program()}: --{', --'.join(unread)} set no field of "
                               f"{', '.join(cls.__name__ for cls in classes)}")


def define_model_directory_flags():
    """The flags naming a model directory laid out as the released tarballs (export_to_tfhub.py and
    export_checkpoints.py)."""
    flags.DEFINE_string("albert_directory", None, "Directory with albert_config.json, the SentencePiece model and "
                        "the checkpoint; or a Hugging Face directory (config.json, model.safetensors, spiece.model), "
                        "a keras-hub preset, a TF1 Hub module, a Model Garden SavedModel; or any model reference (a "
                        "name such as albert_base_v2, a Hugging Face id, a TF Hub handle, a URL, an archive: "
                        "downloaded once into the cache).")
    flags.DEFINE_string("checkpoint_name", BEST_CHECKPOINT, "Checkpoint prefix inside --albert_directory.")
    define_download_flag()
    flags.DEFINE_string("spm_model_file", None, "SentencePiece model (default: the one .model file of the "
                        "directory).")
