"""Files from strangers (docs/failure-behaviour.md): each reader checks what a file declares before it reads or
allocates. Hostile files made here (tests/hostile_files.py); each refusal is one AlbertError naming the file and the
tensor, and comes before any storage is read (the storage reader raises if it is called). From the command line:
exit status 2, one line, never a crash."""

import os
import subprocess
import sys

import numpy as np
import pytest

from albert.ground.errors import AlbertError
from albert.weights import torch_pickle
from tests.helpers import ROOT
from tests.hostile_files import torch_file

FLOAT = np.arange(4, dtype="<f4").tobytes()  # a storage of 4 floats: 0, 1, 2, 3


def never_read(*args):
    raise AssertionError("a storage was read before the file was refused")


TORCH_CASES = [
    ("out of bounds size", {"w": ("0", 0, (4096,), (1,))}, {"0": (1, FLOAT[:4])},
     "tensor 'w' declares 4096 elements (size [4096], stride [1], offset 0) reaching element 4095 of a storage of 1: "
     "refused"),
    ("offset past the storage", {"w": ("0", 9, (2,), (1,))}, {"0": (4, FLOAT)},
     "tensor 'w' declares 2 elements (size [2], stride [1], offset 9) reaching element 10 of a storage of 4: "
     "refused"),
    ("stride past the storage", {"w": ("0", 0, (2, 2), (3, 1))}, {"0": (4, FLOAT)},
     "tensor 'w' declares 4 elements (size [2, 2], stride [3, 1], offset 0) reaching element 4 of a storage of 4: "
     "refused"),
    ("negative stride", {"w": ("0", 3, (2,), (-1,))}, {"0": (4, FLOAT)},
     "tensor 'w' declares offset 3, size (2,), stride (-1,): each a non-negative integer, one stride per "
     "dimension; refused"),
    ("huge count", {"w": ("0", 0, (50_000_000, 50_000_000), (0, 0))}, {"0": (4, FLOAT)},
     "tensor 'w' declares 2500000000000000 elements (size [50000000, 50000000], stride [0, 0], offset 0) reaching "
     "element 0 of a storage of 4: refused"),
    ("storage shorter than declared", {"w": ("0", 0, (4,), (1,))}, {"0": (4096, FLOAT)},
     "storage '0' declares 4096 elements of 4 bytes (16384 bytes) but archive/data/0 holds 16: refused"),
    ("storage the archive lacks", {"w": ("7", 0, (1,), (1,))}, {},
     "its pickle names storage '7', which the archive does not hold (archive/data/7): refused"),
]


@pytest.mark.parametrize("case, tensors, storages, message", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_a_torch_pickle_that_claims_what_it_does_not_hold_is_refused_before_reading(case, tensors, storages,
                                                                                    message, tmp_path, monkeypatch):
    if case == "storage the archive lacks":
        storages = {"7": (1, b"")}
        path = torch_file(tmp_path / "pytorch_model.bin", tensors, storages)
        import zipfile  # the entry the pickle names, removed from the archive
        with zipfile.ZipFile(path) as old, zipfile.ZipFile(tmp_path / "cut.bin", "w") as new:
            new.writestr("archive/data.pkl", old.read("archive/data.pkl"))
        path = str(tmp_path / "cut.bin")
    else:
        path = torch_file(tmp_path / "pytorch_model.bin", tensors, storages)
    monkeypatch.setattr(torch_pickle, "_read_storage", never_read)
    with pytest.raises(AlbertError) as raised:
        torch_pickle.load(path)
    assert str(raised.value) == f"{path}: {message}"


def test_a_valid_hand_made_torch_pickle_reads_its_views():
    """The same writer, honest: a transposed view and an offset view read the storage's own values."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = torch_file(os.path.join(directory, "ok.bin"),
                          {"t": ("0", 0, (2, 2), (1, 2)), "tail": ("0", 2, (2,), (1,))}, {"0": (4, FLOAT)})
        got = torch_pickle.load(path)
    np.testing.assert_array_equal(got["t"], np.array([[0, 2], [1, 3]], np.float32))
    np.testing.assert_array_equal(got["tail"], np.array([2, 3], np.float32))


def test_albert_convert_on_hostile_torch_pickles_exits_2_with_one_line(tmp_path):
    """`python -m albert.convert` on the out-of-bounds and huge-count files: exit 2 and the one line (it used to
    read the heap, or die with a segmentation fault, exit 139); nothing written."""
    import shutil

    fixture = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_classifier_pytorch")
    for case, tensors in (("bounds", {"albert.embeddings.word_embeddings.weight": ("0", 0, (4096,), (1,))}),
                          ("huge", {"albert.embeddings.word_embeddings.weight": ("0", 0, (50_000_000,) * 2,
                                                                                 (0, 0))})):
        directory = tmp_path / case
        directory.mkdir()
        for name in ("config.json", "spiece.model"):
            shutil.copy(os.path.join(fixture, name), directory / name)
        torch_file(directory / "pytorch_model.bin", tensors, {"0": (1, FLOAT[:4])})
        result = subprocess.run([sys.executable, "-m", "albert.convert", f"--input={directory}",
                                 f"--output={tmp_path / (case + '_out')}", "--to=release"], capture_output=True,
                                text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
        assert result.returncode == 2, (case, result.returncode, result.stderr[-2000:])
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"convert.py: error: {directory / 'pytorch_model.bin'}: tensor "
                                                       "'albert.embeddings.word_embeddings.weight' declares "), lines
        assert not (tmp_path / (case + "_out")).exists()


@pytest.mark.parametrize("entry, message", [
    ("../outside.safetensors", "tensor 'w' maps to '../outside.safetensors', not a file name inside {d}: refused"),
    ("/etc/passwd", "tensor 'w' maps to '/etc/passwd', not a file name inside {d}: refused"),
    ("sub/model.safetensors", "tensor 'w' maps to 'sub/model.safetensors', not a file name inside {d}: refused"),
    ("missing.safetensors", "tensor 'w' is in missing.safetensors, which {d} does not hold"),
    (7, "tensor 'w' maps to 7, not a file name inside {d}: refused"),
])
def test_a_shard_map_names_files_inside_the_directory_only(entry, message, tmp_path):
    import json

    from albert.weights.huggingface import weight_files

    directory = tmp_path / "repo"
    directory.mkdir()
    (tmp_path / "outside.safetensors").write_bytes(b"not read")
    index = directory / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": {"w": entry}}))
    with pytest.raises(AlbertError) as raised:
        weight_files(str(directory))
    assert str(raised.value) == f"{index}: " + message.format(d=directory)
    index.write_text(json.dumps({"metadata": {}}))
    with pytest.raises(AlbertError, match=r'no "weight_map" of tensor names to shard files$'):
        weight_files(str(directory))


def test_a_truncated_sentencepiece_model_is_one_line(tmp_path):
    """SentencePiece's own parser loads a cut file; the model is walked first, so the cut is one line naming it."""
    from albert.text.tokenization import load_sentencepiece
    from tests.export_helpers import SPM

    cut = tmp_path / "spiece.model"
    cut.write_bytes(open(SPM, "rb").read()[:100_000])
    with pytest.raises(AlbertError) as raised:
        load_sentencepiece(str(cut))
    assert str(raised.value) == (f"{cut}: not a SentencePiece model (a field runs past the end of its message); pass "
                                 "the .model file, not the .vocab")
    assert load_sentencepiece(SPM).GetPieceSize() == 30000


@pytest.mark.parametrize("data, message", [
    (b"\x0d\x00\x00", "field 1's 32-bit value runs past the end of its message"),
    (b"\x09\x00\x00\x00\x00", "field 1's 64-bit value runs past the end of its message"),
    (b"\x0a\x05ab", "a field runs past the end of its message"),
    (b"\x08\xff\xff", "a varint runs past the end of its message"),
])
def test_the_wire_reader_refuses_lengths_past_the_end(data, message):
    from albert.ground.wire import WireError, fields

    with pytest.raises(WireError) as raised:
        list(fields(data))
    assert str(raised.value) == message


def h5_copy(source, target, replace: dict):
    """A copy of an HDF5 weights file with the datasets of `replace` {name: function(file, name)} written anew."""
    import h5py

    with h5py.File(source, "r") as old, h5py.File(target, "w") as new:
        def copy(name, obj):
            if isinstance(obj, h5py.Dataset):
                if name in replace:
                    replace[name](new, name)
                else:
                    new.create_dataset(name, data=obj[()])
        old.visititems(copy)


EMBEDDING = "layers/reversible_embedding/vars/0"


@pytest.mark.parametrize("case", ["shape bomb", "external storage"])
def test_an_hdf5_dataset_that_the_file_does_not_hold_is_refused_before_reading(case, tmp_path, monkeypatch):
    """A keras-hub preset whose embedding declares [12000, 100000] float32 (4.8 GB; chunked, never written: the
    file is a few hundred KiB), or stores it in another file: one line, and no dataset of the file is read."""
    import shutil

    import h5py

    from albert.weights.keras_hub import read_h5

    source = os.path.join(ROOT, "tests", "fixtures", "weights", "kh_backbone")
    directory = tmp_path / "preset"
    shutil.copytree(source, directory)
    (tmp_path / "outside.bin").write_bytes(b"\0" * 64)

    def bomb(f, name):
        f.create_dataset(name, shape=(12000, 100000), dtype="<f4", chunks=(100, 1000))

    def external(f, name):
        f.create_dataset(name, shape=(4, 4), dtype="<f4", external=[(str(tmp_path / "outside.bin"), 0, 64)])

    path = directory / "model.weights.h5"
    h5_copy(os.path.join(source, "model.weights.h5"), path, {EMBEDDING: bomb if case == "shape bomb" else external})
    assert os.path.getsize(path) < 1_000_000
    monkeypatch.setattr(h5py.Dataset, "__getitem__", never_read)
    with pytest.raises(AlbertError) as raised:
        read_h5(str(path))
    expected = (f"{path}: dataset {EMBEDDING} declares shape [12000, 100000] (4,800,000,000 bytes) but the file stores "
                "0 bytes of it: refused" if case == "shape bomb" else
                f"{path}: dataset {EMBEDDING} points at other files (HDF5 external storage): refused, weights are read "
                "from this file only")
    assert str(raised.value) == expected
    monkeypatch.undo()
    import albert  # the whole path a user takes: from_pretrained on the directory, the same line

    with pytest.raises(AlbertError) as raised:
        albert.AlbertEncoder.from_pretrained(str(directory))
    assert str(raised.value) == expected


def test_unknown_and_optimizer_datasets_are_never_read(tmp_path, monkeypatch):
    import h5py

    from albert.weights.keras_hub import read_h5

    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.ones((2, 2), np.float32))
        f.create_dataset("optimizer/vars/0", shape=(12000, 100000), dtype="<f4", chunks=(100, 1000))
    got = read_h5(str(path), lambda name: name.startswith("layers/"))
    assert sorted(got) == ["layers/dense/vars/0", "optimizer/vars/0"] and got["optimizer/vars/0"] is None
    np.testing.assert_array_equal(got["layers/dense/vars/0"], np.ones((2, 2)))


def test_a_config_whose_weights_cannot_fit_is_one_line_before_keras_allocates(tmp_path, monkeypatch):
    """A Hugging Face directory whose config.json says intermediate_size 2,000,000,000 (the weights would need about
    1 TiB): from_pretrained and albert.convert refuse it naming the file, what it needs and what there is; the
    override variable moves the figure; nothing is built (the model class is never called)."""
    import json
    import shutil

    import albert
    from albert.tasks.classification import model as task_models

    fixture = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_classifier")
    directory = tmp_path / "repo"
    shutil.copytree(fixture, directory)
    config = json.loads((directory / "config.json").read_text())
    config["intermediate_size"] = 2_000_000_000
    (directory / "config.json").write_text(json.dumps(config))
    monkeypatch.setenv("ALBERT_MEMORY_LIMIT", "16G")
    monkeypatch.setattr(task_models.AlbertClassifier, "__init__", never_read)
    with pytest.raises(AlbertError) as raised:
        albert.AlbertClassifier.from_pretrained(str(directory), num_labels=2)
    assert str(raised.value) == (f"{directory / 'config.json'}: its weights alone would need 983.5 GiB in float32, "
                                 "more than the 16.0 GiB this process may use (ALBERT_MEMORY_LIMIT); check the config "
                                 "(or set ALBERT_MEMORY_LIMIT to allow more)")
    monkeypatch.delenv("ALBERT_MEMORY_LIMIT")
    result = subprocess.run([sys.executable, "-m", "albert.convert", f"--input={directory}",
                             f"--output={tmp_path / 'out'}", "--to=release"], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "its weights alone would need" in lines[0] and "this process may use (" in lines[0]
    assert not (tmp_path / "out").exists()


def test_memory_limits_are_read_from_the_variable_and_refused_when_malformed(monkeypatch):
    from albert.ground import memory

    monkeypatch.setenv("ALBERT_MEMORY_LIMIT", "1.5G")
    assert memory.available() == (3 << 29, "ALBERT_MEMORY_LIMIT")
    monkeypatch.setenv("ALBERT_MEMORY_LIMIT", "lots")
    with pytest.raises(AlbertError, match=r"^ALBERT_MEMORY_LIMIT='lots' is not a size; use bytes or a number with K, "
                                          r"M, G or T \(e.g. 8G\)$"):
        memory.available()
    monkeypatch.delenv("ALBERT_MEMORY_LIMIT")
    room, where = memory.available()
    assert where in ("MemAvailable", "the cgroup's memory limit") and 0 < room < 1 << 50


def tar_gz(path, members: dict):
    """A .tar.gz of {name: bytes}."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def test_an_archive_declaring_more_than_the_disk_has_or_absurdly_more_than_itself_is_refused_before_writing(
        tmp_path, monkeypatch):
    import collections
    import shutil

    from albert.hub import archives

    cache = tmp_path / "cache"
    cache.mkdir()
    zeros = tar_gz(tmp_path / "zeros.tar.gz", {"model/config.json": b"{}", "model/weights.bin": bytes(48 << 20)})
    usage = collections.namedtuple("usage", "total used free")
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(256 << 20, 224 << 20, 32 << 20)
                        if str(path) == str(cache) else real(path))  # a 256 MiB cache disk with 32 MiB free
    with pytest.raises(AlbertError) as raised:
        archives.unpack(zeros, str(cache / "entry"))
    assert str(raised.value) == (f"{cache}: {zeros} declares 48.0 MiB of files but the disk has 32.0 MiB free (keeping "
                                 "64.0 MiB); free space or set ALBERT_CACHE to a larger disk; nothing extracted")
    assert os.listdir(cache) == []
    monkeypatch.setattr(shutil, "disk_usage", real)
    with pytest.raises(AlbertError) as raised:
        archives.unpack(zeros, str(cache / "entry"))
    own = os.path.getsize(zeros) / (1 << 20)
    assert str(raised.value) == (f"{zeros}: declares 48.0 MiB of files in {own:,.1f} MiB, more than 100x its own size: "
                                 "not a model archive; refused, nothing extracted")
    assert os.listdir(cache) == []
    many = tar_gz(tmp_path / "many.tar.gz", {f"m/{i}": b"" for i in range(10_001)})
    with pytest.raises(AlbertError, match=r"many.tar.gz: 10,001 members, more than a model archive holds \(10,000\); "
                                          r"refused, nothing extracted$"):
        archives.unpack(many, str(cache / "entry"))
    assert os.listdir(cache) == []
    honest = tar_gz(tmp_path / "ok.tar.gz", {"albert_base/config.json": b"{}"})
    assert archives.unpack(honest, str(cache / "entry")) == str(cache / "entry" / "albert_base")


@pytest.mark.parametrize("name", ["config.json", "albert_config.json"])
def test_a_config_nested_past_the_parsers_depth_is_one_line(name, tmp_path):
    import albert
    from albert.config import AlbertConfig

    path = tmp_path / name
    path.write_text('{"vocab_size": 30, "extra": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = f"{path}: JSON nested too deep to read (over {sys.getrecursionlimit()} levels): refused"
    with pytest.raises(AlbertError) as raised:
        AlbertConfig.from_json_file(str(path))
    assert str(raised.value) == message
    if name == "config.json":  # a Hugging Face directory read from the top
        with pytest.raises(AlbertError) as raised:
            albert.AlbertEncoder.from_pretrained(str(tmp_path))
        assert str(raised.value) == message


def test_a_keras_hub_dataset_of_another_shape_is_refused_from_its_header_before_any_value_is_read(tmp_path,
                                                                                                 monkeypatch):
    """An honest dataset (stored in full) whose shape the model does not have: the loader compares the header's
    shape with the model's and refuses in one line; no dataset of the file was read."""
    import shutil

    import albert
    from albert.weights import keras_hub

    source = os.path.join(ROOT, "tests", "fixtures", "weights", "kh_backbone")
    directory = tmp_path / "preset"
    shutil.copytree(source, directory)
    path = directory / "model.weights.h5"
    h5_copy(os.path.join(source, "model.weights.h5"), path,
            {EMBEDDING: lambda f, name: f.create_dataset(name, data=np.ones((7, 5), np.float32))})
    monkeypatch.setattr(keras_hub.H5Entry, "read", never_read)
    with pytest.raises(AlbertError) as raised:
        albert.AlbertEncoder.from_pretrained(str(directory))
    assert str(raised.value).startswith(f"{path}: variable bert/embeddings/word_embeddings (keras-hub: {EMBEDDING}) "
                                        "has shape [7, 5] in the checkpoint but "), str(raised.value)
