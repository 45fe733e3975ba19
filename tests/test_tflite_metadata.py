"""TFLite metadata in model.tflite (albert.export.tflite_metadata) and the ecosystem's runtimes on raw text:

- the metadata, read back with MediaPipe's own generated schema reader; the associated files in the appended zip;
  the file runs in LiteRT as it did without metadata; `--tflite_metadata=none` leaves it out;
- MediaPipe Tasks `TextClassifier` on run_classifier.py's export (real SST-2 text, the released 30k-clean model):
  its scores are the serving SavedModel's logits on every dev sentence;
- MediaPipe Tasks `TextEmbedder` on export_to_tfhub.py's encoder file: its first head is the pooled output;
- the TFLite Task Library's `BertQuestionAnswerer` (tflite-support 0.4.4, in the separate environment
  scripts/test.sh makes: it pins protobuf < 4) on the SQuAD 1.1 file: its answers' logits are the file's own.
"""

import json
import os
import shutil
import zipfile

import numpy as np
import pytest

from tests.export_helpers import SPM, TINY, fresh, run_script
from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # MediaPipe Tasks and the Task Library: other runtimes (the slow tier)

TASKLIB_PYTHON = os.path.join(ROOT, ".venv-tasklib", "bin", "python")
TASKLIB_LIBS = os.path.join(ROOT, ".venv-tasklib", "system-libs")
TEXTS = ["``Hi'' said AMÉLIE, it's a naïve café!", "The film is 1,024 times better than 45, 3,5 and ½.",
         "日本語 and emoji 😀", "  spaced\tout\u00a0text  "]


def run(script: str, *args):
    result = run_script(script, *args)
    assert result.returncode == 0, result.stderr[-3000:]


def app(code: str, tmp_path, **options):
    """`code` as an app developer's script (tests.export_helpers.fresh); its last line of output, as JSON."""
    return json.loads(fresh(code, tmp_path, timeout=600, **options).stdout.strip().splitlines()[-1])


def test_a_short_fine_tuning_on_real_sst2_text_completes(sst2):
    tmp_path, out, sentences = sst2
    results = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines())
    assert results["global_step"] == "27"
    assert 0.0 <= float(results["eval_accuracy"]) <= 1.0
    assert "model.tflite (none" in (out / "tflite_results.txt").read_text()
    assert (out / "30k-clean.model").read_bytes() == open(SPM, "rb").read()  # the run records its model files
    assert len(sentences) == 872


def test_the_metadata_reads_back_with_mediapipes_schema_reader(sst2):
    from mediapipe.tasks.metadata import metadata_schema_py_generated as schema

    from albert.text.device_spm import preprocessing_model

    path = sst2[0] / "serving" / "model.tflite"
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["sentencepiece.model", "labels.txt"]
        assert archive.read("labels.txt") == b"0\n1\n"
        assert archive.read("sentencepiece.model") == preprocessing_model(open(SPM, "rb").read(), True)
    from tensorflow.lite.python import schema_py_generated as tflite

    model = tflite.Model.GetRootAs(blob, 0)
    entries = {model.Metadata(i).Name().decode(): model.Metadata(i).Buffer() for i in range(model.MetadataLength())}
    data = model.Buffers(entries["TFLITE_METADATA"]).DataAsNumpy().tobytes()
    assert schema.ModelMetadata.ModelMetadataBufferHasIdentifier(data, 0)
    metadata = schema.ModelMetadataT.InitFromObj(schema.ModelMetadata.GetRootAs(data, 0))
    assert metadata.name == b"ALBERT SST-2 classifier"
    assert metadata.minParserVersion == b"1.1.0"
    graph = metadata.subgraphMetadata[0]
    subgraph = model.Subgraphs(0)  # the metadata's tensors in the subgraph's order, named by role
    tensor_names = [subgraph.Tensors(subgraph.Inputs(i)).Name().decode() for i in range(subgraph.InputsLength())]
    roles = {"serve_input_ids:0": b"ids", "serve_input_mask:0": b"mask", "serve_segment_ids:0": b"segment_ids"}
    assert [t.name for t in graph.inputTensorMetadata] == [roles[name] for name in tensor_names]
    assert sorted(roles[name] for name in tensor_names) == [b"ids", b"mask", b"segment_ids"]
    (output,) = graph.outputTensorMetadata
    assert output.name == b"logits"
    assert [(f.name, f.type) for f in output.associatedFiles] == [(b"labels.txt", 2)]
    (unit,) = graph.inputProcessUnits
    assert unit.optionsType == schema.ProcessUnitOptions.SentencePieceTokenizerOptions
    assert [f.name for f in unit.options.sentencePieceModel] == [b"sentencepiece.model"]
    assert b"[CLS] text [SEP] -> logits over 0, 1" in graph.description


def test_mediapipe_text_classifier_gives_the_keras_models_logits_on_raw_sst2_text(sst2, tmp_path):
    """The app's lines: TextClassifier.create_from_model_path(file).classify(text). Every SST-2 dev sentence plus
    cased / accented / quoted / numeric text; the reference: the serving SavedModel (FullTokenizer's ids in the
    graph) on the same strings."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    root, _, sentences = sst2
    texts = sentences + TEXTS
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    got = app(f"""
        import json
        from mediapipe.tasks.python import text
        texts = json.load(open("texts.json"))
        with text.TextClassifier.create_from_model_path({str(root / 'serving' / 'model.tflite')!r}) as classifier:
            results = [classifier.classify(t).classifications[0].categories for t in texts]
        print(json.dumps([{{c.category_name: c.score for c in categories}} for categories in results]))
    """, tmp_path)
    serving = tf.saved_model.load(str(root / "serving"))
    logits = np.concatenate([serving.serve({"text_a": tf.constant(texts[i:i + 128])})["logits"].numpy()
                             for i in range(0, len(texts), 128)])
    scores = np.array([[row["0"], row["1"]] for row in got])
    difference = np.abs(scores - logits).max()
    print(f"MediaPipe TextClassifier vs the Keras model: {len(texts)} texts, max |score - logit| {difference:.2e}")
    assert scores.shape == (876, 2)
    assert difference < 1e-5


def test_tflite_metadata_none_leaves_it_out_and_the_outputs_do_not_change(tmp_path):
    import keras

    from albert import AlbertClassifier, AlbertConfig
    from albert.export.litert import export_tflite, tflite_runner
    from albert.export.tflite_metadata import describe

    keras.utils.set_random_seed(2)
    model = AlbertClassifier(AlbertConfig(**TINY), num_labels=3)
    names = ["input_ids", "input_mask", "segment_ids"]
    batch = {"input_ids": np.array([[2, 10, 11, 3, 0]], np.int32), "input_mask": np.array([[1, 1, 1, 1, 0]], np.int32),
             "segment_ids": np.zeros((1, 5), np.int32)}
    outputs = {}
    for choice in ("tokenizer", "none"):
        described = describe(choice, "t", "d", SPM, None, True, labels=["a", "b", "c"])
        path = str(tmp_path / f"{choice}.tflite")
        export_tflite(model, path, names, None, described=described)
        outputs[choice] = tflite_runner(path)(batch)["logits"]
        assert zipfile.is_zipfile(path) == (choice == "tokenizer")
    np.testing.assert_array_equal(outputs["tokenizer"], outputs["none"])
    np.testing.assert_allclose(outputs["none"], model(batch, training=False), atol=1e-5)


def test_tflite_length_chooses_the_files_sequence_axis():
    from albert.ground.errors import AlbertError
    from albert.export.litert import file_length

    buckets = (8, 16, 32)
    assert file_length(32, buckets) is None
    assert file_length(32, (32,)) == 32  # default: dynamic unless no buckets
    assert file_length(32, buckets, runtime_fixed=True) == 32  # ... or the runtime reads only a fixed length
    assert file_length(32, buckets, "fixed") == 32
    assert file_length(32, (32,), "dynamic") is None
    assert file_length(32, buckets, "dynamic", runtime_fixed=True) is None
    with pytest.raises(AlbertError, match="--tflite_length 'short' is unknown; use one of default, fixed, dynamic"):
        file_length(32, buckets, "short")


def test_mediapipe_text_embedder_gives_the_encoders_pooled_output(tmp_path):
    """export_to_tfhub.py's encoder/model.tflite (fixed length by default: TextEmbedder reads only that)."""
    import keras
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    from albert import AlbertConfig, AlbertPretrainer
    from albert.weights.tf_checkpoints import save_original_checkpoint

    directory = tmp_path / "albert"
    directory.mkdir()
    (directory / "albert_config.json").write_text(json.dumps(TINY))
    shutil.copy(SPM, directory / "30k-clean.model")
    keras.utils.set_random_seed(0)
    save_original_checkpoint(AlbertPretrainer(AlbertConfig(**TINY)), str(directory / "model.ckpt-best"))
    run("export_to_tfhub.py", f"--albert_directory={directory}", f"--export_path={tmp_path / 'hub'}")
    (tmp_path / "texts.json").write_text(json.dumps(TEXTS))
    got = app(f"""
        import json
        from mediapipe.tasks.python import text
        with text.TextEmbedder.create_from_model_path({str(tmp_path / 'hub' / 'encoder' / 'model.tflite')!r}) as e:
            results = [e.embed(t).embeddings for t in json.load(open("texts.json"))]
        print(json.dumps([[r[0].head_name, r[0].embedding.tolist(), r[1].head_name] for r in results]))
    """, tmp_path)
    encoder = tf.saved_model.load(str(tmp_path / "hub" / "encoder"))
    preprocessor = tf.saved_model.load(str(tmp_path / "hub" / "preprocessor"))
    pooled = encoder(preprocessor(tf.constant(TEXTS)), training=False)["pooled_output"].numpy()
    assert [(name, tail) for name, _, tail in got] == [("pooled_output", "sequence_output")] * len(TEXTS)
    np.testing.assert_allclose(np.array([embedding for _, embedding, _ in got]), pooled, atol=1e-5)


def test_task_library_bert_question_answerer_runs_the_squad_file(tmp_path):
    """The SQuAD 1.1 file (fixed length by default: BertQuestionAnswerer reads only that) in tflite-support 0.4.4:
    each answer's logit is the file's start + end logit at its positions, on the ids FullTokenizer packs."""
    import keras

    from albert import AlbertConfig
    from albert.export.litert import tflite_runner
    from albert.tasks.squad.serving import export_squad
    from albert.export.tflite_metadata import describe
    from albert.tasks.squad.model import AlbertSquadV1
    from albert.text.tokenization import FullTokenizer

    assert os.path.isfile(TASKLIB_PYTHON), "scripts/test.sh makes .venv-tasklib (tflite-support 0.4.4)"
    keras.utils.set_random_seed(5)
    model = AlbertSquadV1(AlbertConfig(**dict(TINY, max_position_embeddings=384)))
    described = describe("tokenizer", "ALBERT SQuAD 1.1", "test", SPM, None, True)
    # 384: BertQuestionAnswerer's fixed length (run_squad.py's default); another length fails in it
    export_squad(model, False, str(tmp_path / "squad"), 384, described=described)
    # A context that fills most of the positions: a random model's best spans are then mostly in it.
    context = " ".join(["The Normans were the people who in the 10th and 11th centuries gave their name to Normandy, "
                        "a region in France. They were descended from Norse raiders and pirates from Denmark, Iceland "
                        "and Norway."] * 7)
    question = "In what country is Normandy located?"
    got = app(f"""
        import json
        from tflite_support.task import text
        qa = text.BertQuestionAnswerer.create_from_file({str(tmp_path / 'squad' / 'model.tflite')!r})
        answers = qa.answer({context!r}, {question!r}).answers
        print(json.dumps([[a.text, a.pos.start, a.pos.end, a.pos.logit] for a in answers]))
    """, tmp_path, python=TASKLIB_PYTHON, env_extra={"LD_LIBRARY_PATH": TASKLIB_LIBS})
    tokenizer = FullTokenizer(None, True, SPM)
    first, second = ["[CLS]"] + tokenizer.tokenize(question) + ["[SEP]"], tokenizer.tokenize(context) + ["[SEP]"]
    ids, pad = tokenizer.convert_tokens_to_ids(first + second), [0] * (384 - len(first) - len(second))
    batch = {"input_ids": [ids + pad], "input_mask": [[1] * len(ids) + pad],
             "segment_ids": [[0] * len(first) + [1] * len(second) + pad]}
    outputs = tflite_runner(str(tmp_path / "squad" / "model.tflite"))(batch)
    start, end = outputs["start_logits"][0], outputs["end_logits"][0]
    print("BertQuestionAnswerer answers:", got[:3])
    assert len(first) + len(second) > 290
    assert got
    assert all(abs(logit - (start[s] + end[e])) < 1e-4 for _, s, e, logit in got)
    assert all(s <= e for _, s, e, _ in got)
