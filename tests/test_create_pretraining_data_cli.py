"""create_pretraining_data.py end to end, and every bad input: one line on stderr, exit 2, no output left."""

import functools
import os

import pytest
import tensorflow as tf

from tests.helpers import ROOT, run_command

SCRIPT = os.path.join(ROOT, "create_pretraining_data.py")


run = functools.partial(run_command, "create_pretraining_data.py", timeout=300)


def test_end_to_end_with_gzip_globs_and_two_outputs(corpus_dir, tmp_path):
    import gzip
    import shutil

    text = (corpus_dir / "corpus.txt").read_bytes()
    half = text.index(b"\n\n", len(text) // 2)
    (tmp_path / "a.txt").write_bytes(text[:half + 2])
    with gzip.open(tmp_path / "b.txt.gz", "wb") as f:
        f.write(text[half + 2:])
    shutil.copy(corpus_dir / "corpus.txt", tmp_path / "whole.txt")
    out = tmp_path / "out"
    outputs = f"{out}/x.tfrecord,{out}/y.tfrecord"
    common = [f"--spm_model_file={corpus_dir / 'sp.model'}", "--max_seq_length=64", "--max_predictions_per_seq=10",
              "--dupe_factor=2", "--num_workers=2"]
    result = run(f"--input_file={tmp_path}/a.txt,{tmp_path}/b*.gz", f"--output_file={outputs}", *common)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("documents 300, instances ")
    assert "masked " in result.stdout
    assert "n-gram lengths drawn: 1: 0.5" in result.stdout
    counts = [sum(1 for _ in tf.data.TFRecordDataset(str(out / name))) for name in ("x.tfrecord", "y.tfrecord")]
    assert abs(counts[0] - counts[1]) <= 1
    assert sum(counts) > 300
    assert sorted(os.listdir(out)) == ["x.tfrecord", "y.tfrecord"]
    # The inputs are taken in sorted order (a document is its file's place in that list and its place in the file):
    # the same files named in another order give the same bytes; the whole corpus as one file gives other streams.
    swapped = run(f"--input_file={tmp_path}/b*.gz,{tmp_path}/a.txt",
                  f"--output_file={tmp_path}/s1.tfrecord,{tmp_path}/s2.tfrecord", *common)
    assert swapped.returncode == 0, swapped.stderr
    assert (out / "x.tfrecord").read_bytes() == (tmp_path / "s1.tfrecord").read_bytes()
    whole = run(f"--input_file={tmp_path}/whole.txt", f"--output_file={tmp_path}/w1.tfrecord,{tmp_path}/w2.tfrecord",
                *common)
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout.startswith("documents 300, instances ")
    assert (out / "x.tfrecord").read_bytes() != (tmp_path / "w1.tfrecord").read_bytes()


def bad_corpus(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"a fine line\nanother one\nbroken \xff\xfe bytes here\n")
    return path


CASES = {
    "missing input": (lambda t, c: [f"--input_file={t}/nope*.txt"], "{t}/nope*.txt: no input file matches; check "
                                                                    "--input_file"),
    "empty input": (lambda t, c: [f"--input_file={_write(t / 'empty.txt', chr(10) * 5)}"],
                    "{t}/empty.txt: no documents (no non-blank line); the input must be text, one sentence per "
                    "line, a blank line between documents"),
    "missing spm": (lambda t, c: [f"--spm_model_file={t}/none.model"],
                    "{t}/none.model: SentencePiece model not found; pass --spm_model_file of the model"),
    "unreadable spm": (lambda t, c: [f"--spm_model_file={_write(t / 'sp.vocab', 'not a model')}"],
                       "{t}/sp.vocab: not a SentencePiece model"),
    "missing vocab": (lambda t, c: ["--spm_model_file=", f"--vocab_file={t}/vocab.txt"],
                      "{t}/vocab.txt: vocabulary file not found; pass --vocab_file of the model"),
    "short max_seq_length": (lambda t, c: ["--max_seq_length=4"],
                             "--max_seq_length must be at least 5, got 4 ([CLS] A [SEP] B [SEP] with a token in A "
                             "and B)"),
    "masked_lm_prob": (lambda t, c: ["--masked_lm_prob=1.5"], "--masked_lm_prob must be a probability in [0, 1], "
                                                              "got 1.5"),
    "short_seq_prob": (lambda t, c: ["--short_seq_prob=-0.1"], "--short_seq_prob must be a probability in [0, 1], "
                                                               "got -0.1"),
    "max_predictions": (lambda t, c: ["--max_predictions_per_seq=0"],
                        "--max_predictions_per_seq must be at least 1, got 0"),
    "invalid utf-8": (lambda t, c: [f"--input_file={bad_corpus(t)}"],
                      "{t}/bad.txt:3: invalid UTF-8 (byte 8 of the line); the corpus must be UTF-8 text"),
    "no output": (lambda t, c: ["--output_file="], "--output_file is required"),
}


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2_and_no_output(case, corpus_dir, tmp_path):
    make_args, message = CASES[case]
    out_dir = tmp_path / "out"
    args = {"--input_file": f"--input_file={corpus_dir / 'corpus.txt'}",
            "--output_file": f"--output_file={out_dir}/train.tfrecord",
            "--spm_model_file": f"--spm_model_file={corpus_dir / 'sp.model'}"}
    for arg in make_args(tmp_path, corpus_dir):
        args[arg.split("=")[0]] = arg
    result = run(*args.values(), "--dupe_factor=1")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"create_pretraining_data.py: error: {message.format(t=tmp_path)}"] or (
        case == "unreadable spm" and len(lines) == 1 and message.format(t=tmp_path) in lines[0]), result.stderr
    assert not out_dir.exists() or os.listdir(out_dir) == []
