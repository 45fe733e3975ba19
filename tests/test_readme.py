"""Every Python block of the README and of every docs/ page runs as written, in a fresh interpreter, against tiny
models laid out where the pages say (`my_albert/` as a released tarball, `out/hub` from export_to_tfhub.py,
`out/mrpc_serving` from a classifier export, `out/reviews` a classifier run's directory, `out/race_serving/text`
from a RACE export, `out/squad_serving/text` from a SQuAD one, `out/sst2_serving/model.tflite` with TFLite
metadata, and `out/sst2_serving/model.onnx`)."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.hub_server import Hub, tar_gz
from tests.export_helpers import run_script, train_sentencepiece_with_numbers

PAGES = ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs"))
                               if name.endswith(".md"))
BLOCKS = [(page, block) for page in PAGES
          for block in re.findall(r"^```python\n(.*?)^```", open(os.path.join(ROOT, page), encoding="utf-8").read(),
                                  re.S | re.M)]


HUB_ENV = {}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    import keras

    from albert import AlbertClassifier, AlbertConfig, AlbertPretrainer
    from albert.weights.tf_checkpoints import save_original_checkpoint
    from albert.tasks.classification.serving import export_classifier
    from albert.text.tokenization import load_sentencepiece

    root = tmp_path_factory.mktemp("readme")
    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy("float32")
    # my_albert/: the released layout, with a small SentencePiece model under the release's name.
    base = root / "my_albert"
    base.mkdir()
    small = root / "small"  # small/: the same model, exported to out/hub and out/mrpc_serving
    small.mkdir()
    spm = train_sentencepiece_with_numbers(small)
    shutil.copy(spm, base / "30k-clean.model")
    config = AlbertConfig(vocab_size=load_sentencepiece(spm).GetPieceSize(), embedding_size=16, hidden_size=32,
                          num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                          max_position_embeddings=128)
    for directory in (base, small):
        (directory / "albert_config.json").write_text(config.to_json_string())
        save_original_checkpoint(AlbertPretrainer(config), str(directory / "model.ckpt-best"), global_step=1)
    (root / "out").mkdir()
    result = run_script("export_to_tfhub.py", f"--albert_directory={small}", f"--export_path={root / 'out/hub'}",
                        "--seq_length=16")
    assert result.returncode == 0, result.stderr[-3000:]
    classifier = AlbertClassifier(config, num_labels=2)
    export_classifier(classifier, spm, True, ["0", "1"], True, 16, str(root / "out/mrpc_serving"))
    from albert import AlbertMultipleChoice
    from albert.tasks.race.serving import export_race_text  # run_race.py --export_dir's raw-text model, in text/

    export_race_text(AlbertMultipleChoice(config), spm, True, 32, 16, str(root / "out/race_serving/text"))
    from albert import AlbertSquadV1
    from albert.tasks.squad.serving import export_squad_text  # run_squad.py --export_dir's raw-text model, in text/

    export_squad_text(AlbertSquadV1(config), spm, True, 32, 10, 8, 20, 30, str(root / "out/squad_serving/text"))
    from albert.export.litert import export_tflite  # as run_classifier.py --export_dir does (any length)

    export_tflite(classifier, str(root / "out/mrpc_serving/model.tflite"), ("input_ids", "input_mask", "segment_ids"),
                  None)
    # out/sst2_serving/model.tflite: a one-text classifier's file with its TFLite metadata (MediaPipe's block)
    from albert.export.tflite_metadata import describe

    sst2 = AlbertClassifier(config, num_labels=2)
    export_tflite(sst2, str(root / "out/sst2_serving/model.tflite"), ("input_ids", "input_mask", "segment_ids"), None,
                  described=describe("tokenizer", "SST-2", "text -> logits", spm, None, True, labels=["0", "1"]))
    from albert.export.onnx import export_onnx  # and its model.onnx (ONNX Runtime's block), as run_classifier.py's:
    from albert.tasks.classification.serving import classifier_metadata  # its metadata, the SentencePiece model in assets/

    os.makedirs(root / "out/sst2_serving/assets")
    shutil.copy(spm, root / "out/sst2_serving/assets")
    export_onnx(sst2, str(root / "out/sst2_serving/model.onnx"), ("input_ids", "input_mask", "segment_ids"),
                metadata=classifier_metadata("sst-2", ["0", "1"], False, 128, True, spm))
    # out/reviews/: a run_classifier.py --output_dir on a user's files (its albert_run.json names the labels).
    from albert.weights.run_record import RunRecord, write_record

    reviews = root / "out" / "reviews"
    reviews.mkdir()
    save_original_checkpoint(AlbertClassifier(config, num_labels=2), str(reviews / "model.ckpt-best"))
    for name in ("albert_config.json", "sp.model"):
        shutil.copy(small / name, reviews / name)
    write_record(str(reviews), RunRecord("AlbertClassifier", "own", ("negative", "positive"),
                                         preprocessing={"do_lower_case": True, "max_seq_length": 64}))
    # hf_albert_sst2/: a Hugging Face AlbertForSequenceClassification directory, written by albert.convert.
    from albert.tasks.conversion import convert

    save_original_checkpoint(AlbertClassifier(config, num_labels=2), str(small / "classifier" / "model.ckpt-best"))
    for name in ("albert_config.json", "sp.model"):
        shutil.copy(small / name, small / "classifier" / name)
    convert(str(small / "classifier"), str(root / "hf_albert_sst2"), "huggingface")
    # albert_base_v2 by name: the release's tarball, served from 127.0.0.1 (the release endpoint pointed there).
    hub = Hub(lifetime=1200)
    hub.add_file("/albert_models/albert_base_v2.tar.gz", tar_gz(str(base), top="albert_base"))
    HUB_ENV.update(ALBERT_RELEASE_ENDPOINT=hub.url, ALBERT_CACHE=str(root / "cache"))
    return root


def test_the_readme_and_the_manual_have_python_blocks():
    assert len(BLOCKS) >= 8
    assert {page for page, _ in BLOCKS} >= {"README.md", "docs/python-api.md"}


@pytest.mark.slow
@pytest.mark.parametrize("page, block", BLOCKS, ids=[f"{page}-{i}" for i, (page, _) in enumerate(BLOCKS)])
def test_python_block_runs_as_written(sandbox, page, block):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **HUB_ENV)  # `albert` as if installed
    env.pop("TF_USE_LEGACY_KERAS", None)
    result = subprocess.run([sys.executable, "-c", block], cwd=sandbox, capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, f"{page} block:\n{block}\n{result.stderr[-3000:]}"


# What every page may name, read from the code as it is: each command's flags from its golden help
# (tests/fixtures/helpfull, held to the code by tests/test_helpfull.py) and the console commands from pyproject.toml.
GOLDEN_HELP = os.path.join(ROOT, "tests", "fixtures", "helpfull")
SCRIPTS = ("run_classifier", "run_squad", "run_race", "run_ner", "run_pretraining", "create_pretraining_data",
           "export_to_tfhub", "export_checkpoints")
COMMAND = re.compile(r"(?<![\w/.-])(?:[\w./-]*/)?(" + "|".join(SCRIPTS) + r")\.py\b|-m albert\.([\w.]+)\b"
                     r"|(?<![\w/.-])(albert-[a-z-]+[a-z])(?![\w/.-])")


def command_flags() -> dict:
    flags = {}
    for name in os.listdir(GOLDEN_HELP):
        command = name.removesuffix(".txt").removesuffix(".help")
        with open(os.path.join(GOLDEN_HELP, name), encoding="utf-8") as f:
            flags.setdefault(command, set()).update(re.findall(r"--(?:\[no\])?([a-z][a-z0-9_]*)", f.read()))
    return flags


def console_commands() -> dict:
    """`albert-run-classifier` -> `run_classifier`, as pyproject.toml's [project.scripts] names them."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        entries = re.findall(r"^(albert-[a-z-]+) = \"albert\.commands\.(\w+):", f.read(), re.M)
    return {script: module if module in SCRIPTS else f"albert.{module}" for script, module in entries}


def code_of(page) -> list:
    """The page's code: each fenced block (its backslash continuations joined) and each inline code span."""
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    fenced = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)
    return ([block.replace("\\\n", " ") for block in fenced.findall(text)]
            + re.findall(r"`([^`\n]+)`", fenced.sub("", text)))


def flags_named(page, flags, consoles) -> list:
    """(command, flag) for each `--flag` the page passes to one of the project's commands that it does not have."""
    wrong = []
    for snippet in code_of(page):
        for line in snippet.splitlines():
            found = list(COMMAND.finditer(line))
            for i, match in enumerate(found):
                script, module, console = match.groups()
                command = script or (module and f"albert.{module}") or consoles.get(console)
                if console and console not in consoles:
                    if console.startswith(("albert-run", "albert-create", "albert-export", "albert-train",
                                           "albert-info", "albert-convert")):
                        wrong.append((console, "(no such command)"))
                    continue  # a model id such as albert/albert-base-v2
                if command not in flags:  # a module without flags of its own (albert.tasks.squad_eval)
                    if not os.path.isfile(os.path.join(ROOT, *command.split(".")) + ".py"):
                        wrong.append((command, "(no such command)"))
                    continue
                end = found[i + 1].start() if i + 1 < len(found) else len(line)
                words = re.split(r"\s(?:\||&&|;|>|#)", line[match.end():end])[0]
                if command == "create_pretraining_data" and "--runner=" in words:
                    continue  # the rest are Beam's pipeline options, checked by Beam when it runs
                for flag in re.findall(r"(?<![\w-])--([a-z][a-z0-9_]*)", words):
                    if flag not in flags[command] and not (flag.startswith("no") and flag[2:] in flags[command]):
                        wrong.append((command, f"--{flag}"))
    return wrong


def missing_files(page) -> list:
    """The project's files the page names (tools/, scripts/, albert/, tests/, .ci/, requirements*.txt, `python X.py`)
    and the pages and pictures it links, that the checkout does not have."""
    missing = []
    for snippet in code_of(page):
        for path, script in re.findall(r"(?<![\w/.-])((?:tools|scripts|albert|tests|\.ci)/[\w/.-]*\.(?:py|sh|txt|json)"
                                       r"|requirements[\w-]*\.txt)\b|\bpython3? ([\w.-]+\.py)\b", snippet):
            if not os.path.exists(os.path.join(ROOT, path or script)):
                missing.append(path or script)
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    for link, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        target = os.path.join(ROOT, os.path.dirname(page), link) if link else os.path.join(ROOT, page)
        if "://" in link:
            continue
        if not os.path.exists(target):
            missing.append(link)
        elif anchor and target.endswith(".md") and anchor not in anchors(target):
            missing.append(f"{link}#{anchor}")
    return missing


def anchors(path) -> set:
    """The anchors GitHub gives a page's headings: lower-cased, punctuation dropped, spaces as hyphens."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"^```.*?^```", "", f.read(), flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.*)$", text, re.M)}


def test_the_pages_cover_every_docs_page_and_the_checker_sees_their_commands():
    assert "docs/quickstart.md" in PAGES and len(PAGES) >= 16
    flags, consoles = command_flags(), console_commands()
    assert set(consoles.values()) <= set(flags) and "albert-run-ner" in consoles
    assert {"run_ner", "run_classifier", "albert.convert", "albert.info"} <= set(flags)
    assert "doc_stride" in flags["run_ner"] and "text_a_column" in flags["run_classifier"]


@pytest.mark.parametrize("page", PAGES)
def test_every_flag_a_page_passes_is_one_of_that_commands(page):
    assert flags_named(page, command_flags(), console_commands()) == []


@pytest.mark.parametrize("page", PAGES)
def test_every_file_a_page_names_is_in_the_checkout(page):
    assert missing_files(page) == []


@pytest.mark.parametrize("page", PAGES)
def test_no_page_names_an_issue_or_uses_a_model_name_as_a_directory(page):
    from albert.hub.names import TABLE

    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    assert re.findall(r"(?i)\bissues? #?\d+|(?<![\w&])#\d+\b", text) == []
    names = "|".join(re.escape(name) for name, _, _ in TABLE if "/" not in name)
    bare_hub = "|".join(re.escape(name) for name, family, _ in TABLE if "/" not in name and family == "tf1_hub")
    # a directory of the examples named like a model: missing, the name downloads something else
    assert re.findall(rf"(?<![\w.:/-])(?:{names})/(?!\d(?![\w-]))|from_pretrained\(\"(?:{bare_hub})\"", text) == []
