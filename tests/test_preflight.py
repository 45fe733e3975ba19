"""albert/runner/preflight.py: what a runner works out and refuses before TensorFlow starts, called as the runners call
it (the runners' own one-line errors, as processes: tests/test_bad_inputs.py)."""

import os
import shutil

import pytest
from absl import flags

from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.runner.preflight import check_fine_tuning, check_model_files, model_files, settings_with_model_files
from albert.tasks.classification.settings import GlueRun
from tests.helpers import WEIGHT_FIXTURES

HF = os.path.join(WEIGHT_FIXTURES, "hf_classifier")  # config.json (max_position_embeddings 16, vocab 64), spiece.model


def glue_flags(*argv):
    values = flags.FlagValues()
    made = define(GlueRun, values=values)
    values(["run_classifier.py", "--task_name=rte", "--data_dir=data", "--output_dir=out", *argv])
    return made, values


def test_a_model_directory_supplies_the_config_and_the_tokenizer():
    assert model_files(HF, None, None) == (HF, os.path.join(HF, "config.json"), os.path.join(HF, "spiece.model"))
    assert model_files(None, None, None, hub_module=HF) == (HF, os.path.join(HF, "config.json"),
                                                            os.path.join(HF, "spiece.model"))
    # given files win; a WordPiece vocabulary keeps the directory's SentencePiece model out
    assert model_files(HF, "mine.json", None, "vocab.txt") == (HF, "mine.json", None)


def test_the_settings_are_built_with_the_worked_out_files():
    made, values = glue_flags(f"--init_checkpoint={HF}", "--max_seq_length=16")
    settings = settings_with_model_files(made, values=values)
    assert (settings.init_checkpoint, settings.albert_config_file, settings.spm_model_file) == (
        HF, os.path.join(HF, "config.json"), os.path.join(HF, "spiece.model"))
    assert settings.max_seq_length == 16 and settings.task_name == "rte"


def test_model_files_that_do_not_fit_are_one_line(tmp_path):
    config = os.path.join(HF, "config.json")
    with pytest.raises(AlbertError) as raised:
        check_model_files(config, 32)
    assert str(raised.value) == f"--max_seq_length 32 exceeds max_position_embeddings (16) of {config}"
    with pytest.raises(AlbertError, match=r"^nowhere.model: --spm_model_file not found$"):
        check_model_files(config, 16, "nowhere.model")
    with pytest.raises(AlbertError, match=f"^{tmp_path}: --spm_model_file is a directory; pass the file$"):
        check_model_files(config, 16, str(tmp_path))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"w{i}\n" for i in range(100)))
    with pytest.raises(AlbertError, match=r"--vocab_file has 100 pieces but vocab_size is 64 in "):
        check_model_files(config, 16, vocab_file=str(vocab))
    assert check_model_files(config, 16, os.path.join(HF, "spiece.model"), init_checkpoint=HF).vocab_size == 64


def test_an_export_directory_may_not_hold_an_input(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(HF, copy)
    settings = GlueRun(task_name="rte", data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "out"),
                       albert_config_file=str(copy / "config.json"), spm_model_file=str(copy / "spiece.model"),
                       init_checkpoint=str(copy), max_seq_length=16, export_dir=str(tmp_path))
    with pytest.raises(AlbertError, match=f"^--export_dir {tmp_path} holds {tmp_path}/out, an input of this "
                                          "command"):
        check_fine_tuning(settings, settings.data_dir)
    settings = GlueRun(**{**settings.__dict__, "export_dir": str(tmp_path / "serving"), "onnx_export": "none"})
    check_fine_tuning(settings, settings.data_dir)  # nothing refused
    with pytest.raises(AlbertError, match="^--onnx_export=float32 writes model.onnx into the export: pass "
                                          "--export_dir$"):
        check_fine_tuning(GlueRun(**{**settings.__dict__, "export_dir": None, "onnx_export": "float32"}))
