"""run_ner.py on the real CoNLL-2003 English files (../shared/conll2003, read in place): a small model trained a few
hundred steps; its entity scores equal seqeval's on the predictions it wrote; every dev and test word predicted once,
sentences longer than a window included; the serving SavedModel tags raw sentences as the run did; model.onnx in
ONNX Runtime alone equals the Keras model."""

import json
import os

import numpy as np
import onnx
import pytest
from seqeval import metrics

from tests.export_helpers import SPM, TINY, fresh, run_script
from tests.helpers import shared_directory

CONLL = os.path.join(shared_directory(), "conll2003")
SEQ = 32


def first_sentences(source, target, count):
    """The first `count` sentences of a CoNLL file, its -DOCSTART- lines kept."""
    blocks = open(os.path.join(CONLL, source), encoding="utf-8").read().split("\n\n")
    kept, sentences = [], 0
    for block in blocks:
        kept.append(block)
        sentences += not block.startswith("-DOCSTART-") and bool(block.strip())
        if sentences == count:
            break
    target.write_text("\n\n".join(kept) + "\n", encoding="utf-8")
    return str(target)


def read_predictions(path):
    """(words, gold, predicted) sentences of a `word gold predicted` file, and its -DOCSTART- count."""
    sentences, current, documents = [], [], 0
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("-DOCSTART-"):
            documents += 1
        elif line.strip():
            current.append(line.split(" "))
        elif current:
            sentences.append(current)
            current = []
    return [[row[0] for row in s] for s in sentences], [[row[1] for row in s] for s in sentences], \
        [[row[-1] for row in s] for s in sentences], documents


@pytest.fixture(scope="module")
def ner_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ner")
    files = {"train": first_sentences("train.txt", tmp / "train.txt", 1500),
             "dev": first_sentences("valid.txt", tmp / "dev.txt", 300),
             "test": first_sentences("test.txt", tmp / "test.txt", 100)}
    config = tmp / "albert_config.json"
    config.write_text(json.dumps(TINY))
    out, export = tmp / "out", tmp / "serving"
    result = run_script("run_ner.py", f"--train_file={files['train']}", f"--dev_file={files['dev']}",
                        f"--test_file={files['test']}", f"--output_dir={out}", f"--albert_config_file={config}",
                        f"--spm_model_file={SPM}", "--do_train", "--do_eval", "--do_predict",
                        f"--max_seq_length={SEQ}", "--doc_stride=16", "--train_batch_size=32", "--train_step=300",
                        "--warmup_step=30", "--learning_rate=2e-3", "--save_checkpoints_steps=100",
                        f"--export_dir={export}", "--onnx_export=float32")
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp, files, out, export, result.stdout


@pytest.mark.slow
def test_scores_equal_seqeval_on_the_written_predictions(ner_run):
    _, files, out, _, stdout = ner_run
    assert "the words are cased and --do_lower_case is on" in stdout.splitlines()[0]
    assert json.loads((out / "albert_run.json").read_text())["labels"] == [
        "O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    blocks = [dict(line.split(" = ") for line in chunk.splitlines())
              for chunk in _blocks((out / "eval_results.txt").read_text())]
    assert [b["global_step"] for b in blocks] == ["100", "200", "300"]
    _, best_step, best_f1 = (out / "best_trial.txt").read_text().split(":")
    best = next(b for b in blocks if b["global_step"] == best_step)
    assert float(best["f1"]) == float(best_f1) > 0.2  # the tiny model learns entities in 300 steps
    words, gold, predicted, documents = read_predictions(out / "dev_predictions.txt")
    report = metrics.classification_report(gold, predicted, output_dict=True, zero_division=0)
    assert float(best["f1"]) == pytest.approx(metrics.f1_score(gold, predicted), abs=1e-12)
    assert float(best["precision"]) == pytest.approx(metrics.precision_score(gold, predicted), abs=1e-12)
    assert float(best["recall"]) == pytest.approx(metrics.recall_score(gold, predicted), abs=1e-12)
    for kind in ("LOC", "MISC", "ORG", "PER"):
        assert float(best[f"f1[{kind}]"]) == pytest.approx(report[kind]["f1-score"], abs=1e-12), kind
        assert float(best[f"precision[{kind}]"]) == pytest.approx(report[kind]["precision"], abs=1e-12), kind
        assert int(best[f"support[{kind}]"]) == report[kind]["support"], kind
    # every dev word predicted once, in the input's order, the documents and sentences as they were
    from albert.tasks.ner.conll import read_sentences

    dev = read_sentences(files["dev"])
    assert words == [list(s.words) for s in dev] and gold == [list(s.tags) for s in dev]
    assert documents == sum(s.document_start for s in dev)
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, SPM)
    long = [s for s in dev if sum(max(1, len(tokenizer.tokenize(w))) for w in s.words) > SEQ - 2]
    assert len(long) > 30  # windows were needed, and every word of those sentences is still predicted once
    test_words, _, test_tags, _ = read_predictions(out / "test_predictions.txt")
    assert test_words == [list(s.words) for s in read_sentences(files["test"])]
    assert all(tag in json.loads((out / "albert_run.json").read_text())["labels"] for s in test_tags for tag in s)


def _blocks(text):
    chunk = []
    for line in text.splitlines():
        chunk.append(line)
        if line.startswith("support[PER]"):  # the last key of a block, sorted
            yield "\n".join(chunk)
            chunk = []


@pytest.mark.slow
def test_serving_model_tags_raw_sentences_as_the_run_did(ner_run):
    tmp, _, out, export, _ = ner_run
    words, _, predicted, _ = read_predictions(out / "dev_predictions.txt")
    chosen = list(range(0, len(words), 4))  # long and short sentences
    (tmp / "texts.json").write_text(json.dumps([" ".join(words[i]) for i in chosen]))
    fresh(f"""
        import json, tensorflow as tf, tensorflow_text
        serve = tf.saved_model.load("{export}").signatures["serving_default"]
        out = serve(text=tf.constant(json.load(open("texts.json"))))
        counts = out["word_counts"].numpy().tolist()
        tags = [[t.decode() for t in row[:n]] for row, n in zip(out["tags"].numpy(), counts)]
        json.dump({{"counts": counts, "tags": tags}}, open("served.json", "w"))
    """, tmp)
    served = json.loads((tmp / "served.json").read_text())
    assert served["counts"] == [len(words[i]) for i in chosen]
    assert served["tags"] == [predicted[i] for i in chosen]
    # the Python API runs the served computation (albert.tasks.ner.tagging) on the run's finished model
    from albert.tasks.ner.model import AlbertTokenClassifier

    model = AlbertTokenClassifier.from_pretrained(str(out))
    assert model.predict([words[i] for i in chosen], batch_size=5) == served["tags"]


@pytest.mark.slow
def test_onnx_file_in_onnxruntime_alone_equals_keras(ner_run, tmp_path):
    import albert
    from albert.tasks.ner.conll import read_sentences
    from albert.tasks.ner.windows import padded, sentence_windows
    from albert.text.tokenization import FullTokenizer
    from tests.test_onnx_export import serve_alone

    _, files, out, export, _ = ner_run
    labels = json.loads((out / "albert_run.json").read_text())["labels"]
    metadata = {p.key: p.value for p in onnx.load(str(export / "model.onnx")).metadata_props}
    assert json.loads(metadata["labels"]) == labels and metadata["task"] == "ner"
    assert (metadata["tag_scheme"], metadata["max_seq_length"], metadata["doc_stride"]) == ("IOB2", str(SEQ), "16")
    windows = sentence_windows(read_sentences(files["dev"])[:64], FullTokenizer(None, True, SPM), labels, SEQ, 16)
    batch = {k: v for k, v in padded(windows, SEQ).items() if k != "tag_ids"}
    served, report = serve_alone(str(export / "model.onnx"), batch, tmp_path)
    assert report["imported"] == []
    model = albert.AlbertTokenClassifier.from_pretrained(str(out), num_labels=len(labels), seq_length=SEQ)
    keras_logits = np.asarray(model(batch))
    real = batch["input_mask"].astype(bool)
    np.testing.assert_allclose(served["logits"][real], keras_logits[real], atol=1e-4)
