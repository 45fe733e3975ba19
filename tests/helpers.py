"""Small shared pieces of the tests: tiny configs, fixture paths, a padded batch, a directory's bytes, and the one
harness that runs a command as a user types it (`run_command`) and reads its one-line error (`one_line_error`)."""

import hashlib
import json
import os
import subprocess
import sys

import numpy as np

from albert import AlbertConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
PARITY_CASES = ("e_lt_h_shared", "groups3_inner2", "e_eq_h_relu")


def run_command(command: str, *args, cwd=None, env=None, timeout=600, check=False) -> subprocess.CompletedProcess:
    """`command` run in its own process as a user runs it: a script at the top of the repository (`run_squad.py`),
    a tool (`tools/answer.py`) or a module (`albert.convert`: `python -m`); text output captured; `env`: variables
    added to this process's (TensorFlow's native INFO lines off, the checkout importable); `check`: exit status 0
    asserted, with the command and its stderr's end as the message."""
    program = ["-m", command] if command.startswith("albert.") else [os.path.join(ROOT, command)]
    environment = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    result = subprocess.run([sys.executable, *program, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                            env=environment, timeout=timeout)
    if check:
        assert result.returncode == 0, f"{command} {' '.join(map(str, args))}\n{result.stderr[-4000:]}"
    return result


def one_line_error(result: subprocess.CompletedProcess) -> str:
    """The one line a refused command printed (exit status 2, nothing on stdout's end asserted)."""
    lines = result.stderr.splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-3000:]
    return lines[0]


def tiny_config(**changes) -> AlbertConfig:
    values = dict(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=3, num_attention_heads=4,
                  intermediate_size=24, max_position_embeddings=16, initializer_range=0.2)
    values.update(changes)
    return AlbertConfig(**values)


def padded_batch(config: AlbertConfig, batch=3, seq=10, predictions=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    lengths = np.linspace(seq, max(3, seq // 2), batch).astype(int)
    ids = rng.integers(5, config.vocab_size, size=(batch, seq)).astype(np.int32)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
    segments = ((np.arange(seq)[None, :] >= lengths[:, None] // 2) & (mask == 1)).astype(np.int32)
    positions = np.stack([rng.choice(np.arange(1, n), predictions, replace=False) for n in lengths])
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": segments,
            "masked_lm_positions": np.sort(positions, axis=1).astype(np.int32)}


def shared_directory() -> str:
    """../shared beside this checkout, or beside the repository it was cloned from (a fresh clone elsewhere, as CI
    makes one); ALBERT_SHARED overrides both."""
    if os.environ.get("ALBERT_SHARED"):
        return os.environ["ALBERT_SHARED"]
    candidates = [os.path.join(os.path.dirname(ROOT), "shared")]
    origin = subprocess.run(["git", "-C", ROOT, "config", "--get", "remote.origin.url"], capture_output=True,
                            text=True).stdout.strip()
    if origin and os.path.isdir(origin):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(origin)), "shared"))
    return next((c for c in candidates if os.path.isdir(c)), candidates[0])


WEIGHT_FIXTURES = os.path.join(FIXTURES, "weights")
HUB_ARTIFACTS = os.path.join(shared_directory(), "hub_artifacts")  # the real hub artifacts (../shared)


def tree_digest(directory) -> dict:
    """{path relative to `directory`: SHA-256 of its bytes} of every file under it: equal before and after a run
    means the run changed, added and removed nothing there."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = hashlib.sha256(f.read()).hexdigest()
    return found


def resized_config(path, directory, **changes) -> str:
    """A copy of the JSON config at `path` with `changes`, written in `directory`: the path."""
    with open(path) as f:
        config = dict(json.load(f), **changes)
    target = os.path.join(directory, "resized_config.json")
    with open(target, "w") as f:
        json.dump(config, f)
    return target


def golden(case) -> dict:
    """The reference outputs of a weights fixture (tests/fixtures/weights/<case>/golden.npz)."""
    return dict(np.load(os.path.join(WEIGHT_FIXTURES, case, "golden.npz")))


REFUSE_EXTRAS = '''import sys


class RefuseExtras:
    """A meta-path finder that refuses the optional extras, as if only requirements.txt were installed."""

    NAMES = {names}

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.NAMES:
            raise ModuleNotFoundError(f"No module named {{name!r}} (refused: core install only)", name=name)
        return None


sys.meta_path.insert(0, RefuseExtras())
'''


def refusing_extras(directory, names=None) -> dict:
    """The environment of a Python process in which every package of albert.ground.extras' extras cannot be found
    nor imported (a `sitecustomize` in `directory` installs a meta-path finder that refuses them): the core install,
    in the suite's venv that holds the extras. `names`: refuse only these."""
    from albert.ground.extras import EXTRAS

    names = names or sorted({name.split(".")[0] for extra in EXTRAS.values() for name in extra.packages})
    with open(os.path.join(directory, "sitecustomize.py"), "w") as f:
        f.write(REFUSE_EXTRAS.format(names=set(names)))
    return dict(os.environ, PYTHONPATH=f"{directory}{os.pathsep}{ROOT}")
