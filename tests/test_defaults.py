"""Defaults that fit each other (albert/runner/settings.py, albert/ground/settings_flags.py's `derived`): a stride or
a question length left out is derived from --max_seq_length, and refused only when the user set it and it does not
fit; the same defaults for the same things across runners; --num_train_epochs instead of --train_step for a user's
own files (run_classifier.py) and NER, the steps counted from the train file and printed. No TensorFlow here: the
command lines' checks run in a subprocess up to the point where TensorFlow would start."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from absl import flags

from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.runner.preflight import given_settings
from albert.runner.settings import (TRAIN_STEP, epoch_steps, long_warmup, say_long_warmup, warmup_steps,
                                  with_epoch_steps)
from albert.tasks.classification.settings import GlueRun
from albert.tasks.ner.settings import NerRun
from albert.tasks.pretraining.settings import PretrainingRun
from albert.tasks.race.settings import RaceRun
from albert.tasks.squad.settings import SquadRun
from tests.helpers import ROOT

HF = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_pretraining")
NEEDED = dict(output_dir="out", albert_config_file="albert_config.json")


def squad(**given):
    return SquadRun(spm_model_file="spm.model", **NEEDED, **given)


@pytest.mark.parametrize("length,stride,query", [(384, 128, 64), (512, 170, 64), (128, 42, 64), (100, 33, 50),
                                                 (32, 10, 16), (8, 2, 4)])
def test_squad_stride_and_question_length_follow_max_seq_length(length, stride, query):
    s = squad(max_seq_length=length)
    assert (s.doc_stride, s.max_query_length) == (stride, query)
    assert s.max_seq_length > s.max_query_length + 3  # what the features need: the derived values always fit


def test_squad_defaults_are_the_originals_at_the_original_length():
    s = squad()
    assert (s.max_seq_length, s.doc_stride, s.max_query_length) == (384, 128, 64)


def test_squad_values_the_user_gives_are_kept_and_refused_only_when_they_do_not_fit():
    assert (squad(max_seq_length=32, doc_stride=4, max_query_length=8).doc_stride, ) == (4, )
    assert squad(max_seq_length=512, doc_stride=128).doc_stride == 128  # the original's command, unchanged
    with pytest.raises(AlbertError) as refused:
        squad(max_seq_length=32, max_query_length=40)
    assert str(refused.value) == ("--max_seq_length 32 must exceed --max_query_length 40 + 3 (room for [CLS], two "
                                  "[SEP] and the document)")


@pytest.mark.parametrize("length,stride", [(128, 64), (32, 16), (512, 256), (4, 2), (3, 1)])
def test_ner_stride_is_half_the_window(length, stride):
    s = NerRun(**NEEDED, max_seq_length=length)
    assert s.doc_stride == stride and 1 <= s.doc_stride <= length - 2


@pytest.mark.parametrize("length,qa", [(512, 128), (256, 128), (128, 64), (16, 8)])
def test_race_question_length_follows_max_seq_length(length, qa):
    assert RaceRun(data_dir="race", **NEEDED, max_seq_length=length).max_qa_length == qa
    assert RaceRun(data_dir="race", **NEEDED, max_seq_length=length, max_qa_length=5).max_qa_length == 5


def test_the_checks_before_the_model_see_the_derived_values():
    """albert.runner.preflight.given_settings: what a command checks before it resolves a model reference has the
    derived defaults too (run_race.py refuses --max_seq_length <= --max_qa_length + 3 there)."""
    values = flags.FlagValues()
    job = define(RaceRun, values=values)
    values(["run_race.py", "--data_dir=race", "--output_dir=out", f"--albert_config_file={HF}/config.json",
            "--max_seq_length=64"])
    given = given_settings(job, values=values)
    assert (given.max_seq_length, given.max_qa_length) == (64, 32)
    values = flags.FlagValues()
    job = define(NerRun, values=values)
    values(["run_ner.py", "--output_dir=out", f"--albert_config_file={HF}/config.json", "--num_train_epochs=2"])
    assert (given_settings(job, values=values).train_step, given_settings(job, values=values).doc_stride) == (None, 64)
    values(["run_ner.py", "--train_step=3"])
    with pytest.raises(AlbertError, match="^--train_step 3 and --num_train_epochs 2 both set the training length"):
        given_settings(job, values=values)


def test_a_derived_default_comes_through_the_generated_flags():
    values = flags.FlagValues()
    job = define(NerRun, values=values)
    values(["run_ner.py", "--output_dir=out", "--albert_config_file=c.json", "--max_seq_length=32"])
    assert values["doc_stride"].value is None  # not given ...
    assert job.build(values).doc_stride == 16  # ... so derived
    values(["run_ner.py", "--doc_stride=5"])
    assert job.build(values).doc_stride == 5


def test_eval_and_predict_batches_are_the_same_in_every_fine_tuning_runner():
    """8, the original's run_classifier.py, run_squad.py and run_race.py default; run_pretraining.py's eval batch
    is the original's 64 (docs/differences.md)."""
    defaults = {cls.__name__: {f.name: f.default for f in dataclasses.fields(cls)
                               if f.name in ("eval_batch_size", "predict_batch_size")}
                for cls in (GlueRun, SquadRun, RaceRun, NerRun, PretrainingRun)}
    assert defaults == {"GlueRun": {"eval_batch_size": 8, "predict_batch_size": 8},
                        "SquadRun": {"predict_batch_size": 8},
                        "RaceRun": {"eval_batch_size": 8, "predict_batch_size": 8},
                        "NerRun": {"eval_batch_size": 8, "predict_batch_size": 8},
                        "PretrainingRun": {"eval_batch_size": 64}}


def test_steps_from_epochs():
    assert epoch_steps(3, 1234, 32) == (115, "training 3 epochs of 1,234 examples: 115 steps of 32")  # 3702 // 32
    assert epoch_steps(2.5, 10, 4, "rows")[0] == 6  # 25 / 4 = 6.25
    with pytest.raises(AlbertError) as refused:
        epoch_steps(1, 10, 32, "rows")
    assert str(refused.value) == ("--num_train_epochs 1 over 10 rows at --train_batch_size 32 is less than one "
                                  "step: train more epochs, or pass a smaller --train_batch_size")


def test_train_step_default_unless_epochs():
    assert NerRun(**NEEDED).train_step == TRAIN_STEP == 1000
    assert GlueRun(**NEEDED).train_step == 1000
    assert NerRun(**NEEDED, num_train_epochs=2.0).train_step is None  # counted from the train file
    assert GlueRun(**NEEDED, train_step=7).train_step == 7


@pytest.mark.parametrize("cls,given,message", [
    (NerRun, dict(train_step=5, num_train_epochs=2.0),
     "--train_step 5 and --num_train_epochs 2 both set the training length: pass one"),
    (GlueRun, dict(train_step=5, num_train_epochs=0.5),
     "--train_step 5 and --num_train_epochs 0.5 both set the training length: pass one"),
    (GlueRun, dict(task_name="rte", num_train_epochs=3.0),
     "--num_train_epochs counts the rows of your own --train_file; for a GLUE task pass --train_step"),
    (NerRun, dict(num_train_epochs=float("nan")), "--num_train_epochs must be a finite number"),
])
def test_training_length_is_one_setting(cls, given, message):
    with pytest.raises(AlbertError) as refused:
        cls(**NEEDED, **given)
    assert str(refused.value).startswith(message)


def test_with_epoch_steps_sets_the_steps_from_the_count():
    s, line = with_epoch_steps(GlueRun(**NEEDED, do_train=True, num_train_epochs=3.0, train_batch_size=4),
                               lambda: 10, "rows")
    assert (s.train_step, s.num_train_epochs, line) == (7, None, "training 3 epochs of 10 rows: 7 steps of 4")
    s, line = with_epoch_steps(GlueRun(**NEEDED, do_eval=True, num_train_epochs=3.0), lambda: 1 / 0, "rows")
    assert (s.train_step, line) == (TRAIN_STEP, None)  # nothing trained: nothing counted
    given = GlueRun(**NEEDED, do_train=True, train_step=9)
    assert with_epoch_steps(given, lambda: 1 / 0, "rows") == (given, None)


# ------------------------------------------------------------------ warmup
def test_the_originals_warmups_stay_where_the_original_set_them():
    """spec section 2: run_classifier.py --warmup_step 0, run_race.py 1000 (of 12000), run_squad.py
    --warmup_proportion 0.1, run_pretraining.py --num_warmup_steps 3125 (of 125000)."""
    assert warmup_steps(GlueRun(**NEEDED), 1000) == GlueRun(**NEEDED).warmup_step == 0
    assert warmup_steps(RaceRun(data_dir="race", **NEEDED), 12000) == 1000
    assert squad().warmup_proportion == 0.1 and warmup_steps(squad(), 8211) == 821
    assert warmup_steps(PretrainingRun(input_file="x", **NEEDED), 125000) == 3125
    assert [long_warmup(s, steps) for s, steps in ((GlueRun(**NEEDED), 1000), (squad(), 3),
                                                   (RaceRun(data_dir="race", **NEEDED), 12000),
                                                   (PretrainingRun(input_file="x", **NEEDED), 125000))] == [None] * 4


def test_ner_warms_up_over_a_tenth_of_its_steps_unless_warmup_step_is_given():
    """run_ner.py (ours) derives its warmup from the steps as run_squad.py does; its old --warmup_step default of
    100 was all of the quick start's 6 steps (entity F1 0.08). An explicit --warmup_step wins over the proportion."""
    assert (NerRun(**NEEDED).warmup_proportion, NerRun(**NEEDED).warmup_step) == (0.1, None)
    assert [warmup_steps(NerRun(**NEEDED), steps) for steps in (6, 9, 10, 1000, 3001)] == [0, 0, 1, 100, 300]
    assert warmup_steps(NerRun(**NEEDED, warmup_proportion=0.25), 1000) == 250
    assert warmup_steps(NerRun(**NEEDED, warmup_step=30), 6) == 30
    assert warmup_steps(NerRun(**NEEDED, warmup_step=0, warmup_proportion=0.5), 1000) == 0
    assert long_warmup(NerRun(**NEEDED, learning_rate=1e-3), 6) is None


def test_a_warmup_over_half_of_the_steps_is_said_in_one_line(capsys):
    """The flag, the steps and the fix, once, on stdout as training starts; a warmup of half the steps or less
    says nothing."""
    ner = NerRun(**NEEDED, warmup_step=100, learning_rate=1e-4)
    assert long_warmup(ner, 6) == (
        "warning: --warmup_step 100 warms the learning rate up over 100 steps, more than half of this run's 6 "
        "training steps: it stays below --learning_rate 0.0001 for the whole run; pass --warmup_step 0 (a tenth of "
        "the steps) or train more steps")
    assert long_warmup(RaceRun(data_dir="race", **NEEDED, train_step=1500), 1500) == (
        "warning: --warmup_step 1000 warms the learning rate up over 1,000 steps, more than half of this run's "
        "1,500 training steps: it stays below --learning_rate 1e-05 for most of the run; pass --warmup_step 150 (a "
        "tenth of the steps) or train more steps")
    assert long_warmup(squad(warmup_proportion=0.75), 40) == (
        "warning: --warmup_proportion 0.75 warms the learning rate up over 30 steps, more than half of this run's 40 "
        "training steps: it stays below --learning_rate 5e-05 for most of the run; pass --warmup_proportion 0.1 (a "
        "tenth of the steps) or train more steps")
    assert long_warmup(NerRun(**NEEDED, warmup_proportion=0.6), 1000).startswith(
        "warning: --warmup_proportion 0.6 warms the learning rate up over 600 steps, more than half of this run's "
        "1,000 training steps:")
    pretraining = PretrainingRun(input_file="x", **NEEDED, num_train_steps=1000, start_warmup_step=100)
    assert long_warmup(pretraining, 1000) == (  # the steps before --start_warmup_step count: their rate is 0
        "warning: --num_warmup_steps 3125 warms the learning rate up over 3,225 steps, more than half of this run's "
        "1,000 training steps: it stays below --learning_rate 0.00176 for the whole run; pass --num_warmup_steps 100 "
        "(a tenth of the steps) or train more steps")
    assert long_warmup(NerRun(**NEEDED, warmup_step=3), 6) is None  # half: not said
    assert long_warmup(NerRun(**NEEDED, warmup_step=4), 6) is not None
    say_long_warmup(ner, 6)
    say_long_warmup(ner, 200)
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (long_warmup(ner, 6) + "\n", "")


# ------------------------------------------------------------------ the command lines, up to TensorFlow

VALIDATE = """
import sys
from absl import flags
from albert.commands import {command} as command
from albert.ground.settings_flags import define_pending
define_pending(command.__name__)  # as albert.ground.cli.run does
flags.FLAGS(sys.argv)
settings = command.validate()[0]
print("validated", settings.doc_stride if hasattr(settings, "doc_stride") else "-", settings.train_step)
print("tensorflow" in sys.modules)
"""


def validate(command: str, *args, cwd):
    return subprocess.run([sys.executable, "-c", VALIDATE.format(command=command), command, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "train.txt").write_text("".join(f"w{i} O\nParis B-LOC\n\n" for i in range(10)))
    rows = [{"text": f"sentence number {i}", "label": "yes" if i % 2 else "no"} for i in range(10)]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path


def test_run_ner_takes_a_short_max_seq_length_without_a_stride(files):
    """The fixture model has 16 positions: --max_seq_length=16 alone was refused by the default stride of 64."""
    done = validate("run_ner", "--train_file=train.txt", f"--init_checkpoint={HF}", "--output_dir=out",
                    "--do_train", "--max_seq_length=16", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["validated 8 1000", "False"]
    done = validate("run_ner", "--train_file=train.txt", f"--init_checkpoint={HF}", "--output_dir=out",
                    "--do_train", "--max_seq_length=16", "--doc_stride=15", cwd=files)
    assert done.returncode == 1 and done.stderr.strip().splitlines()[-1] == (
        "albert.ground.errors.AlbertError: --doc_stride 15 must be at most --max_seq_length - 2 = 14 (windows would "
        "skip pieces)")


def test_run_classifier_counts_the_steps_of_its_epochs_before_tensorflow(files):
    done = validate("run_classifier", "--train_file=train.jsonl", "--text_a_column=text",
                    f"--init_checkpoint={HF}", "--output_dir=out", "--do_train", "--max_seq_length=16",
                    "--num_train_epochs=3", "--train_batch_size=4", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["training 3 epochs of 10 rows: 7 steps of 4", "validated - 7", "False"]


def test_run_classifier_refuses_both_lengths_before_reading_the_model(files):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "run_classifier.py"), "--train_file=train.jsonl",
                           "--text_a_column=text", "--init_checkpoint=albert_base_v2", "--output_dir=out",
                           "--do_train", "--num_train_epochs=3", "--train_step=10"], cwd=files,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, ALBERT_OFFLINE="1"))
    assert (done.returncode, done.stderr) == (2, "run_classifier.py: error: --train_step 10 and --num_train_epochs 3 "
                                                 "both set the training length: pass one\n")
    assert not os.path.exists(files / "out")


def test_ner_counts_the_training_windows_for_its_epochs(tmp_path, capsys):
    """The job makes the training windows once and counts them: a sentence longer than a window makes several.
    Ten two-word sentences (one window each) and one of 40 words: windows of 6 pieces (8 less [CLS] and [SEP]) one
    every 4 pieces until one reaches the end (as SQuAD's spans): 1 + ceil((pieces - 6) / 4) windows."""
    from albert.tasks.ner import job as ner
    from albert.tasks.ner.examples import ner_task
    from albert.text.tokenization import FullTokenizer
    from albert.train.settings import Runtime

    letters = "abcdefghijklmnopqrstuvwxyzabcdefghijklmn"
    (tmp_path / "train.txt").write_text("".join(f"a{i} O\nb B-LOC\n\n" for i in range(10))
                                        + "".join(f"{c} O\n" for c in letters) + "\n")
    task = ner_task({"train": str(tmp_path / "train.txt")})
    spm = os.path.join(HF, "spiece.model")
    settings = NerRun(output_dir=str(tmp_path / "out"), albert_config_file=os.path.join(HF, "config.json"),
                      spm_model_file=spm, max_seq_length=8, doc_stride=4, do_train=True, num_train_epochs=2.0,
                      train_batch_size=4)
    job = ner.NerFineTuning(settings, Runtime(random_seed=1), task)
    tokenizer = FullTokenizer(None, True, spm)
    pieces = sum(max(1, len(tokenizer.tokenize(c))) for c in letters)  # each word alone; none is empty
    long_windows = 1 + -(-(pieces - 6) // 4)
    assert pieces > 40 and long_windows > 9
    windows = job.features("train")[0]
    assert [sum(1 for w in windows if w.sentence == i) for i in range(11)] == [1] * 10 + [long_windows]
    steps = int((10 + long_windows) * 2 / 4)
    assert job.settings.train_step == steps
    assert capsys.readouterr().out.splitlines()[-1] == (f"training 2 epochs of {10 + long_windows} windows (11 "
                                                        f"sentences): {steps} steps of 4")
    schedule = job.trainer.optimizer.get_config()["learning_rate"]["config"]  # the warmup: a tenth of those steps
    assert (schedule["num_train_steps"], schedule["num_warmup_steps"]) == (steps, steps // 10)


@pytest.mark.slow
def test_a_ner_run_says_its_long_warmup_once_and_prints_its_rate_in_scientific_notation(tmp_path, capsys):
    """An explicit --warmup_step longer than the run: the line on stdout as training starts (once), and the progress
    lines' learning rate is the warmup's (5e-05 x step / 100), in scientific notation."""
    from albert.tasks.ner import job as ner
    from albert.tasks.ner.examples import ner_task
    from albert.train.settings import Runtime

    (tmp_path / "train.txt").write_text("".join(f"a{i} O\nb B-LOC\n\n" for i in range(8)))
    task = ner_task({"train": str(tmp_path / "train.txt")})
    settings = NerRun(output_dir=str(tmp_path / "out"), albert_config_file=os.path.join(HF, "config.json"),
                      spm_model_file=os.path.join(HF, "spiece.model"), max_seq_length=8, do_train=True,
                      train_step=2, warmup_step=100, train_batch_size=4)
    ner.run(settings, Runtime(random_seed=1, log_every_steps=1), task)
    captured = capsys.readouterr()
    assert captured.out.count("warning: ") == 1 and "warning" not in captured.err
    assert ("warning: --warmup_step 100 warms the learning rate up over 100 steps, more than half of this run's 2 "
            "training steps: it stays below --learning_rate 5e-05 for the whole run; pass --warmup_step 0 (a tenth "
            "of the steps) or train more steps\n") in captured.out
    steps = [line for line in captured.out.splitlines() if line.startswith("step ")]
    assert [line.split(" | ")[0].split()[-2:] for line in steps] == [["learning_rate", "5.00e-07"],
                                                                   ["learning_rate", "1.00e-06"]]
