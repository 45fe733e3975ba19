r"""Fine-tune ALBERT for token classification (NER): train, evaluate every checkpoint with conlleval's entity rules
(keeping the best by F1), tag the test set, export a serving model on raw text.

    python run_ner.py --train_file=conll2003/train.txt --dev_file=conll2003/valid.txt \
        --test_file=conll2003/test.txt --output_dir=out/ner --init_checkpoint=albert_base_v2 \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
        --train_step=3000 --warmup_step=300
"""

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.runner.preflight import (check_fine_tuning, check_tokenizer_given, given_settings,
                                     settings_with_model_files, split_files)
from albert.tasks.ner.settings import NerRun
from albert.tasks.ner import examples as ner_data
from albert.tasks.ner.conll import is_cased
from albert.train.settings import Runtime

NER = define(NerRun)
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",))  # whole batches
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the settings, the model files and every sentence of the files; what
    needs no model (nothing to do, the files) before a model reference is resolved, which may download."""
    hub_module = COMMAND_LINE.build().albert_hub_module_handle
    given = given_settings(NER, hub_module)
    if not (given.do_train or given.do_eval or given.do_predict or given.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    given_files, files = split_files(given)
    recorded = ner_data.recorded(given.output_dir)
    if recorded is None and not given.do_train:
        files["train"] = given_files["train"]  # no training run's tags to read: the train file's
    task = ner_data.ner_task(files, given.tag_scheme, given.encoding, given.file_format, recorded)
    s = settings_with_model_files(NER, hub_module)
    check_tokenizer_given(s)
    if s.export_dir and not s.spm_model_file:
        raise AlbertError("--export_dir tokenizes in the graph with SentencePiece: pass --spm_model_file")
    if s.doc_stride > s.max_seq_length - 2:
        raise AlbertError(f"--doc_stride {s.doc_stride} must be at most --max_seq_length - 2 = {s.max_seq_length - 2}"
                          " (windows would skip pieces)")
    runtime = RUNTIME.build()
    check_fine_tuning(s, *task.files.values())
    return s, runtime, task


def main(argv):
    del argv
    settings, runtime, task = validate()
    if settings.do_lower_case and any(is_cased(sentences) for sentences in task.sentences.values()):
        print(f"{cli.program()}: the words are cased and --do_lower_case is on (the released SentencePiece models "
              "lowercase): the model reads them lowercased; case is no feature")
    from albert.tasks.ner import job as ner  # TensorFlow loads here, once the flags are checked

    ner.run(settings, runtime, task)


def command():
    """The command line: `python run_ner.py` and the console script albert-run-ner."""
    cli.run(main, output_dir_flag="output_dir")
