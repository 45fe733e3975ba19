"""The GLUE, SQuAD and RACE jobs (albert/tasks/<task>/job.py), called as library calls in the test's process -- what run_classifier.py,
run_squad.py and run_race.py call once their flags are checked: a few steps of training, an evaluation, the prediction files in the
original's layout, the serving export. The fast tier's run of each; the runners as processes (learning the tasks,
resuming, refusing reruns, exit codes, serving in a fresh process): tests/test_run_classifier.py, test_export.py,
test_run_squad.py and test_run_race.py."""

import json
import os
import random

from albert.tasks.classification import job as glue
from albert.tasks.race import job as race
from albert.tasks.squad import job as squad
from albert.train.settings import Runtime
from tests.export_helpers import GLUE, SPM, TINY
from tests.squad_helpers import make_sentencepiece, make_squad, tiny_config
from tests.task_data_helpers import make_race, word_model_flags

RUNTIME = Runtime(iterations_per_loop=4, save_checkpoints_steps=4, random_seed=1)


def flag_values(flags: list) -> dict:
    return {flag.split("=", 1)[0].lstrip("-"): flag.split("=", 1)[1] for flag in flags}


def test_the_glue_job_trains_evaluates_predicts_and_exports(tmp_path):
    """Real SST-2 rows (../shared/glue_real), the released SentencePiece model, a tiny random model."""
    data = tmp_path / "SST-2"
    data.mkdir()
    with open(os.path.join(GLUE, "SST-2", "train.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    (data / "train.tsv").write_text("\n".join(lines[:65]) + "\n", encoding="utf-8")
    (data / "dev.tsv").write_text("\n".join(lines[:1] + lines[65:97]) + "\n", encoding="utf-8")
    (data / "test.tsv").write_text("index\tsentence\n" + "".join(f"{i}\t{line.split(chr(9))[0]}\n"
                                                                  for i, line in enumerate(lines[97:117])),
                                   encoding="utf-8")
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    out = tmp_path / "out"
    settings = glue.GlueRun(task_name="sst-2", data_dir=str(tmp_path), output_dir=str(out),
                            albert_config_file=str(config), spm_model_file=SPM, max_seq_length=32, do_train=True,
                            do_eval=True, do_predict=True, train_batch_size=16, eval_batch_size=16, train_step=8,
                            warmup_step=1, learning_rate=1e-3, export_dir=str(tmp_path / "serving"))
    glue.run(settings, RUNTIME)
    results = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()[-3:])
    assert set(results) == {"eval_accuracy", "eval_loss", "global_step"} and results["global_step"] == "8"
    probabilities = [[float(x) for x in line.split("\t")] for line in
                     (out / "test_results.tsv").read_text().splitlines()]
    assert len(probabilities) == 20 and all(len(p) == 2 and abs(sum(p) - 1) < 1e-5 for p in probabilities)
    assert (out / "model.ckpt-best.index").exists()
    assert sorted(os.listdir(tmp_path / "serving")) == [".albert-output.json", "assets", "fingerprint.pb",
                                                        "model.tflite", "saved_model.pb", "variables"]


def test_the_squad_job_trains_predicts_and_exports(tmp_path, capsys):
    rng = random.Random(0)
    make_squad(tmp_path / "train.json", rng, 24, True)
    make_squad(tmp_path / "dev.json", rng, 9, True)
    out = tmp_path / "out"
    settings = squad.SquadRun(albert_config_file=tiny_config(tmp_path), spm_model_file=make_sentencepiece(tmp_path, rng),
                              output_dir=str(out), train_file=str(tmp_path / "train.json"),
                              predict_file=str(tmp_path / "dev.json"), max_seq_length=20, max_query_length=8,
                              doc_stride=6, do_train=True, do_predict=True, train_batch_size=8, predict_batch_size=16,
                              num_train_epochs=1.0, learning_rate=1e-3, version_2_with_negative=True,
                              export_dir=str(tmp_path / "serving"))
    squad.run(settings, RUNTIME)
    questions = [qa["id"] for a in json.loads((tmp_path / "dev.json").read_text())["data"]
                 for p in a["paragraphs"] for qa in p["qas"]]
    predictions = json.loads((out / "predictions.json").read_text())
    assert sorted(predictions) == sorted(questions) and all(isinstance(v, str) for v in predictions.values())
    assert sorted(json.loads((out / "null_odds.json").read_text())) == sorted(questions)
    results = dict(line.split(" = ") for line in (out / "predict_results.txt").read_text().splitlines())
    assert {"exact", "f1", "HasAns_exact", "NoAns_exact"} <= set(results), results
    assert (out / "model.ckpt-best.index").exists()
    assert sorted(os.listdir(tmp_path / "serving")) == [".albert-output.json", "assets", "fingerprint.pb",
                                                        "model.tflite", "saved_model.pb", "text", "variables"]
    assert sorted(os.listdir(tmp_path / "serving" / "text")) == ["assets", "fingerprint.pb", "saved_model.pb",
                                                                 "variables"]  # on raw text
    printed = capsys.readouterr().out
    assert "questions -> " in printed
    assert (f"exported the raw-text serving model to {tmp_path / 'serving' / 'text'} (inputs: question, context; "
            "outputs: answer, start, end, score, null_score, has_answer; no-answer threshold "
            f"{float(results['null_score_diff_threshold']):g}, tuned on {tmp_path / 'dev.json'})") in printed


def test_the_race_job_trains_evaluates_and_predicts(tmp_path):
    make_race(tmp_path, random.Random(0))
    model = flag_values(word_model_flags(tmp_path, "_", 24))
    out = tmp_path / "out"
    settings = race.RaceRun(data_dir=str(tmp_path), output_dir=str(out), max_seq_length=24, max_qa_length=8,
                            train_batch_size=16, train_step=8, warmup_step=2, learning_rate=1e-3, eval_batch_size=8,
                            do_predict=True, **model)
    race.run(settings, RUNTIME)
    last = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()[-4:])
    assert set(last) == {"eval_accuracy", "global_step", "high_accuracy", "middle_accuracy"}
    assert last["global_step"] == "8" and 0.0 <= float(last["eval_accuracy"]) <= 1.0
    truth = [f"{json.loads(line)['id']}-{i}" for level in ("middle", "high")
             for line in (tmp_path / "RACE" / "test" / level / "all.txt").read_text().splitlines()
             for i in range(len(json.loads(line)["answers"]))]
    predictions = json.loads((out / "predictions.json").read_text())
    assert sorted(predictions) == sorted(truth) and set(predictions.values()) <= set("ABCD")
