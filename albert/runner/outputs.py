"""The files every job writes beside its checkpoints: the evaluations so far, and the model files that make an
output directory a release-layout model directory."""

import os

import tensorflow as tf

from albert.ground.atomic import copy_file, write_text
from albert.ground.paths import is_remote
from albert.text.tokenization import vocab_beside
from albert.weights.loader import init_from_checkpoint
from albert.weights.run_record import RunRecord, write_record


def append_eval_results(path: str, results: dict):
    """Add one `key = value` block (sorted keys, global_step among them) to eval_results.txt: the file keeps every
    evaluation of the run, oldest first; it is rewritten whole under a temporary name, so a kill leaves it intact."""
    before = tf.io.gfile.GFile(path).read() if tf.io.gfile.exists(path) else ""
    write_text(path, before + "".join(f"{k} = {results[k]}\n" for k in sorted(results)))


def write_results(path: str, results: dict):
    """predict_results.txt and the like: `key = value` lines, sorted."""
    write_text(path, "".join(f"{k} = {results[k]}\n" for k in sorted(results)))


PREPROCESSING = ("do_lower_case", "max_seq_length", "doc_stride", "max_query_length", "max_answer_length",
                 "n_best_size", "max_qa_length")  # the settings a run's record keeps, where the runner has them


def run_record(settings, model_class: str, task: str, **fields) -> RunRecord:
    """The RunRecord of a fine-tuning run: its task model class, task, `fields` (labels, regression, pair, scheme)
    and the preprocessing settings it trained with (PREPROCESSING, and the tokenizer files' names)."""
    preprocessing = {name: getattr(settings, name) for name in PREPROCESSING if hasattr(settings, name)}
    for name in ("spm_model_file", "vocab_file"):
        path = getattr(settings, name, None)
        preprocessing[name] = os.path.basename(path) if path else None
    return RunRecord(model_class, task, preprocessing=preprocessing, **fields)


def record_model_files(output_dir: str, config, spm_model_file: str | None = None, record: RunRecord | None = None):
    """Make `output_dir` a model directory in the release layout, as `python -m albert.convert`, `export_to_tfhub.py`
    and `from_pretrained` read it: the config the run trained with as `albert_config.json` (the original's keys,
    whatever format it was given in), a copy of the SentencePiece model (and its .vocab) when the run has one, and
    a fine-tuning run's `record` (albert_run.json: its task, labels and preprocessing)."""
    if is_remote(output_dir):
        return
    if record is not None:
        write_record(output_dir, record)
    config.to_json_file(os.path.join(output_dir, "albert_config.json"))
    if spm_model_file and not is_remote(spm_model_file):
        vocab = vocab_beside(spm_model_file)
        for source in (spm_model_file, vocab):
            if source and os.path.isfile(source):
                target = os.path.join(output_dir, os.path.basename(source))
                if os.path.realpath(source) != os.path.realpath(target):
                    copy_file(source, target)


def begin_training(trainer, init_checkpoint: str | None, init_from_group0: bool = False) -> int | None:
    """Before the run writes anything: refuse a checkpoint of another model in the output directory
    (albert.train.run_state.RunState.check_resumable), and warm-start from `init_checkpoint` unless the run resumes
    from its own checkpoint. The step it resumes from, or None. The model files are recorded only once training
    has started (Trainer.train's `on_started`: record_model_files), so a refused run leaves the directory as it
    was."""
    resumed = trainer.state.check_resumable()
    if resumed is None and init_checkpoint:
        print(init_from_checkpoint(trainer.model, init_checkpoint, init_from_group0))
    return resumed
