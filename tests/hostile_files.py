"""Files that claim what they do not hold, written by the tests themselves (no PyTorch needed): a `torch.save` zip
whose pickle says whatever the test wants, with the same opcodes PyTorch writes."""

import contextlib
import io
import pickle
import sys
import types
import zipfile


@contextlib.contextmanager
def _fake_torch():
    """Modules named `torch` and `torch._utils` for the pickler to find the names PyTorch's pickles use."""
    torch, utils = types.ModuleType("torch"), types.ModuleType("torch._utils")

    def _rebuild_tensor_v2(*args):
        raise AssertionError("never called while writing")

    _rebuild_tensor_v2.__module__, _rebuild_tensor_v2.__qualname__ = "torch._utils", "_rebuild_tensor_v2"
    utils._rebuild_tensor_v2 = _rebuild_tensor_v2
    for name in ("FloatStorage", "LongStorage", "BFloat16Storage"):
        setattr(torch, name, type(name, (), {"__module__": "torch"}))
    torch._utils = utils
    saved = {name: sys.modules.get(name) for name in ("torch", "torch._utils")}
    sys.modules.update({"torch": torch, "torch._utils": utils})
    try:
        yield torch, utils
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class _Tensor:
    def __init__(self, rebuild, storage, offset, size, stride):
        self.args = (rebuild, storage, offset, size, stride)

    def __reduce__(self):
        rebuild, storage, offset, size, stride = self.args
        return rebuild, (storage, offset, size, stride, False, {})


class _StorageId:
    def __init__(self, pid):
        self.pid = pid


def torch_file(path, tensors: dict, storages: dict, kind: str = "FloatStorage"):
    """A PyTorch zip checkpoint at `path`: `tensors` {name: (storage key, offset, size, stride)}, `storages` {key:
    (declared element count, the bytes its entry holds)}."""
    with _fake_torch() as (torch, utils):
        ids = {key: _StorageId(("storage", getattr(torch, kind), key, "cpu", numel))
               for key, (numel, _) in storages.items()}
        state = {name: _Tensor(utils._rebuild_tensor_v2, ids[key], offset, size, stride)
                 for name, (key, offset, size, stride) in tensors.items()}
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=2)
        pickler.persistent_id = lambda obj: obj.pid if isinstance(obj, _StorageId) else None
        pickler.dump(state)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", buffer.getvalue())
        for key, (_, raw) in storages.items():
            archive.writestr(f"archive/data/{key}", raw)
    return str(path)
