"""What every command-line entry point shares: a user mistake is one line on stderr and exit status 2."""

import sys

from absl import app, logging

from albert.errors import AlbertError

INIT_CHECKPOINT_HELP = ("Warm start: an original TF1 checkpoint, one of ours, a Hugging Face directory (or its "
                        "model.safetensors) or a keras-hub preset; a Hugging Face / keras-hub directory also "
                        "supplies --albert_config_file and --spm_model_file when they are not passed.")


def run(main):
    """`absl.app.run(main)`, turning an AlbertError into `<program>: error: <message>` and exit status 2."""

    def guarded(argv):
        logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO chatter (checkpoint sharding, ...) stays out
        try:
            return main(argv)
        except AlbertError as e:
            print(f"{sys.argv[0].rsplit('/', 1)[-1]}: error: {e}", file=sys.stderr)
            sys.exit(2)

    app.run(guarded)


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


def define_model_directory_flags():
    """The flags naming a model directory laid out as the released tarballs (export_to_tfhub.py and
    export_checkpoints.py)."""
    from absl import flags

    flags.DEFINE_string("albert_directory", None, "Directory with albert_config.json, the SentencePiece model and "
                        "the checkpoint; or a Hugging Face directory (config.json, model.safetensors, spiece.model) "
                        "or a keras-hub preset.")
    flags.DEFINE_string("checkpoint_name", "model.ckpt-best", "Checkpoint prefix inside --albert_directory.")
    flags.DEFINE_string("spm_model_file", None, "SentencePiece model (default: the one .model file of the "
                        "directory).")


def model_files_from_init_checkpoint(values):
    """A Hugging Face or keras-hub directory given as --init_checkpoint supplies --albert_config_file (its
    config.json) and --spm_model_file (spiece.model / assets/tokenizer/vocabulary.spm) when they are not passed."""
    from albert.weights import default_model_files

    found = default_model_files(getattr(values, "init_checkpoint", None))
    if found and not values.albert_config_file:
        values.albert_config_file = found["config"]
    if found.get("spm_model") and hasattr(values, "spm_model_file") and not values.spm_model_file \
            and not getattr(values, "vocab_file", None):
        values.spm_model_file = found["spm_model"]
