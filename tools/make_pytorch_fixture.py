"""tests/fixtures/weights/hf_classifier_pytorch: the Hugging Face classifier fixture saved as PyTorch saves it
(`torch.save` of the state dict, zip format), for albert.weights.torch_pickle's tests. Run with the reference
environment (tools/requirements-reference.txt): python tools/make_pytorch_fixture.py"""

import os
import shutil

import torch
from safetensors.torch import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_classifier")
TARGET = SOURCE + "_pytorch"

os.makedirs(TARGET, exist_ok=True)
state = load_file(os.path.join(SOURCE, "model.safetensors"))
# One tensor kept as a transposed view of its storage (stride != contiguous) and one in bfloat16 beside the
# float32 one, so the reader's strides and dtypes are exercised as transformers' own files can have them.
state["classifier.weight"] = state["classifier.weight"].t().contiguous().t()
torch.save(state, os.path.join(TARGET, "pytorch_model.bin"))
torch.save({"a": torch.arange(6, dtype=torch.float32).reshape(2, 3).t(), "b": torch.tensor([1.5, -2.25], dtype=torch.bfloat16),
            "c": torch.tensor([1, 2, 3], dtype=torch.int64)}, os.path.join(TARGET, "strided_bf16.bin"))
for name in ("config.json", "spiece.model"):
    shutil.copyfile(os.path.join(SOURCE, name), os.path.join(TARGET, name))
print("wrote", TARGET)
