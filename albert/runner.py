"""What the training entry points share: runtime flags, setup, checkpoint bookkeeping, atomic text outputs.

Imported by run_pretraining.py, run_classifier.py and run_race.py; TensorFlow is imported only when a function
runs, so flag parsing and validation stay fast.
"""

import os

from absl import flags

from albert import cli
from albert.atomic import copy_file, write_text  # write_text: the runners' one way to write text outputs
from albert.errors import AlbertError


def define_runtime_flags():
    """The original's TPU flags and this project's distribution, precision, XLA, recomputation, determinism and
    seed flags."""
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
                      "compute, the same numbers (python -m albert.info shows the memory). Under --jit_compile on a CPU it "
                      "saves nothing (XLA's buffers measured the same).")
    flags.DEFINE_bool("deterministic", False, "Deterministic ops (tf.config.experimental.enable_op_determinism): a "
                      "rerun gives the same losses, bit for bit, on the same machine; somewhat slower.")
    flags.DEFINE_integer("random_seed", 12345, "Seed of initialisation and input shuffling.")
    flags.DEFINE_integer("log_every_steps", 0, "A progress line (loss, metrics, examples/s, tokens/s, MFU, ETA) "
                         "every this many steps; 0: about every 30 s.")


def preflight(values):
    """Every runner's checks that need no TensorFlow, run before it starts (a mistake is reported in a second, not
    after TensorFlow's start-up): numeric flags, the config (it parses, fits --max_seq_length), the tokenizer
    files (exist, load, fit the config's vocab_size) and --init_checkpoint (exists, looks like what it claims)."""
    from albert.config import AlbertConfig
    from albert.weights import check_checkpoint_path

    if values.log_every_steps < 0:
        raise AlbertError(f"--log_every_steps must be at least 0 (0: about every 30 s), got {values.log_every_steps}")
    if hasattr(values, "learning_rate"):
        cli.check_finite("learning_rate", values.learning_rate)
    for name in ("albert_config_file", "spm_model_file", "vocab_file"):
        path = getattr(values, name, None)
        if path and "://" not in path and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} " + ("is a directory; pass the file" if os.path.isdir(path) else
                                                      "not found"))
    config = AlbertConfig.from_json_file(values.albert_config_file)
    if values.max_seq_length > config.max_position_embeddings:
        raise AlbertError(f"--max_seq_length {values.max_seq_length} exceeds max_position_embeddings "
                          f"({config.max_position_embeddings}) of {values.albert_config_file}")
    spm, vocab = getattr(values, "spm_model_file", None), getattr(values, "vocab_file", None)
    if spm and "://" not in spm:
        from albert.tokenization import load_sentencepiece

        pieces, path, name = load_sentencepiece(spm).get_piece_size(), spm, "spm_model_file"
    elif vocab and "://" not in vocab:
        from albert.wordpiece import load_vocab

        pieces, path, name = len(load_vocab(vocab)), vocab, "vocab_file"
    else:
        pieces = None
    if pieces is not None and pieces > config.vocab_size:
        raise AlbertError(f"{path}: --{name} has {pieces} pieces but vocab_size is {config.vocab_size} in "
                          f"{values.albert_config_file}; pass the tokenizer of this model")
    if getattr(values, "init_checkpoint", None):
        check_checkpoint_path(values.init_checkpoint, "--init_checkpoint")
    if getattr(values, "export_dir", None):  # replaced whole: it must not be, or hold, an input or the output_dir
        inputs = [getattr(values, name, None) for name in ("output_dir", "albert_config_file", "spm_model_file",
                                                            "vocab_file", "init_checkpoint", "data_dir")]
        cli.check_output_path("export_dir", values.export_dir.rstrip("/"), tuple(inputs), directory=True)
    return config


def setup(values, seed: int | None = None):
    """Config (checked against --max_seq_length), precision policy, strategy and seeds: (config, strategy)."""
    import tensorflow as tf

    from albert.distribute import create_strategy
    from albert.training import set_precision

    config = preflight(values)
    if values.deterministic:
        tf.config.experimental.enable_op_determinism()
    set_precision(values.mixed_precision)
    strategy = create_strategy(values.strategy, values.use_tpu, values.tpu_name, values.tpu_zone,
                               values.gcp_project, values.master)
    tf.keras.utils.set_random_seed(values.random_seed if seed is None else seed)
    return config, strategy


def record_model_files(values, config, output_dir: str):
    """Make `output_dir` a model directory in the release layout, as `python -m albert.convert`, `export_to_tfhub.py`
    and `from_pretrained` read it: the config the run trained with as `albert_config.json` (the original's keys,
    whatever format it was given in) and a copy of the SentencePiece model (and its .vocab) when the run has one."""
    if "://" in output_dir:
        return
    config.to_json_file(os.path.join(output_dir, "albert_config.json"))
    spm = getattr(values, "spm_model_file", None)
    if spm and "://" not in spm:
        for source in (spm, spm[:-len(".model")] + ".vocab" if spm.endswith(".model") else None):
            if source and os.path.isfile(source):
                target = os.path.join(output_dir, os.path.basename(source))
                if os.path.realpath(source) != os.path.realpath(target):
                    copy_file(source, target)


def loop_config(values, config, output_dir: str, num_train_steps: int, keep_checkpoint_max: int,
                micro_batch_size: int | None = None, examples_per_row: int = 1, predictions: int = 0):
    """The training loop's settings from the runtime flags. `examples_per_row`: sequences per example (4 for
    RACE); `predictions`: masked-LM predictions per sequence (pretraining), for the FLOPs of the progress line."""
    from albert.info import forward_flops_per_token
    from albert.training import LoopConfig

    seq = values.max_seq_length
    flops = forward_flops_per_token(config, seq)
    per_sequence = flops["encoder_total"] * seq + flops["mlm_head_per_prediction"] * predictions
    return LoopConfig(
        output_dir=output_dir, num_train_steps=num_train_steps,
        global_batch_size=micro_batch_size or values.train_batch_size, steps_per_loop=values.iterations_per_loop,
        save_checkpoints_steps=values.save_checkpoints_steps, keep_checkpoint_max=keep_checkpoint_max,
        gradient_accumulation_steps=getattr(values, "gradient_accumulation_steps", 1),
        jit_compile=values.jit_compile, recompute=values.recompute, log_every_steps=values.log_every_steps,
        seq_length=seq * examples_per_row,
        flops_per_example=3.0 * per_sequence * examples_per_row)


def append_eval_results(path: str, results: dict):
    """Add one `key = value` block (sorted keys, global_step among them) to eval_results.txt: the file keeps every
    evaluation of the run, oldest first; it is rewritten whole under a temporary name, so a kill leaves it intact."""
    import tensorflow as tf

    before = tf.io.gfile.GFile(path).read() if tf.io.gfile.exists(path) else ""
    write_text(path, before + "".join(f"{k} = {results[k]}\n" for k in sorted(results)))


def checkpoints_on_disk(directory: str) -> list:
    """The `model.ckpt-<step>` prefixes with an .index in `directory`, newest first."""
    import tensorflow as tf

    found = []
    for path in tf.io.gfile.glob(os.path.join(directory, "model.ckpt-*.index")):
        step = path[:-len(".index")].rsplit("-", 1)[1]
        if step.isdigit():
            found.append((int(step), path[:-len(".index")]))
    return [path for _, path in sorted(found, reverse=True)]


def saved_checkpoints(output_dir: str) -> list:
    """(path, step) of every checkpoint the CheckpointManager keeps in output_dir, oldest first."""
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(output_dir)
    if state is None:
        raise AlbertError(f"{output_dir}: no checkpoint to evaluate; train first (--do_train)")
    return [(path, int(path.rsplit("-", 1)[1])) for path in state.all_model_checkpoint_paths]


def record_best(model, output_dir: str, step: int, value: float) -> tuple:
    """Keep model.ckpt-best (original names) and best_trial.txt (`global_step:best_step:best_value`, as the
    original) when `value` beats the best so far. As the original, the best starts at -1 (step 0) and must be
    beaten strictly, so a NaN metric (e.g. Pearson of constant predictions) is never best. Returns
    (best_step, best_value)."""
    from albert.weights import save_original_checkpoint

    path = os.path.join(output_dir, "best_trial.txt")
    best_step, best_value = 0, -1.0
    if os.path.exists(path):
        _, best_step, best_value = open(path).read().split(":")
        best_step, best_value = int(best_step), float(best_value)
    if value > best_value:  # False for NaN
        save_original_checkpoint(model, os.path.join(output_dir, "model.ckpt-best"), global_step=step)
        best_step, best_value = step, value
    write_text(path, f"{step}:{best_step}:{best_value}")
    return best_step, best_value


def prediction_checkpoint(output_dir: str, init_checkpoint: str | None) -> str:
    """model.ckpt-best, else the newest checkpoint, else --init_checkpoint."""
    import tensorflow as tf

    best = os.path.join(output_dir, "model.ckpt-best")
    if tf.io.gfile.exists(best + ".index"):
        return best
    source = tf.train.latest_checkpoint(output_dir) or init_checkpoint
    if not source:
        raise AlbertError(f"{output_dir}: no model.ckpt-best or checkpoint to predict with")
    return source
