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
