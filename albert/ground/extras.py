"""The optional extras: which packages each one installs, and the one check that a feature's extra is there.

`requirements.txt` is the core install; every other package is an extra, imported only inside the one module that
owns its feature (albert.export.onnx, albert.data.beam, albert.data.beam_dask), when the feature is asked for. The
command lines call `require` before TensorFlow starts (`importlib.util.find_spec`: nothing is imported), so asking
for a feature whose extra is missing is one line naming the extra and its install command, before anything is
written. tests/test_architecture.py imports every module of the package with these packages refused.
"""

import dataclasses
import importlib.util

from albert.ground.errors import AlbertError


@dataclasses.dataclass(frozen=True)
class Extra:
    packages: tuple  # the import names the feature needs
    extra: str  # pyproject.toml's optional-dependencies entry that installs them
    requirements: str  # the same pins as a requirements file

    def install(self) -> str:
        return f"pip install '.[{self.extra}]' (or -r {self.requirements})"


EXTRAS = {
    "onnx": Extra(("tf2onnx", "onnx", "onnxruntime"), "onnx", "requirements-onnx.txt"),
    "beam": Extra(("apache_beam",), "beam", "requirements-beam.txt"),
    "dask": Extra(("apache_beam", "dask", "distributed"), "beam", "requirements-beam.txt"),  # Beam's DaskRunner
}


def missing(extra: str) -> list:
    """The packages of `extra` that are not installed (found without importing them)."""
    return [name for name in EXTRAS[extra].packages if not _found(name)]


def _found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a finder that refuses the name (tests/helpers.py's refusing_extras)
        return False


def require(extra: str, feature: str, alternative: str = ""):
    """AlbertError, one line, unless every package of `extra` is installed: `feature` (what the user asked for, in
    the user's words: a flag and its value) needs them; `alternative` says how to do without."""
    absent = missing(extra)
    if absent:
        raise AlbertError(f"{feature} needs the '{EXTRAS[extra].extra}' extra ({', '.join(absent)} not installed): "
                          f"{EXTRAS[extra].install()}{', or ' + alternative if alternative else ''}")
