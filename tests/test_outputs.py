"""Nothing a user owns is lost: an export or a conversion writes its directory whole, beside it, and moves it into
place only over nothing, an empty directory or an earlier output of its own (albert.ground.outputs).

The property: for any tree of the user's files around and inside the output directory, whatever the command does
(succeeds, is refused, fails half-way), every file it did not write is still there, byte for byte."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from albert.ground import outputs
from albert.ground.errors import AlbertError
from tests.helpers import ROOT, WEIGHT_FIXTURES, tree_digest

# Names a user's files and the command's files share on purpose (a user's own model.tflite, a folder `text`).
NAMES = ("notes.txt", "data.csv", "model.tflite", "saved_model.pb", "variables", "text", "a b.txt", "Ünï.txt",
         ".hidden", "albert_config.json", "config.json")
user_paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(lambda parts: os.path.join(*parts))


def consistent(tree: dict) -> dict:
    """`tree` without the paths that clash with one kept before them (a file where a folder is wanted)."""
    kept = {}
    for path, data in sorted(tree.items()):
        parts = path.split(os.sep)
        if not ({os.path.join(*parts[:i]) for i in range(1, len(parts))} & set(kept)
                or any(k.startswith(path + os.sep) for k in kept)):
            kept[path] = data
    return kept


user_trees = st.dictionaries(user_paths, st.binary(max_size=16), max_size=6).map(consistent)
written_trees = st.dictionaries(user_paths, st.binary(max_size=16), min_size=1, max_size=4).map(consistent)
PLACES = ("new", "empty", "user_files_inside", "earlier_output", "earlier_output_then_user_file",
          "earlier_unmarked_output", "working_directory", "above_working_directory", "holds_input",
          "earlier_output_of_another_command")


def plant(root, tree: dict) -> dict:
    """Write `tree` ({relative path: bytes}) under `root`, skipping paths that clash with one already written (a
    file where a folder is wanted); returns what was written."""
    planted = {}
    for path, data in consistent(tree).items():
        target = os.path.join(root, path)
        if os.path.exists(target) or not os.path.isdir(os.path.dirname(target)) and os.path.exists(
                os.path.dirname(target)):
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        planted[path] = data
    return planted


def user_files_intact(root, planted: dict):
    for path, data in planted.items():
        with open(os.path.join(root, path), "rb") as f:
            assert f.read() == data, path


def earlier_like(files: dict, written: dict) -> bool:
    """Whether an unmarked directory holding `files` counts as an earlier output of a command writing `written`
    (the rule for outputs of versions before the marker: only names such outputs hold, laid out as the new output
    -- the same names at its top -- and every file among the new ones)."""
    import fnmatch

    tops = {path.split(os.sep)[0] for path in files}
    return (all(any(fnmatch.fnmatch(top, p) for p in outputs.EARLIER_OUTPUTS) for top in tops)
            and tops == {path.split(os.sep)[0] for path in written if path != outputs.MARKER}
            and set(files) <= set(written))


def write_output(tmp, files: dict):
    for path, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
        with open(os.path.join(tmp, path), "wb") as f:
            f.write(data)


def place_target(root, place: str, command: str, earlier: dict, inside: dict, monkeypatch) -> tuple:
    """(output path, inputs, user files planted inside it) for one of PLACES."""
    target, inputs, planted_inside = os.path.join(root, "out"), (), {}
    if place == "empty":
        os.makedirs(target)
    elif place == "user_files_inside":
        planted_inside = plant(target, inside)
    elif place in ("earlier_output", "earlier_output_then_user_file", "earlier_unmarked_output",
                   "earlier_output_of_another_command"):
        other = "another command" if place == "earlier_output_of_another_command" else command
        with outputs.writing(target, other, "--output") as tmp:
            write_output(tmp, earlier)
        if place == "earlier_unmarked_output":
            os.remove(os.path.join(target, outputs.MARKER))
        if place == "earlier_output_then_user_file":
            planted_inside = {"my notes.txt": b"mine"}
            write_output(target, planted_inside)
    elif place == "working_directory":
        monkeypatch.chdir(root)
        target = "."
    elif place == "above_working_directory":
        os.makedirs(os.path.join(root, "work"), exist_ok=True)
        monkeypatch.chdir(os.path.join(root, "work"))
        target = root
    elif place == "holds_input":
        planted_inside = plant(target, {"model/config.json": b"{}"})
        inputs = (os.path.join(target, "model"),)
    return target, inputs, planted_inside


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(around=user_trees, inside=user_trees, earlier=written_trees, written=written_trees,
       place=st.sampled_from(PLACES), fails=st.booleans())
def test_no_output_changes_or_removes_a_file_it_did_not_write(tmp_path_factory, monkeypatch, around, inside, earlier,
                                                              written, place, fails):
    root = str(tmp_path_factory.mktemp("user"))
    command = "a command"
    with monkeypatch.context() as patch:
        planted = plant(root, around)
        target, inputs, planted_inside = place_target(root, place, command, earlier, inside, patch)
        inside_dir = os.path.join(root, "out")
        accepted = (place in ("new", "empty", "earlier_output")
                    or (place == "user_files_inside" and (not planted_inside or earlier_like(planted_inside, written)))
                    or (place == "earlier_unmarked_output" and earlier_like(earlier, written)))
        before = tree_digest(root)
        try:
            with outputs.writing(target, command, "--output", inputs) as tmp:
                write_output(tmp, written)
                if fails:
                    raise RuntimeError("the export failed half-way")
        except AlbertError as e:
            assert "\n" not in str(e)
            assert tree_digest(root) == before  # refused: nothing touched at all
            assert not accepted
        except RuntimeError:
            assert tree_digest(root) == before  # failed: nothing left, nothing changed
            assert fails
        else:
            assert accepted and not fails
            found = tree_digest(inside_dir)
            assert set(found) == set(written) | {outputs.MARKER}
            with open(os.path.join(inside_dir, outputs.MARKER)) as f:
                assert json.load(f) == {"command": command, "files": sorted(written)}
        user_files_intact(root, planted)
        if not (accepted and planted_inside and place == "user_files_inside"):
            user_files_intact(inside_dir, planted_inside)
        assert not [n for n in os.listdir(root) if ".tmp-" in n or ".old-" in n]


@pytest.mark.parametrize("path, what", [(".", "the working directory"), ("..", "above the working directory"),
                                        ("/", "the root directory"), ("~", "your home directory")])
def test_the_working_directory_its_parents_root_and_home_are_refused(tmp_path, monkeypatch, path, what):
    monkeypatch.chdir(tmp_path)
    path = os.path.expanduser(path)
    with pytest.raises(AlbertError) as e:
        outputs.check(path, "albert.convert --to=release", "--output")
    assert str(e.value) == (f"--output {path} is {what}: write the output into a new directory of its own (e.g. "
                            f"{os.path.join(path, 'export')})")


def test_an_output_holding_the_input_is_refused(tmp_path):
    model = tmp_path / "run" / "model"
    model.mkdir(parents=True)
    with pytest.raises(AlbertError, match=r"^--output \S+/run holds \S+/run/model, an input of this command: write "
                                          r"the output into a new directory$"):
        outputs.check(str(tmp_path / "run"), "albert.convert --to=release", "--output", (str(model),))
    with pytest.raises(AlbertError, match=r"^--output \S+/model is an input of this command: write the output into a "
                                          r"new directory$"):
        outputs.check(str(model), "albert.convert --to=release", "--output", (str(model),))
    outputs.check(str(model / "converted"), "albert.convert --to=release", "--output", (str(model),))  # inside: yes


def test_a_refusal_names_the_directory_and_its_files(tmp_path):
    target = tmp_path / "export"
    plant(str(target), {"notes.txt": b"x", "data/a.csv": b"y", "b.txt": b"", "c.txt": b"", "d.txt": b"",
                        "e.txt": b""})
    with pytest.raises(AlbertError) as e:
        outputs.check(str(target), "run_classifier.py --export_dir", "--export_dir")
    assert str(e.value) == (f"--export_dir {target} holds files this command did not write (b.txt, c.txt, d.txt, "
                            "data/a.csv, e.txt and 1 more): pass a new or empty directory (nothing was written)")


def test_a_users_file_named_as_an_output_file_is_not_taken_for_an_earlier_output(tmp_path):
    """A folder holding only the user's own `saved_model.pb` (or model.tflite) is not an earlier export: refused at
    the last moment, the user's file byte-identical."""
    target = tmp_path / "export"
    plant(str(target), {"saved_model.pb": b"mine"})
    with pytest.raises(AlbertError, match=r"holds files this command did not write \(saved_model.pb\)"):
        with outputs.writing(str(target), "model.export", "filepath") as out:
            write_output(out, {"saved_model.pb": b"1", "variables/v": b"2", "fingerprint.pb": b"3"})
    assert tree_digest(str(tmp_path)) == {"export/saved_model.pb": tree_digest(str(target))["saved_model.pb"]}
    assert (target / "saved_model.pb").read_bytes() == b"mine"


def test_an_output_named_by_a_link_goes_where_the_link_points_and_the_link_stays(tmp_path):
    (tmp_path / "v1").mkdir()
    os.symlink("v1", tmp_path / "latest")
    with outputs.writing(str(tmp_path / "latest"), "model.export", "filepath") as out:
        write_output(out, {"saved_model.pb": b"1"})
    assert os.readlink(tmp_path / "latest") == "v1" and sorted(os.listdir(tmp_path)) == ["latest", "v1"]
    assert sorted(os.listdir(tmp_path / "v1")) == [outputs.MARKER, "saved_model.pb"]


def test_writers_nest_into_one_output_moved_whole(tmp_path):
    target = str(tmp_path / "export")
    with outputs.writing(target, "run_squad.py --export_dir", "--export_dir") as out:
        write_output(out, {"saved_model.pb": b"1"})
        with outputs.writing(os.path.join(out, "text"), "a SavedModel export", "the export directory") as inner:
            assert inner == os.path.join(out, "text")
            write_output(inner, {"saved_model.pb": b"2"})
        assert not os.path.exists(target)  # nothing in place before the whole is complete
    assert tree_digest(target).keys() == {"saved_model.pb", "text/saved_model.pb", outputs.MARKER}


def test_an_empty_mount_point_is_filled_in_place(tmp_path, monkeypatch):
    """A directory that cannot be renamed (a container's volume: EBUSY) receives the new files itself."""
    target = tmp_path / "volume"
    target.mkdir()
    real_replace = os.replace

    def replace(a, b):
        if os.fspath(a) == str(target):
            raise OSError(16, "Device or resource busy")
        return real_replace(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with outputs.writing(str(target), "model.export", "filepath") as out:
        write_output(out, {"saved_model.pb": b"1"})
    with outputs.writing(str(target), "model.export", "filepath") as out:
        write_output(out, {"saved_model.pb": b"2", "variables/v": b"3"})
    assert tree_digest(str(target)).keys() == {"saved_model.pb", "variables/v", outputs.MARKER}
    assert (target / "saved_model.pb").read_bytes() == b"2"


# ------------------------------------------------------------------ the commands themselves, in this process
@pytest.fixture(scope="module")
def converted_once(tmp_path_factory):
    from albert.tasks.conversion import convert

    out = str(tmp_path_factory.mktemp("convert") / "release")
    convert(os.path.join(WEIGHT_FIXTURES, "hf_classifier"), out, "release")
    return sorted(os.listdir(out))  # the marker among them


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(around=user_trees, inside=user_trees, place=st.sampled_from(("new", "user_files_inside", "working_directory",
                                                                     "above_working_directory", "earlier_output")))
def test_convert_leaves_every_user_file_as_it_was(tmp_path_factory, monkeypatch, converted_once, around, inside,
                                                 place):
    from albert.tasks.conversion import convert

    root = str(tmp_path_factory.mktemp("user"))
    with monkeypatch.context() as patch:
        planted = plant(root, around)
        target, _, planted_inside = place_target(root, place if place != "earlier_output" else "new", "", {}, inside,
                                                 patch)
        source = os.path.join(WEIGHT_FIXTURES, "hf_classifier")
        if place == "earlier_output":
            convert(source, target, "release")
        earlier = place == "user_files_inside" and planted_inside and earlier_like(
            planted_inside, dict.fromkeys(converted_once))
        accepted = place in ("new", "earlier_output") or (place == "user_files_inside" and (
            not planted_inside or earlier))
        before = tree_digest(root)
        try:
            convert(source, target, "release", names={"output": "--output", "directory": "--input",
                                                     "checkpoint": "--checkpoint_name", "spm": "--spm_model_file"})
        except AlbertError as e:
            assert "\n" not in str(e) and str(e).startswith(f"--output {target} ")
            assert tree_digest(root) == before
            assert not accepted
        else:
            assert accepted
            assert sorted(os.listdir(os.path.join(root, "out"))) == converted_once
        user_files_intact(root, planted)
        if not earlier:
            user_files_intact(os.path.join(root, "out"), planted_inside)


def test_model_export_refuses_a_directory_of_user_files_and_replaces_its_own(tmp_path):
    import keras

    from albert import AlbertClassifier
    from tests.helpers import tiny_config

    model = AlbertClassifier(tiny_config(), num_labels=2)
    model({"input_ids": keras.ops.ones((1, 4), "int32"), "input_mask": keras.ops.ones((1, 4), "int32"),
           "segment_ids": keras.ops.zeros((1, 4), "int32")})
    mine = tmp_path / "mine"
    plant(str(mine), {"notes.txt": b"x"})
    before = tree_digest(str(tmp_path))
    with pytest.raises(AlbertError, match=r"^filepath \S+/mine holds files this command did not write \(notes.txt\)"):
        model.export(str(mine), verbose=False)
    assert tree_digest(str(tmp_path)) == before
    model.export(str(tmp_path / "serving"), verbose=False)
    first = tree_digest(str(tmp_path / "serving"))
    model.export(str(tmp_path / "serving"), verbose=False)  # a rerun replaces its own export
    assert tree_digest(str(tmp_path / "serving")).keys() == first.keys()
    os.remove(tmp_path / "serving" / outputs.MARKER)  # written by a version without the marker: still its own
    model.export(str(tmp_path / "serving"), verbose=False)
    assert tree_digest(str(tmp_path / "serving")).keys() == first.keys()


def test_a_stop_request_swallowed_by_a_finalizer_still_keeps_the_output_out(tmp_path):
    """SIGTERM arriving while a finalizer (`__del__`) runs: Python drops the KeyboardInterrupt there, with a
    traceback on stderr; the request is recorded all the same, so the output is not moved into place, the
    temporary is removed and the command line says "interrupted" in one line, exit 130."""
    script = tmp_path / "prog.py"
    script.write_text(f"""
import gc, os, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from absl import flags
from albert.ground import cli, outputs

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)  # delivered while the finalizer runs

def main(argv):
    with outputs.writing({str(tmp_path / 'out')!r}, "prog.py", "--out") as out:
        open(os.path.join(out, "model.bin"), "w").write("weights")
        Finalized()
        gc.collect()
        print("the block went on")

cli.run(main)
""")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr.splitlines()) == (130, "the block went on\n", [
        "prog.py: interrupted; run the command again to finish (training resumes from its last checkpoint)"])
    assert sorted(os.listdir(tmp_path)) == ["prog.py"]
