"""Every command line, given what a careless user gives it: exit status 2, exactly one line on stderr
(`<program>: error: ...`) naming the flag or file at fault, and the output location left as it was.

One table, every entry point. Most mistakes are caught before TensorFlow starts (a second each); those found in
the data (records, TSV rows, checkpoints) come after, still as one line (albert/stderr_filter.py keeps
TensorFlow's native start-up lines off stderr). The cases run two at a time.
"""

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import ROOT

HF = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_pretraining")
KH = os.path.join(ROOT, "tests", "fixtures", "weights", "kh_backbone")
TF1 = os.path.join(ROOT, "tests", "fixtures", "e_lt_h_shared")

SCRIPTS = {"pt": ["run_pretraining.py"], "cl": ["run_classifier.py"], "sq": ["run_squad.py"], "ra": ["run_race.py"],
           "cp": ["create_pretraining_data.py"], "hub": ["export_to_tfhub.py"], "ec": ["export_checkpoints.py"],
           "cv": ["-m", "albert.convert"], "spm": ["-m", "albert.train_spm"], "info": ["-m", "albert.info"],
           "se": ["-m", "albert.tasks.squad_eval"], "cls": ["tools/classify.py"]}

# Arguments every case of an entry point starts from (a case's own arguments come after and override them).
BASE = {
    "pt": ["--input_file={records}", "--output_dir={out}", "--albert_config_file={hf}/config.json",
           "--max_seq_length=16", "--max_predictions_per_seq=2", "--train_batch_size=2", "--num_train_steps=1",
           "--num_warmup_steps=0", "--save_checkpoints_steps=1"],
    "cl": ["--task_name=rte", "--data_dir={w}/glue", "--output_dir={out}", "--init_checkpoint={hf}",
           "--max_seq_length=16", "--do_train", "--train_step=1", "--save_checkpoints_steps=1"],
    "sq": ["--init_checkpoint={hf}", "--output_dir={out}", "--do_predict", "--predict_file={w}/squad.json",
           "--max_seq_length=16", "--doc_stride=4", "--max_query_length=4"],
    "ra": ["--data_dir={w}/race", "--init_checkpoint={hf}", "--output_dir={out}", "--max_seq_length=16",
           "--max_qa_length=8", "--train_step=1", "--do_eval=false"],
    "cp": ["--input_file={w}/corpus.txt", "--output_file={out}/a.tfrecord", "--spm_model_file={hf}/spiece.model",
           "--max_seq_length=16", "--max_predictions_per_seq=2", "--dupe_factor=1"],
    "hub": ["--albert_directory={hf}", "--export_path={out}/hub"],
    "ec": ["--albert_directory={hf}", "--export_path={out}/model.ckpt-best"],
    "cv": ["--input={hf}", "--output={out}/converted", "--to=release"],
    "spm": ["--input_file={w}/corpus.txt", "--model_prefix={out}/sp", "--vocab_size=100"],
    "info": [], "se": [], "cls": [],
}

CASES = [
    # ---------------------------------------------------------------- run_pretraining.py
    ("pt", ["--input_file="], "--input_file is required"),
    ("pt", ["--output_dir="], "--output_dir is required"),
    ("pt", ["--albert_config_file="], "--albert_config_file is required"),
    ("pt", ["--albert_config_file={w}/missing.json"], "{w}/missing.json: --albert_config_file not found"),
    ("pt", ["--albert_config_file={w}"], "{w}: --albert_config_file is a directory"),
    ("pt", ["--albert_config_file={w}/latin1.json"], "{w}/latin1.json:3: byte 0xe9"),
    ("pt", ["--albert_config_file={w}/broken.json"], "{w}/broken.json: line 1 column 19: invalid JSON"),
    ("pt", ["--albert_config_file={w}/nan_init.json"], "`initializer_range` must be a positive finite number"),
    ("pt", ["--albert_config_file={w}/swish.json"], "`hidden_act` 'swish' is not implemented"),
    ("pt", ["--albert_config_file={w}/heads.json"], "must be divisible by `num_attention_heads`"),
    ("pt", ["--albert_config_file={w}/list.json"], "{w}/list.json"),
    ("pt", ["--learning_rate=-1"], "--learning_rate must be a finite number of at least 0, got -1.0"),
    ("pt", ["--learning_rate=nan"], "--learning_rate must be a finite number of at least 0, got nan"),
    ("pt", ["--learning_rate=inf"], "--learning_rate must be a finite number of at least 0, got inf"),
    ("pt", ["--learning_rate=fast"], "--learning_rate"),
    ("pt", ["--train_batch_size=0"], "--train_batch_size must be at least 1, got 0"),
    ("pt", ["--num_train_steps=0"], "--num_train_steps must be at least 1, got 0"),
    ("pt", ["--num_warmup_steps=-1"], "--num_warmup_steps must be at least 0, got -1"),
    ("pt", ["--save_checkpoints_steps=0"], "--save_checkpoints_steps must be at least 1"),
    ("pt", ["--keep_checkpoint_max=0"], "--keep_checkpoint_max must be at least 1"),
    ("pt", ["--iterations_per_loop=0"], "--iterations_per_loop must be at least 1"),
    ("pt", ["--gradient_accumulation_steps=0"], "--gradient_accumulation_steps must be at least 1"),
    ("pt", ["--max_seq_length=0"], "--max_seq_length must be at least 1"),
    ("pt", ["--max_seq_length=32"], "--max_seq_length 32 exceeds max_position_embeddings (16)"),
    ("pt", ["--log_every_steps=-5"], "--log_every_steps must be at least 0"),
    ("pt", ["--optimizer=sgd"], "--optimizer"),
    ("pt", ["--strategy=gpu"], "--strategy"),
    ("pt", ["--mixed_precision=fp8"], "--mixed_precision"),
    ("pt", ["--no_such_flag=1"], "no_such_flag"),
    ("pt", ["--do_train=false"], "nothing to do"),
    ("pt", ["--masked_lm_budget=0.5"], "--masked_lm_budget"),
    ("pt", ["--init_checkpoint={w}/nothing/model.ckpt"], "{w}/nothing/model.ckpt: --init_checkpoint not found"),
    ("pt", ["--init_checkpoint={w}/garbage/model.ckpt"], "{w}/garbage/model.ckpt.index: not a TensorFlow checkpoint"),
    ("pt", ["--init_checkpoint={w}/nodata/model.ckpt"], "data file(s) (model.ckpt.data-*) missing"),
    ("pt", ["--init_checkpoint={w}/stale"], "{w}/stale/model.ckpt-9: --init_checkpoint not found"),
    ("pt", ["--init_checkpoint={w}/emptydir"], "{w}/emptydir: --init_checkpoint is a directory with no checkpoint"),
    ("pt", ["--init_checkpoint={w}/notes.txt"], "{w}/notes.txt: --init_checkpoint not found"),
    ("pt", ["--init_checkpoint={w}/missing.safetensors"], "{w}/missing.safetensors: --init_checkpoint not found"),
    ("pt", ["--input_file={w}/nothing-*.tfrecord"], "{w}/nothing-*.tfrecord: no TFRecord file matches; check "
                                                    "--input_file"),
    ("pt", ["--strategy=tpu"], "--strategy tpu needs a TPU: pass --tpu_name (or --master), or use --strategy "
                               "one_device / mirrored / multi_worker"),
    ("pt", ["--strategy=multi_worker"], "--strategy multi_worker needs the TF_CONFIG environment variable"),
    ("pt", ["--train_batch_size=6", "--gradient_accumulation_steps=4"],
     "--train_batch_size 6 must divide evenly over 1 replica(s) x 4 accumulation step(s)"),
    ("pt", ["--input_file={w}/empty.tfrecord"], "{w}/empty.tfrecord"),
    ("pt", ["--input_file={w}/corpus.txt"], "{w}/corpus.txt"),
    ("pt", ["--input_file={w}/truncated.tfrecord"], "{w}/truncated.tfrecord"),
    ("pt", ["--max_seq_length=12"], "--max_seq_length"),
    ("pt", ["--max_predictions_per_seq=3"], "--max_predictions_per_seq"),
    ("pt", ["--albert_config_file={w}/small_vocab.json"], "vocab_size"),
    ("pt", ["--output_dir={w}/notes.txt"], "{w}/notes.txt: --output_dir is a file"),
    ("pt", ["--output_dir={w}/notes.txt/sub"], "{w}/notes.txt/sub: cannot write to --output_dir"),
    ("pt", ["--output_dir={w}/readonly/sub"], "{w}/readonly/sub: cannot write to --output_dir"),
    # ---------------------------------------------------------------- run_classifier.py
    ("cl", ["--task_name="], "--task_name is required"),
    ("cl", ["--task_name=glu"], "unknown --task_name 'glu'"),
    ("cl", ["--data_dir={w}/nowhere"], "{w}/nowhere: --data_dir not found"),
    ("cl", ["--data_dir={w}"], "{w}/RTE/train.tsv: file not found; --data_dir must hold RTE/train.tsv"),
    ("cl", ["--do_train=false"], "nothing to do"),
    ("cl", ["--max_seq_length=32"], "--max_seq_length 32 exceeds max_position_embeddings (16)"),
    ("cl", ["--max_seq_length=0"], "--max_seq_length must be at least 1"),
    ("cl", ["--train_batch_size=-2"], "--train_batch_size must be at least 1"),
    ("cl", ["--learning_rate=-3e-5"], "--learning_rate must be a finite number"),
    ("cl", ["--learning_rate=nan"], "--learning_rate must be a finite number"),
    ("cl", ["--seeds=1,x", "--do_eval"], "--seeds must be comma-separated integers"),
    ("cl", ["--seeds=1,2"], "--seeds compares dev results: pass --do_eval"),
    ("cl", ["--export_dir={out}/serving", "--init_checkpoint={TF1}/model.ckpt",
            "--albert_config_file={TF1}/albert_config.json", "--vocab_file={w}/vocab.txt"], "--export_dir"),
    ("cl", ["--spm_model_file={w}/missing.model"], "{w}/missing.model: --spm_model_file not found"),
    ("cl", ["--spm_model_file={w}"], "{w}: --spm_model_file is a directory"),
    ("cl", ["--spm_model_file={w}/notes.txt"], "{w}/notes.txt"),
    ("cl", ["--spm_model_file=", "--vocab_file={w}/latin1_vocab.txt"], "{w}/latin1_vocab.txt:2"),
    ("cl", ["--spm_model_file=", "--vocab_file={w}/big_vocab.txt"], "{w}/big_vocab.txt: --vocab_file has 100 pieces"),
    ("cl", ["--albert_config_file={w}/latin1.json"], "{w}/latin1.json:3"),
    ("cl", ["--albert_config_file={w}"], "{w}: --albert_config_file is a directory"),
    ("cl", ["--init_checkpoint={w}/garbage/model.ckpt", "--albert_config_file={hf}/config.json",
            "--spm_model_file={hf}/spiece.model"], "not a TensorFlow checkpoint"),
    ("cl", ["--data_dir={w}/glue_latin1"], "{w}/glue_latin1/RTE/train.tsv:3: byte 0xe9"),
    ("cl", ["--data_dir={w}/glue_header_only"], "{w}/glue_header_only/RTE/train.tsv: no examples"),
    ("cl", ["--data_dir={w}/glue_bad_label"], "{w}/glue_bad_label/RTE/train.tsv:2: unknown label 'maybe'"),
    ("cl", ["--data_dir={w}/glue_short_row"], "{w}/glue_short_row/RTE/train.tsv:3"),
    ("cl", ["--task_name=ax"], "task ax is predict-only"),
    ("cl", ["--output_dir={w}/notes.txt"], "{w}/notes.txt: --output_dir is a file"),
    ("cl", ["--optimizer=adam"], "--optimizer"),
    ("cl", ["--train_step=x"], "--train_step"),
    ("cl", ["--strategy=multi"], "--strategy"),
    ("cl", ["--tflite_quantization=int4"], "--tflite_quantization=int4: value should be one of"),
    ("cl", ["--export_dir={out}"], "--export_dir {out} is an input of this command"),
    # ---------------------------------------------------------------- run_squad.py
    ("sq", ["--output_dir="], "--output_dir is required"),
    ("sq", ["--do_predict=false"], "nothing to do"),
    ("sq", ["--do_train"], "--do_train needs --train_file"),
    ("sq", ["--predict_file="], "--do_predict needs --predict_file"),
    ("sq", ["--predict_file={w}/missing.json"], "{w}/missing.json: --predict_file not found"),
    ("sq", ["--predict_file={w}/latin1.json"], "{w}/latin1.json:3"),
    ("sq", ["--predict_file={w}/broken.json"], "{w}/broken.json: malformed JSON at line 1"),
    ("sq", ["--predict_file={w}/list.json"], "{w}/list.json: not a SQuAD file"),
    ("sq", ["--spm_model_file=", "--init_checkpoint={TF1}/model.ckpt",
            "--albert_config_file={TF1}/albert_config.json"], "--spm_model_file is required"),
    ("sq", ["--albert_hub_module_handle=https://tfhub.dev/x"], "--albert_hub_module_handle is not supported"),
    ("sq", ["--max_seq_length=32"], "--max_seq_length 32 exceeds max_position_embeddings (16)"),
    ("sq", ["--doc_stride=0"], "--doc_stride"),
    ("sq", ["--max_query_length=0"], "--max_query_length must be at least 1"),
    ("sq", ["--n_best_size=0"], "--n_best_size must be at least 1"),
    ("sq", ["--max_answer_length=0"], "--max_answer_length must be at least 1"),
    ("sq", ["--warmup_proportion=1.5"], "--warmup_proportion must be a probability"),
    ("sq", ["--dropout_prob=-0.1"], "--dropout_prob must be a probability"),
    ("sq", ["--learning_rate=nan"], "--learning_rate must be a finite number"),
    ("sq", ["--predict_batch_size=0"], "--predict_batch_size must be at least 1"),
    ("sq", ["--albert_config_file={w}/latin1.json"], "{w}/latin1.json:3"),
    ("sq", ["--output_dir={w}/notes.txt"], "{w}/notes.txt: --output_dir is a file"),
    ("sq", ["--export_dir={w}/hf_copy", "--init_checkpoint={w}/hf_copy"], "--export_dir {w}/hf_copy holds {w}/hf_copy/"),
    ("sq", ["--init_checkpoint={w}/garbage/model.ckpt", "--albert_config_file={hf}/config.json",
            "--spm_model_file={hf}/spiece.model"], "not a TensorFlow checkpoint"),
    ("sq", ["--do_train", "--train_file={w}/squad.json", "--num_train_epochs=nan"], "--num_train_epochs must be"),
    ("sq", ["--do_train", "--train_file={w}/squad.json", "--num_train_epochs=-2"], "--num_train_epochs must be"),
    ("sq", ["--do_train", "--train_file={w}/squad.json"], "makes no training step"),
    # ---------------------------------------------------------------- run_race.py
    ("ra", ["--data_dir="], "--data_dir is required"),
    ("ra", ["--task_name=mnli"], "run_race.py only runs race"),
    ("ra", ["--high_only", "--middle_only"], "--high_only and --middle_only exclude each other"),
    ("ra", ["--do_train=false", "--do_eval=false"], "nothing to do"),
    ("ra", ["--max_seq_length=8", "--max_qa_length=8"], "--max_seq_length 8 leaves no room"),
    ("ra", ["--max_seq_length=64"], "--max_seq_length 64 exceeds max_position_embeddings (16)"),
    ("ra", ["--learning_rate=-1"], "--learning_rate must be a finite number"),
    ("ra", ["--num_keep_checkpoint=0"], "--num_keep_checkpoint must be at least 1"),
    ("ra", ["--data_dir={w}/nowhere"], "{w}/nowhere/RACE/train/middle: not found"),
    ("ra", ["--data_dir={w}/race_latin1"], "{w}/race_latin1/RACE/train/middle/all.txt:1: byte 0xe9"),
    ("ra", ["--data_dir={w}/race_three_options"], "has 3 options; RACE needs 4"),
    ("ra", ["--data_dir={w}/race_bad_answer"], "has answer 'E'"),
    ("ra", ["--data_dir={w}/race_missing_answer"], "has 2 questions, 2 option lists and 1 answers"),
    ("ra", ["--data_dir={w}/race_broken_json"], "{w}/race_broken_json/RACE/train/middle/all.txt:2: malformed JSON"),
    ("ra", ["--data_dir={w}/race_no_keys"], "an article needs id, article, questions, options and answers"),
    ("ra", ["--output_dir={w}/notes.txt"], "{w}/notes.txt: --output_dir is a file"),
    ("ra", ["--albert_config_file={w}"], "{w}: --albert_config_file is a directory"),
    ("ra", ["--export_dir={w}"], "--export_dir {w} holds"),
    ("ra", ["--export_dir={w}/notes.txt"], "--export_dir {w}/notes.txt is a file; pass a directory"),
    # ---------------------------------------------------------------- create_pretraining_data.py
    ("cp", ["--input_file="], "--input_file is required"),
    ("cp", ["--output_file="], "--output_file is required"),
    ("cp", ["--spm_model_file="], "--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required"),
    ("cp", ["--input_file={w}/missing.txt"], "{w}/missing.txt"),
    ("cp", ["--input_file={w}/nothing-*.txt"], "{w}/nothing-*.txt"),
    ("cp", ["--input_file={w}/latin1_corpus.txt"], "{w}/latin1_corpus.txt:2"),
    ("cp", ["--input_file={w}/blank.txt"], "{w}/blank.txt: no documents"),
    ("cp", ["--input_file={w}/one_sentence.txt"], "{w}/one_sentence.txt: one document of 1 sentence(s)"),
    ("cp", ["--input_file={w}/one_sentence.txt", "--random_next_sentence"], "{w}/one_sentence.txt: one document"),
    ("cp", ["--output_file={w}/corpus.txt", "--input_file={w}/corpus.txt"], "--output_file {w}/corpus.txt is an input"),
    ("cp", ["--output_file={out}/a.tfrecord,{out}/a.tfrecord"], "--output_file names {out}/a.tfrecord twice"),
    ("cp", ["--output_file={w}"], "--output_file {w} is a directory"),
    ("cp", ["--output_file={w}/notes.txt/a.tfrecord"], "{w}/notes.txt is a file, not a directory"),
    ("cp", ["--output_file={w}/readonly/a.tfrecord"], "{w}/readonly is not writable"),
    ("cp", ["--max_seq_length=4"], "--max_seq_length must be at least 5"),
    ("cp", ["--max_predictions_per_seq=0"], "--max_predictions_per_seq must be at least 1"),
    ("cp", ["--max_predictions_per_seq=200"], "--max_predictions_per_seq 200 exceeds"),
    ("cp", ["--masked_lm_prob=1.5"], "--masked_lm_prob must be a probability"),
    ("cp", ["--masked_lm_prob=nan"], "--masked_lm_prob must be a probability"),
    ("cp", ["--short_seq_prob=-0.1"], "--short_seq_prob must be a probability"),
    ("cp", ["--dupe_factor=0"], "--dupe_factor must be at least 1"),
    ("cp", ["--ngram=0"], "--ngram must be at least 1"),
    ("cp", ["--num_workers=0"], "--num_workers must be at least 1"),
    ("cp", ["--input_file_mode=w"], "--input_file_mode must be r or rb"),
    ("cp", ["--spm_model_file={w}/missing.model"], "{w}/missing.model"),
    ("cp", ["--spm_model_file={w}/notes.txt"], "{w}/notes.txt"),
    ("cp", ["--spm_model_file=", "--vocab_file={w}/missing_vocab.txt"], "{w}/missing_vocab.txt"),
    ("cp", ["--dupe_factor=many"], "--dupe_factor"),
    # ---------------------------------------------------------------- export_to_tfhub.py
    ("hub", ["--albert_directory="], "--albert_directory is required"),
    ("hub", ["--export_path="], "--export_path is required"),
    ("hub", ["--albert_directory={w}/nowhere"], "{w}/nowhere"),
    ("hub", ["--albert_directory={w}/emptydir"], "{w}/emptydir"),
    ("hub", ["--albert_directory={w}/release_no_ckpt"], "{w}/release_no_ckpt/model.ckpt-best.index"),
    ("hub", ["--albert_directory={w}/release_no_spm"], "{w}/release_no_spm"),
    ("hub", ["--albert_directory={w}/release_latin1"], "{w}/release_latin1/albert_config.json:3: byte 0xe9"),
    ("hub", ["--seq_length=64"], "--seq_length 64 exceeds max_position_embeddings"),
    ("hub", ["--seq_length=0"], "--seq_length"),
    ("hub", ["--export_path={w}/notes.txt"], "{w}/notes.txt"),
    ("hub", ["--export_path={w}/hf_copy", "--albert_directory={w}/hf_copy"], "{w}/hf_copy is an input"),
    ("hub", ["--export_path={w}", "--albert_directory={w}/hf_copy"], "--export_path {w} holds {w}/hf_copy"),
    ("hub", ["--export_path={w}/readonly/hub"], "{w}/readonly is not writable"),
    ("hub", ["--spm_model_file={w}/missing.model"], "{w}/missing.model"),
    ("hub", ["--checkpoint_name=model.ckpt-7", "--albert_directory={w}/release_no_ckpt"], "model.ckpt-7"),
    # ---------------------------------------------------------------- export_checkpoints.py
    ("ec", ["--albert_directory="], "--albert_directory is required"),
    ("ec", ["--export_path="], "--export_path is required"),
    ("ec", ["--albert_directory={w}/nowhere"], "{w}/nowhere"),
    ("ec", ["--albert_directory={w}/release_no_ckpt"], "{w}/release_no_ckpt/model.ckpt-best.index"),
    ("ec", ["--export_path={w}"], "--export_path {w} is a directory"),
    ("ec", ["--export_path={w}/notes.txt/model.ckpt"], "{w}/notes.txt is a file"),
    ("ec", ["--export_path={w}/readonly/model.ckpt"], "{w}/readonly is not writable"),
    # ---------------------------------------------------------------- python -m albert.convert
    ("cv", ["--input="], "--input is required"),
    ("cv", ["--output="], "--output is required"),
    ("cv", ["--to=onnx"], "--to"),
    ("cv", ["--input={w}/nowhere"], "{w}/nowhere: --input not found"),
    ("cv", ["--input={w}/emptydir"], "{w}/emptydir"),
    ("cv", ["--output={w}/hf_copy", "--input={w}/hf_copy"], "is an input"),
    ("cv", ["--output={w}", "--input={w}/hf_copy"], "--output {w} holds {w}/hf_copy"),
    ("cv", ["--output={w}/notes.txt"], "{w}/notes.txt"),
    ("cv", ["--output={w}/readonly/conv"], "{w}/readonly is not writable"),
    ("cv", ["--architecture=AlbertForEverything", "--to=huggingface"], "--architecture AlbertForEverything"),
    ("cv", ["--input={w}/release_no_ckpt"], "{w}/release_no_ckpt/model.ckpt-best.index"),
    ("cv", ["--input={w}/hf_no_weights"], "{w}/hf_no_weights"),
    ("cv", ["--input={w}/hf_latin1"], "{w}/hf_latin1/config.json:3"),
    # ---------------------------------------------------------------- python -m albert.train_spm
    ("spm", ["--input_file="], "--input_file is required"),
    ("spm", ["--model_prefix="], "--model_prefix is required"),
    ("spm", ["--vocab_size=10"], "--vocab_size must be at least 14"),
    ("spm", ["--input_file={w}/missing.txt"], "{w}/missing.txt"),
    ("spm", ["--input_file={w}/blank.txt"], "{w}/blank.txt: no text to train on"),
    ("spm", ["--input_file={w}/latin1_corpus.txt"], "{w}/latin1_corpus.txt:2"),
    ("spm", ["--model_prefix={w}/notes.txt/sp"], "{w}/notes.txt is a file"),
    ("spm", ["--model_prefix={w}/readonly/sp"], "{w}/readonly is not writable"),
    ("spm", ["--model_prefix={w}/"], "--model_prefix {w}/ ends in a directory"),
    ("spm", ["--input_file={w}/emptydir"], "{w}/emptydir"),
    ("spm", ["--vocab_size=100000"], "--vocab_size 100000: SentencePiece training failed"),
    # ---------------------------------------------------------------- python -m albert.info
    ("info", [], "one of the arguments --albert_config_file --preset is required"),
    ("info", ["--preset=base"], "--preset: invalid choice: 'base'"),
    ("info", ["--preset=base_v2", "--seq_length=1024"], "--seq_length 1024 exceeds max_position_embeddings (512)"),
    ("info", ["--preset=base_v2", "--batch_size=0"], "--batch_size and --seq_length must be positive"),
    ("info", ["--preset=base_v2", "--batch_size=x"], "--batch_size: invalid int value: 'x'"),
    ("info", ["--albert_config_file={w}/missing.json"], "{w}/missing.json: config file not found"),
    ("info", ["--albert_config_file={w}"], "{w}: is a directory"),
    ("info", ["--albert_config_file={w}/latin1.json"], "{w}/latin1.json:3"),
    ("info", ["--albert_config_file={w}/nan_init.json"], "`initializer_range`"),
    ("info", ["--preset=base_v2", "--precision=fp64"], "--precision: invalid choice"),
    # ---------------------------------------------------------------- python -m albert.tasks.squad_eval
    ("se", [], "the following arguments are required: data_file, pred_file"),
    ("se", ["{w}/missing.json", "{w}/preds.json"], "{w}/missing.json: SQuAD data not found"),
    ("se", ["{w}/squad.json", "{w}/missing.json"], "{w}/missing.json: predictions not found"),
    ("se", ["{w}/squad.json", "{w}/list.json"], "{w}/list.json: the predictions must be a JSON object, not a list"),
    ("se", ["{w}/list.json", "{w}/preds.json"], "{w}/list.json: the SQuAD data must be a JSON object"),
    ("se", ["{w}/squad.json", "{w}/broken.json"], "{w}/broken.json: malformed JSON at line 1"),
    ("se", ["{w}/squad.json", "{w}/latin1.json"], "{w}/latin1.json:3: byte 0xe9"),
    ("se", ["{w}/squad.json", "{w}"], "{w}: is a directory"),
    ("se", ["{w}/squad.json", "{w}/preds_numbers.json"], "{w}/preds_numbers.json: the prediction for 'q0' is not"),
    ("se", ["{w}/squad.json", "{w}/preds.json", "--na-prob-file={w}/na_text.json"], "{w}/na_text.json"),
    ("se", ["{w}/squad.json", "{w}/preds.json", "--na-prob-thresh=x"], "--na-prob-thresh"),
    ("se", ["{w}/squad.json", "{w}/preds.json", "--out-file={w}/preds.json"], "--out-file {w}/preds.json is an input"),
    ("se", ["{w}/squad.json", "{w}/preds.json", "--out-file={w}"], "--out-file {w} is a directory"),
    ("se", ["{w}/corpus.txt", "{w}/preds.json"], "{w}/corpus.txt: malformed JSON"),
    # ---------------------------------------------------------------- tools/classify.py
    ("cls", [], "the following arguments are required: export_dir, text_a"),
    ("cls", ["{w}/nowhere", "a sentence"], "{w}/nowhere: not a SavedModel directory"),
    ("cls", ["{w}/fake_saved_model", "a sentence"], "{w}/fake_saved_model: cannot load the SavedModel"),
]


# Root writes into a read-only directory: those cases can only fail as another user.
if os.geteuid() == 0:
    CASES = [case for case in CASES if not any("{w}/readonly" in a for a in case[1])]


def write(path, content, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(content)


@pytest.fixture(scope="module")
def world(tmp_path_factory, corpus_dir):
    """The good and bad files the cases name (`{w}/...`)."""
    w = tmp_path_factory.mktemp("bad_inputs")
    j = lambda d: json.dumps(d, indent=1)  # noqa: E731
    hf_config = json.load(open(os.path.join(HF, "config.json")))
    write(f"{w}/notes.txt", "some notes\n")
    write(f"{w}/latin1.json", b'{\n "vocab_size": 64,\n "name": "caf\xe9"\n}\n', "wb")
    write(f"{w}/broken.json", '{"vocab_size": 64,}')
    write(f"{w}/list.json", "[1, 2, 3]")
    write(f"{w}/nan_init.json", j(dict(hf_config, initializer_range=float("nan"))))
    write(f"{w}/swish.json", j(dict(hf_config, hidden_act="swish")))
    write(f"{w}/heads.json", j(dict(hf_config, num_attention_heads=3)))
    write(f"{w}/small_vocab.json", j(dict(hf_config, vocab_size=20)))
    shutil.copy(os.path.join(corpus_dir, "corpus.txt"), f"{w}/corpus.txt")
    write(f"{w}/latin1_corpus.txt", b"A first sentence.\nSecond caf\xe9 sentence.\n", "wb")
    write(f"{w}/blank.txt", "\n\n  \n")
    write(f"{w}/one_sentence.txt", "Only one sentence here.\n")
    write(f"{w}/empty.tfrecord", "")
    write(f"{w}/vocab.txt", "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    write(f"{w}/latin1_vocab.txt", b"[PAD]\n[UNK]\xe9\n", "wb")
    write(f"{w}/big_vocab.txt", "".join(f"w{i}\n" for i in range(100)))
    os.makedirs(f"{w}/emptydir")
    os.makedirs(f"{w}/readonly")
    os.chmod(f"{w}/readonly", 0o555)
    write(f"{w}/garbage/model.ckpt.index", "not a checkpoint at all, just text that is long enough to look\n" * 2)
    write(f"{w}/garbage/model.ckpt.data-00000-of-00001", "x")
    os.makedirs(f"{w}/nodata")
    shutil.copy(os.path.join(TF1, "model.ckpt.index"), f"{w}/nodata/model.ckpt.index")
    write(f"{w}/stale/checkpoint", 'model_checkpoint_path: "model.ckpt-9"\nall_model_checkpoint_paths: "model.ckpt-9"\n')
    # a GLUE RTE directory and broken copies of it
    rows = ["index\tsentence1\tsentence2\tlabel"] + [f"{i}\tthe cat sat {i}\tthe cat\tentailment" for i in range(8)]
    for split in ("train", "dev"):
        write(f"{w}/glue/RTE/{split}.tsv", "\n".join(rows) + "\n")
    write(f"{w}/glue/RTE/test.tsv", "index\tsentence1\tsentence2\n0\ta b\tc\n")
    write(f"{w}/glue_latin1/RTE/train.tsv", ("\n".join(rows[:2]) + "\n").encode() + b"2\tcaf\xe9\tx\tentailment\n",
          "wb")
    write(f"{w}/glue_header_only/RTE/train.tsv", rows[0] + "\n")
    write(f"{w}/glue_bad_label/RTE/train.tsv", rows[0] + "\n0\ta\tb\tmaybe\n")
    write(f"{w}/glue_short_row/RTE/train.tsv", "\n".join(rows[:2]) + "\n2\tonly one column\n")
    # SQuAD, predictions, no-answer probabilities
    from tests.squad_helpers import make_squad
    import random

    make_squad(f"{w}/squad.json", random.Random(0), 3, False)
    squad_v2 = json.load(open(f"{w}/squad.json"))
    squad_v2["data"][0]["paragraphs"][0]["qas"][0].update(answers=[], is_impossible=True)
    write(f"{w}/squad_v2_no_flag.json", json.dumps(dict(squad_v2, version="1.1")))
    write(f"{w}/preds.json", json.dumps({"q0": "apple", "q1": "mango", "q2": "lemon"}))
    write(f"{w}/preds_numbers.json", json.dumps({"q0": 1, "q1": "mango", "q2": "lemon"}))
    write(f"{w}/na_text.json", json.dumps({"q0": "high", "q1": 0.1, "q2": 0.2}))
    # RACE
    article = {"id": "m1.txt", "article": "the cat sat on the mat", "questions": ["where did it sit?", "who _?"],
               "options": [["mat", "hat", "bat", "cat"], ["a", "b", "c", "d"]], "answers": ["A", "B"]}
    for split in ("train", "dev", "test"):
        for level in ("middle", "high"):
            write(f"{w}/race/RACE/{split}/{level}/all.txt", json.dumps(article) + "\n")
    broken_articles = {
        "race_three_options": dict(article, options=[["mat", "hat", "bat"], ["a", "b", "c", "d"]]),
        "race_bad_answer": dict(article, answers=["A", "E"]),
        "race_missing_answer": dict(article, answers=["A"]),
        "race_no_keys": {"id": "m2.txt", "article": "text"},
    }
    for name, value in broken_articles.items():
        write(f"{w}/{name}/RACE/train/middle/all.txt", json.dumps(value) + "\n")
    write(f"{w}/race_latin1/RACE/train/middle/all.txt", b'{"id": "caf\xe9"}\n', "wb")
    write(f"{w}/race_broken_json/RACE/train/middle/all.txt", json.dumps(article) + "\n{oops\n")
    # model directories: release layout without checkpoint / SentencePiece / with a non-UTF-8 config, HF without
    # weights or with a non-UTF-8 config, a fake SavedModel
    for name in ("release_no_ckpt", "release_no_spm", "release_latin1"):
        os.makedirs(f"{w}/{name}")
        shutil.copy(os.path.join(HF, "spiece.model"), f"{w}/{name}/30k-clean.model")
        write(f"{w}/{name}/albert_config.json", json.dumps(dict(hf_config, hidden_act="gelu")))
    os.remove(f"{w}/release_no_spm/30k-clean.model")
    for name in ("release_no_spm", "release_latin1"):
        for suffix in ("index", "data-00000-of-00001"):
            shutil.copy(os.path.join(TF1, f"model.ckpt.{suffix}"), f"{w}/{name}/model.ckpt-best.{suffix}")
    shutil.copy(f"{w}/latin1.json", f"{w}/release_latin1/albert_config.json")
    shutil.copytree(HF, f"{w}/hf_copy")
    os.makedirs(f"{w}/hf_no_weights")
    shutil.copy(os.path.join(HF, "config.json"), f"{w}/hf_no_weights/config.json")
    shutil.copy(os.path.join(HF, "spiece.model"), f"{w}/hf_no_weights/spiece.model")
    os.makedirs(f"{w}/hf_latin1")
    write(f"{w}/hf_latin1/config.json", b'{\n "model_type": "albert",\n "x": "caf\xe9"\n}\n', "wb")
    write(f"{w}/fake_saved_model/saved_model.pb", "not a protocol buffer")
    # pretraining records: good ones, cut ones
    records = f"{w}/records.tfrecord"
    result = subprocess.run(command("cp", [f"--output_file={records}"], w=w, hf=HF, out=w), capture_output=True, text=True,
                            cwd=ROOT, timeout=300, env=environment())
    assert result.returncode == 0, result.stderr[-2000:]
    data = open(records, "rb").read()
    write(f"{w}/truncated.tfrecord", data[:len(data) // 2 + 3], "wb")
    yield {"w": str(w), "records": records}
    os.chmod(f"{w}/readonly", 0o755)


def environment():
    """A user's shell: no TF_CPP_MIN_LOG_LEVEL (the suite's conftest sets one)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return dict(env, PYTHONPATH=ROOT)


def command(cli, args, **values) -> list:
    return [sys.executable, *SCRIPTS[cli], *[a.format(**values) for a in BASE[cli] + list(args)]]


def snapshot(world: str, out: str) -> dict:
    """{relative path: size} of every file and directory under `world` but its out/ (where the other cases, run
    alongside, write), and under this case's own `out`."""
    found = {}
    for top, skip in ((world, os.path.join(world, "out")), (out, None)):
        for d, dirs, files in os.walk(top):
            if d == skip or (skip and d.startswith(skip + os.sep)):
                continue
            for name in dirs + files:
                path = os.path.join(d, name)
                if path == skip:
                    continue
                found[os.path.relpath(path, world)] = os.path.getsize(path) if name in files else "dir"
    return found


def run_case(index, case, world):
    cli, args, expected = case
    values = dict(world, out=os.path.join(world["w"], "out", f"case{index}"), hf=HF, HF=HF, TF1=TF1)
    before = snapshot(world["w"], values["out"])
    result = subprocess.run(command(cli, args, **values), capture_output=True, text=True, cwd=ROOT, timeout=300,
                            env=environment(), stdin=subprocess.DEVNULL)
    after = snapshot(world["w"], values["out"])
    return result, before, after, expected.format(**values)


def test_at_least_150_cases_cover_every_entry_point():
    assert len(CASES) >= 150  # and the read-only directory cases when not root
    assert {cli for cli, _, _ in CASES} == set(SCRIPTS)


@pytest.mark.slow
def test_every_bad_input_is_one_line_exit_2_and_leaves_nothing(world):
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda item: run_case(*item, world), enumerate(CASES)))
    failures = []
    for case, (result, before, after, expected) in zip(CASES, outcomes):
        lines = result.stderr.splitlines()
        problems = []
        if result.returncode != 2:
            problems.append(f"exit status {result.returncode}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines")
        elif ": error: " not in lines[0] or expected not in lines[0]:
            problems.append(f"message lacks {expected!r}")
        if before != after:
            changed = sorted(set(before.items()) ^ set(after.items()), key=str)[:3]
            problems.append(f"files changed: {changed}")
        if problems:
            failures.append(f"{case[0]} {case[1]}: {'; '.join(problems)}\n    stderr: {result.stderr[-600:]!r}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases:\n" + "\n".join(failures)
