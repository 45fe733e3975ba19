"""The original's --albert_hub_module_handle: run_classifier.py, run_squad.py and run_race.py fine-tune the TF1 Hub
module the original's export_to_tfhub.py wrote (../shared/hub_artifacts), fetched from a TF Hub handle on
127.0.0.1; the module supplies the weights, the config and the SentencePiece model (no --albert_config_file, no
--spm_model_file), and the runs export."""

import json
import re
import os
import random

import pytest

from tests.helpers import HUB_ARTIFACTS, run_command
from tests.hub_server import Hub
from tests.squad_helpers import make_squad
from tests.task_data_helpers import make_race, setup_task

TF1 = os.path.join(HUB_ARTIFACTS, "tf1_module")


@pytest.fixture(scope="module")
def handle():
    server = Hub(lifetime=900)
    with open(os.path.join(TF1, "module.tar.gz"), "rb") as f:
        server.add_file("/google/albert_base/3?tf-hub-format=compressed", f.read())
    yield f"{server.url}/google/albert_base/3", server
    server.stop()


def run(script, tmp_path, *args):
    return run_command(script, *args, env={"ALBERT_CACHE": str(tmp_path / "cache")})


@pytest.mark.slow
def test_run_classifier_fine_tunes_a_hub_module_and_exports(handle, tmp_path):
    url, server = handle
    data = [a for a in setup_task(tmp_path) if a.startswith("--data_dir")]
    out = tmp_path / "out"
    result = run("run_classifier.py", tmp_path, *data, f"--albert_hub_module_handle={url}", "--task_name=RTE",
                 f"--output_dir={out}", "--do_train", "--do_eval", "--train_step=4", "--save_checkpoints_steps=4",
                 "--max_seq_length=32", "--train_batch_size=8", f"--export_dir={tmp_path / 'serving'}")
    assert result.returncode == 0, result.stderr[-3000:]
    # The module's encoder (23 variables) loaded; the classifier head fresh; its MLM and SOP heads unused.
    assert re.search(r"/variables/variables: loaded 23, missing 2, ignored 0 \(optimizer slots / global_step\), "
                     r"unused 7\n  missing: output_bias, output_weights\n", result.stdout), result.stdout[-2000:]
    recorded = json.loads((out / "albert_config.json").read_text())
    assert recorded["vocab_size"] == 500
    assert recorded["hidden_act"] == "relu"  # the module's config
    assert (tmp_path / "serving" / "saved_model.pb").exists()
    assert (tmp_path / "serving" / "model.tflite").exists()
    assert server.count("/google/albert_base/3") == 1
    print(f"run_classifier --albert_hub_module_handle={url}: trained 4 steps, exported {tmp_path / 'serving'}")


@pytest.mark.slow
def test_run_squad_fine_tunes_a_hub_module(handle, tmp_path):
    url, _ = handle
    rng = random.Random(0)
    make_squad(tmp_path / "train.json", rng, 16, version_2=False)
    make_squad(tmp_path / "dev.json", rng, 8, version_2=False)
    out = tmp_path / "out"
    result = run("run_squad.py", tmp_path, f"--albert_hub_module_handle={url}", f"--output_dir={out}",
                 f"--train_file={tmp_path / 'train.json'}", f"--predict_file={tmp_path / 'dev.json'}", "--do_train",
                 "--do_predict", "--max_seq_length=32", "--max_query_length=8", "--doc_stride=8",
                 "--train_batch_size=8", "--num_train_epochs=1", f"--export_dir={tmp_path / 'serving'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(json.loads((out / "predictions.json").read_text())) == 8
    assert (tmp_path / "serving" / "saved_model.pb").exists()


@pytest.mark.slow
def test_run_race_fine_tunes_a_hub_module(handle, tmp_path):
    url, _ = handle
    make_race(tmp_path, random.Random(0))
    out = tmp_path / "out"
    result = run("run_race.py", tmp_path, f"--albert_hub_module_handle={url}", f"--data_dir={tmp_path}",
                 f"--output_dir={out}", "--do_train", "--train_step=4", "--save_checkpoints_steps=4",
                 "--max_seq_length=48", "--max_qa_length=8", "--train_batch_size=4",
                 f"--export_dir={tmp_path / 'serving'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((out / "albert_config.json").read_text())["vocab_size"] == 500
    assert (tmp_path / "serving" / "saved_model.pb").exists()
