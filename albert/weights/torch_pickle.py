"""`pytorch_model.bin` read without PyTorch, and without running what a pickle asks for.

A PyTorch checkpoint (`torch.save`, the zip format of PyTorch >= 1.6) is a zip archive: `<name>/data.pkl` pickles
the state dict, each tensor a call of `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` whose
storage is a persistent id `('storage', torch.<Type>Storage, key, location, numel)` naming the raw little-endian
bytes in `<name>/data/<key>`. The unpickler below knows exactly those few names (and `collections.OrderedDict`,
`torch._utils._rebuild_parameter`) and rebuilds NumPy arrays from them; any other name in the pickle -- the way
a malicious pickle runs code -- refuses the file, naming it, before anything is called.
"""

import collections
import pickle
import zipfile

import numpy as np

from albert.ground.errors import AlbertError

STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
            "BFloat16Storage": "bfloat16", "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
            "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class _Storage:
    def __init__(self, name: str):
        self.name = name


def _rebuild_tensor(storage, offset, size, stride, *unused):
    if not size:
        return storage[offset:offset + 1].reshape(()).copy()
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size), strides=[s * item for s in stride])
    return np.ascontiguousarray(view)


def _rebuild_parameter(data, *unused):
    return data


class _Unpickler(pickle.Unpickler):
    ALLOWED = {("collections", "OrderedDict"): collections.OrderedDict,
               ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
               ("torch._utils", "_rebuild_parameter"): _rebuild_parameter}

    def __init__(self, file, archive: zipfile.ZipFile, prefix: str, path: str):
        super().__init__(file)
        self.archive, self.prefix, self.path = archive, prefix, path

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return self.ALLOWED[(module, name)]
        if module == "torch" and name in STORAGES:
            return _Storage(name)
        raise AlbertError(f"{self.path}: its pickle names {module}.{name}, which a PyTorch state dict does not: "
                          "refused, nothing run (save the weights as model.safetensors)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Storage)):
            raise AlbertError(f"{self.path}: an unexpected persistent id in its pickle: refused")
        kind = STORAGES[pid[1].name]
        raw = self.archive.read(f"{self.prefix}/data/{pid[2]}")
        if kind == "bfloat16":  # no NumPy bfloat16: the upper half of a float32
            return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        return np.frombuffer(raw, np.dtype(kind).newbyteorder("<"))


def load(path: str) -> dict:
    """{name: NumPy array} of a PyTorch state dict file."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise AlbertError(f"{path}: not a PyTorch zip checkpoint (the legacy format of PyTorch < 1.6, or damaged); "
                          "save the weights as model.safetensors") from None
    with archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise AlbertError(f"{path}: a zip file without one data.pkl: not a PyTorch checkpoint")
        prefix = pickles[0][:-len("/data.pkl")]
        with archive.open(pickles[0]) as f:
            try:
                state = _Unpickler(f, archive, prefix, path).load()
            except AlbertError:
                raise
            except (pickle.UnpicklingError, EOFError, KeyError, ValueError) as e:
                raise AlbertError(f"{path}: a damaged PyTorch checkpoint ({e})") from None
    if not isinstance(state, dict) or not all(isinstance(v, np.ndarray) for v in state.values()):
        raise AlbertError(f"{path}: does not hold a state dict of tensors")
    return dict(state)
