"""The model names a user may type, each mapped to its canonical source: ONE table (docs/weights.md lists it).

Sources are references themselves (albert.hub.resolve): the original release's tarballs, TF Hub handles (the
original's TF1 modules and Model Garden's TF2 encoders), keras-hub presets on Kaggle and Hugging Face repos.
"""

import difflib

RELEASE = "https://storage.googleapis.com/albert_models"
TFHUB = "https://tfhub.dev"


def _release(name: str) -> str:
    return f"{RELEASE}/{name}.tar.gz"


SIZES = ("base", "large", "xlarge", "xxlarge")
KERAS_HUB_SIZES = {"base": "albert_base_en_uncased", "large": "albert_large_en_uncased",
                   "xlarge": "albert_extra_large_en_uncased", "xxlarge": "albert_extra_extra_large_en_uncased"}

NAMES = {}
for _size in SIZES:
    for _version in ("v1", "v2"):
        NAMES[f"albert_{_size}_{_version}"] = _release(f"albert_{_size}_{_version}")  # the release's tarballs
        NAMES[f"albert-{_size}-{_version}"] = f"hf://albert/albert-{_size}-{_version}"  # Hugging Face's ports
    NAMES[f"albert_{_size}_zh"] = _release(f"albert_{_size}_zh")  # Chinese, WordPiece vocab_chinese.txt
    for _hub_version in (1, 2, 3):  # the original's TF1 Hub modules (/2 carried a native Einsum op; /3 replaced it)
        NAMES[f"albert_{_size}/{_hub_version}"] = f"{TFHUB}/google/albert_{_size}/{_hub_version}"
    NAMES[f"albert_{_size}"] = f"{TFHUB}/google/albert_{_size}/3"
    NAMES[f"albert_en_{_size}"] = f"{TFHUB}/tensorflow/albert_en_{_size}/3"  # Model Garden's TF2 encoders
    NAMES[KERAS_HUB_SIZES[_size]] = f"kaggle://keras/albert/keras/{KERAS_HUB_SIZES[_size]}/5"  # keras-hub presets


def closest(name: str, count: int = 3) -> list:
    return difflib.get_close_matches(name, list(NAMES), n=count, cutoff=0.5)
