"""`pytorch_model.bin` read without PyTorch, and without running what a pickle asks for.

A PyTorch checkpoint (`torch.save`, the zip format of PyTorch >= 1.6) is a zip archive: `<name>/data.pkl` pickles
the state dict, each tensor a call of `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` whose
storage is a persistent id `('storage', torch.<Type>Storage, key, location, numel)` naming the raw little-endian
bytes in `<name>/data/<key>`. The unpickler below knows exactly those few names (and `collections.OrderedDict`,
`torch._utils._rebuild_parameter`) and rebuilds NumPy arrays from them; any other name in the pickle -- the way
a malicious pickle runs code -- refuses the file, naming it, before anything is called.

Nothing the pickle declares is believed: each storage's zip entry must hold exactly its declared element count
times the element size, and each tensor's offset, sizes and strides (non-negative integers) must address elements
inside its storage, all checked before any storage's bytes are read; a file that claims what it does not hold is
one AlbertError naming the file and the tensor or storage, never memory from outside the file.
"""

import collections
import math
import pickle
import zipfile

import numpy as np

from albert.ground.errors import AlbertError

STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
            "BFloat16Storage": "bfloat16", "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
            "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_}


ITEM_BYTES = {name: 2 if kind == "bfloat16" else np.dtype(kind).itemsize for name, kind in STORAGES.items()}


class _Storage:
    def __init__(self, name: str):
        self.name = name


class _StorageRef:
    """A storage the pickle names: its zip entry, element type and count, checked against the entry's size; its
    bytes are read only when a tensor that fits inside it is built (`_materialize`)."""

    def __init__(self, entry: str, kind, numel: int):
        self.entry, self.kind, self.numel = entry, kind, numel


class _Pending:
    """A tensor as the pickle declares it: (storage, offset, size, stride), built once its name is known."""

    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride


def _rebuild_tensor(storage, offset, size, stride, *unused):
    return _Pending(storage, offset, size, stride)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_view(path: str, name: str, tensor: _Pending):
    """AlbertError unless the declared view lies inside its storage: non-negative integer offset, sizes and strides
    of one rank, and every element it addresses (offset + sum((size - 1) * stride)) before the storage's end."""
    storage, offset, size, stride = tensor.storage, tensor.offset, tensor.size, tensor.stride
    where = f"{path}: tensor {name!r}"
    if not isinstance(storage, _StorageRef):
        raise AlbertError(f"{where} has no storage: refused")
    if not (isinstance(size, tuple) and isinstance(stride, tuple) and len(size) == len(stride)
            and all(map(_is_count, size)) and all(map(_is_count, stride)) and _is_count(offset)):
        raise AlbertError(f"{where} declares offset {offset!r}, size {size!r}, stride {stride!r}: each a "
                          "non-negative integer, one stride per dimension; refused")
    count = math.prod(size)
    if count == 0:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.numel or count > storage.numel:
        raise AlbertError(f"{where} declares {count} elements (size {list(size)}, stride {list(stride)}, offset "
                          f"{offset}) reaching element {last} of a storage of {storage.numel}: refused")


def _materialize(archive: zipfile.ZipFile, tensor: _Pending, cache: dict) -> np.ndarray:
    """A tensor `_check_view` passed, from its storage's bytes (each storage read once)."""
    storage = tensor.storage
    if storage.entry not in cache:
        cache[storage.entry] = _read_storage(archive, storage)
    values = cache[storage.entry]
    size, item = tuple(tensor.size), values.itemsize
    if math.prod(size) == 0:
        return np.zeros(size, values.dtype)
    view = np.lib.stride_tricks.as_strided(values[tensor.offset:], shape=size,
                                           strides=[s * item for s in tensor.stride])
    return np.ascontiguousarray(view)


def _read_storage(archive: zipfile.ZipFile, storage: _StorageRef) -> np.ndarray:
    raw = archive.read(storage.entry)
    if storage.kind == "bfloat16":  # no NumPy bfloat16: the upper half of a float32
        return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(raw, np.dtype(storage.kind).newbyteorder("<"))


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
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Storage)
                and isinstance(pid[2], str) and _is_count(pid[4])):
            raise AlbertError(f"{self.path}: an unexpected persistent id in its pickle: refused")
        name, key, numel = pid[1].name, pid[2], pid[4]
        entry = f"{self.prefix}/data/{key}"
        try:
            info = self.archive.getinfo(entry)
        except KeyError:
            raise AlbertError(f"{self.path}: its pickle names storage {key!r}, which the archive does not hold "
                              f"({entry}): refused") from None
        if info.file_size != numel * ITEM_BYTES[name]:
            raise AlbertError(f"{self.path}: storage {key!r} declares {numel} elements of {ITEM_BYTES[name]} bytes "
                              f"({numel * ITEM_BYTES[name]} bytes) but {entry} holds {info.file_size}: refused")
        return _StorageRef(entry, STORAGES[name], numel)


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
            except (pickle.UnpicklingError, EOFError, KeyError, ValueError, TypeError, AttributeError,
                    IndexError) as e:
                raise AlbertError(f"{path}: a damaged PyTorch checkpoint ({e})") from None
        if not isinstance(state, dict) or not all(isinstance(v, _Pending) and isinstance(k, str)
                                                  for k, v in state.items()):
            raise AlbertError(f"{path}: does not hold a state dict of tensors")
        for name, tensor in state.items():  # every view checked before any storage is read
            _check_view(path, name, tensor)
        cache = {}
        try:
            return {name: _materialize(archive, tensor, cache) for name, tensor in state.items()}
        except (zipfile.BadZipFile, OSError, ValueError) as e:  # a CRC or length the entry's bytes do not match
            raise AlbertError(f"{path}: a damaged PyTorch checkpoint ({e})") from None
