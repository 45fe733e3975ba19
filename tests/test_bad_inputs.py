"""Every command line, given what a careless user gives it: exit status 2, exactly one line on stderr
(`<program>: error: ...`) naming the flag or file at fault, and the output location left as it was.

One table, every entry point. Most mistakes are caught before TensorFlow starts (a second each); those found in
the data (records, TSV rows, checkpoints) come after, still as one line (albert/ground/stderr_filter.py keeps
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
           "ner": ["run_ner.py"],
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
    "ner": ["--train_file={w}/ner/train.txt", "--init_checkpoint={hf}", "--output_dir={out}", "--max_seq_length=16",
            "--doc_stride=4", "--do_train", "--train_step=1", "--save_checkpoints_steps=1"],
    "cp": ["--input_file={w}/corpus.txt", "--output_file={out}/a.tfrecord", "--spm_model_file={hf}/spiece.model",
           "--max_seq_length=16", "--max_predictions_per_seq=2", "--dupe_factor=1"],
    "hub": ["--albert_directory={hf}", "--export_path={out}/hub"],
    "ec": ["--albert_directory={hf}", "--export_path={out}/model.ckpt-best"],
    "cv": ["--input={hf}", "--output={out}/converted", "--to=release"],
    "spm": ["--input_file={w}/corpus.txt", "--model_prefix={out}/sp", "--vocab_size=100"],
    "info": [], "se": [], "cls": [],
}

from tests.bad_input_cases import CASES  # noqa: E402  (the table: one row per bad input)

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
    write(f"{w}/userfiles/notes.txt", "a user's notes\n")  # a directory of a user's files, named as an output
    write(f"{w}/userfiles/data/a.csv", "text,label\n")
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
    os.makedirs(f"{w}/cut")  # a checkpoint whose data shard was cut short (a copy that stopped)
    shutil.copy(os.path.join(TF1, "model.ckpt.index"), f"{w}/cut/model.ckpt.index")
    data = open(os.path.join(TF1, "model.ckpt.data-00000-of-00001"), "rb").read()
    write(f"{w}/cut/model.ckpt.data-00000-of-00001", data[:len(data) // 2], "wb")
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
    write(f"{w}/glue_tab_in_text/RTE/train.tsv", "\n".join(rows[:2]) + "\n2\ta\tb\tc\tentailment\n")
    # a user's own classification files, and broken copies
    reviews = ["sentence,label", '"a gripping, tender film",positive', "dull and long,negative"]
    write(f"{w}/own/train.csv", "\n".join(reviews) + "\n")
    write(f"{w}/own/latin1.csv", ("\n".join(reviews) + "\n").encode() + b"caf\xe9 society,positive\n", "wb")
    write(f"{w}/own/dev_new_label.csv", "\n".join(reviews + ["fine, I guess,neutral"]).replace(
        "fine, I guess", '"fine, I guess"') + "\n")
    write(f"{w}/own/no_text.csv", "\n".join(reviews[:2] + [",negative"]) + "\n")
    write(f"{w}/own/no_label.csv", "\n".join([reviews[0], "a film,"]) + "\n")
    write(f"{w}/own/one_label.csv", "\n".join(reviews[:2]) + "\n")
    write(f"{w}/own/reviews.xml", "<reviews/>\n")
    # run_ner.py's CoNLL files, and broken copies
    conll = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\n"
    write(f"{w}/ner/train.txt", conll)
    write(f"{w}/ner/dev_loc.txt", "Paris NNP B-NP B-LOC\n")
    write(f"{w}/ner/spilled.txt", "EU NNP B-NP B-ORG\nrejects B-VP O\n")
    write(f"{w}/ner/iobes.txt", "EU NNP B-NP S-ORG\n")
    write(f"{w}/ner/latin1.txt", b"EU NNP B-NP B-ORG\nCaf\xe9 NNP B-NP B-ORG\n", "wb")
    write(f"{w}/ner/ids.jsonl", '{"tokens": ["EU"], "tags": [3]}\n')
    # SQuAD, predictions, no-answer probabilities
    from tests.squad_helpers import make_squad
    import random

    make_squad(f"{w}/squad.json", random.Random(0), 3, False)
    squad_v2 = json.load(open(f"{w}/squad.json"))
    squad_v2["data"][0]["paragraphs"][0]["qas"][0].update(answers=[], is_impossible=True)
    write(f"{w}/squad_v2_no_flag.json", json.dumps(dict(squad_v2, version="1.1")))
    squad_v2["data"][0]["paragraphs"][0]["qas"][0]["id"] = "q1"
    write(f"{w}/squad_twice.json", json.dumps(squad_v2))
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
    write(f"{w}/race_twice/RACE/train/middle/all.txt", json.dumps(article) + "\n" + json.dumps(article) + "\n")
    write(f"{w}/race_broken_json/RACE/train/middle/all.txt", json.dumps(article) + "\n{oops\n")
    # model directories: release layout without checkpoint / SentencePiece / with a non-UTF-8 config, HF without
    # weights or with a non-UTF-8 config, a fake SavedModel
    for name in ("release_no_ckpt", "release_no_spm", "release_latin1"):
        os.makedirs(f"{w}/{name}")
        shutil.copy(os.path.join(HF, "spiece.model"), f"{w}/{name}/30k-clean.model")
        write(f"{w}/{name}/albert_config.json", json.dumps(dict(hf_config, hidden_act="gelu")))
    shutil.copytree(f"{w}/release_no_ckpt", f"{w}/release_cut")
    for name in ("index", "data-00000-of-00001"):
        shutil.copy(f"{w}/cut/model.ckpt.{name}", f"{w}/release_cut/model.ckpt-best.{name}")
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
    write(f"{w}/cut.tfrecord", data[:len(data) - 7], "wb")  # the last record's payload ends 7 bytes early
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
