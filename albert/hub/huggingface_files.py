"""The files of a Hugging Face model repo, named once: what albert.hub.resolve downloads, what albert.weights reads
and detects, what albert.tasks.conversion writes."""

CONFIG = "config.json"
SPM_MODEL = "spiece.model"
TOKENIZER_CONFIG = "tokenizer_config.json"
# The weights, preferred first, each a single file or shards listed by an index (`<file>.index.json`): safetensors,
# the PyTorch pickle (read without PyTorch), transformers 4's TensorFlow classes' tf_model.h5.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "tf_model.h5")
SHARDS = {"model.safetensors": "model-*.safetensors", "pytorch_model.bin": "pytorch_model-*.bin"}


def download_patterns() -> tuple:
    """(the files every repo's download takes, the weights' patterns per format, preferred first)."""
    weights = tuple([name] + ([name + ".index.json", SHARDS[name]] if name in SHARDS else []) for name in WEIGHT_FILES)
    return [CONFIG, SPM_MODEL, TOKENIZER_CONFIG], weights
