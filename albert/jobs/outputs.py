"""The files every job writes beside its checkpoints: the evaluations so far, and the model files that make an
output directory a release-layout model directory."""

import os

import tensorflow as tf

from albert.atomic import copy_file, write_text
from albert.weights.loader import init_from_checkpoint


def append_eval_results(path: str, results: dict):
    """Add one `key = value` block (sorted keys, global_step among them) to eval_results.txt: the file keeps every
    evaluation of the run, oldest first; it is rewritten whole under a temporary name, so a kill leaves it intact."""
    before = tf.io.gfile.GFile(path).read() if tf.io.gfile.exists(path) else ""
    write_text(path, before + "".join(f"{k} = {results[k]}\n" for k in sorted(results)))


def write_results(path: str, results: dict):
    """predict_results.txt and the like: `key = value` lines, sorted."""
    write_text(path, "".join(f"{k} = {results[k]}\n" for k in sorted(results)))


def record_model_files(output_dir: str, config, spm_model_file: str | None = None):
    """Make `output_dir` a model directory in the release layout, as `python -m albert.convert`, `export_to_tfhub.py`
    and `from_pretrained` read it: the config the run trained with as `albert_config.json` (the original's keys,
    whatever format it was given in) and a copy of the SentencePiece model (and its .vocab) when the run has one."""
    if "://" in output_dir:
        return
    config.to_json_file(os.path.join(output_dir, "albert_config.json"))
    if spm_model_file and "://" not in spm_model_file:
        vocab = spm_model_file[:-len(".model")] + ".vocab" if spm_model_file.endswith(".model") else None
        for source in (spm_model_file, vocab):
            if source and os.path.isfile(source):
                target = os.path.join(output_dir, os.path.basename(source))
                if os.path.realpath(source) != os.path.realpath(target):
                    copy_file(source, target)


def begin_training(model, output_dir: str, init_checkpoint: str | None, config, spm_model_file: str | None = None,
                   init_from_group0: bool = False):
    """Before the first step: warm-start from `init_checkpoint` unless the run resumes from its own checkpoint in
    `output_dir`, and record the model files there (record_model_files)."""
    if tf.train.latest_checkpoint(output_dir) is None and init_checkpoint:
        print(init_from_checkpoint(model, init_checkpoint, init_from_group0))
    record_model_files(output_dir, config, spm_model_file)
