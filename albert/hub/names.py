"""The model names a user may type, each mapped to its canonical source: ONE table (docs/weights.md lists it).

Sources are references themselves (albert.hub.resolve): the original release's tarballs, TF Hub handles (the
original's TF1 modules and Model Garden's TF2 encoders), keras-hub presets on Kaggle and Hugging Face repos.
"""

import difflib

# One row per name: (name, family, source). Families: release (the original's tarballs; `_zh`: Chinese, WordPiece
# vocab_chinese.txt), tf1_hub (the original's TF1 Hub modules: /2 carried a native Einsum op, /3 replaced it; the
# bare name is /3), model_garden (Model Garden's TF2 encoders), keras_hub (keras-hub presets on Kaggle),
# huggingface (Hugging Face's ports). docs/weights.md lists the same rows (tests/test_hub.py checks it).
TABLE = (
    ("albert_base_v1", "release", "https://storage.googleapis.com/albert_models/albert_base_v1.tar.gz"),
    ("albert_base_v2", "release", "https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz"),
    ("albert_base_zh", "release", "https://storage.googleapis.com/albert_models/albert_base_zh.tar.gz"),
    ("albert_large_v1", "release", "https://storage.googleapis.com/albert_models/albert_large_v1.tar.gz"),
    ("albert_large_v2", "release", "https://storage.googleapis.com/albert_models/albert_large_v2.tar.gz"),
    ("albert_large_zh", "release", "https://storage.googleapis.com/albert_models/albert_large_zh.tar.gz"),
    ("albert_xlarge_v1", "release", "https://storage.googleapis.com/albert_models/albert_xlarge_v1.tar.gz"),
    ("albert_xlarge_v2", "release", "https://storage.googleapis.com/albert_models/albert_xlarge_v2.tar.gz"),
    ("albert_xlarge_zh", "release", "https://storage.googleapis.com/albert_models/albert_xlarge_zh.tar.gz"),
    ("albert_xxlarge_v1", "release", "https://storage.googleapis.com/albert_models/albert_xxlarge_v1.tar.gz"),
    ("albert_xxlarge_v2", "release", "https://storage.googleapis.com/albert_models/albert_xxlarge_v2.tar.gz"),
    ("albert_xxlarge_zh", "release", "https://storage.googleapis.com/albert_models/albert_xxlarge_zh.tar.gz"),
    ("albert_base/1", "tf1_hub", "https://tfhub.dev/google/albert_base/1"),
    ("albert_base/2", "tf1_hub", "https://tfhub.dev/google/albert_base/2"),
    ("albert_base/3", "tf1_hub", "https://tfhub.dev/google/albert_base/3"),
    ("albert_base", "tf1_hub", "https://tfhub.dev/google/albert_base/3"),
    ("albert_large/1", "tf1_hub", "https://tfhub.dev/google/albert_large/1"),
    ("albert_large/2", "tf1_hub", "https://tfhub.dev/google/albert_large/2"),
    ("albert_large/3", "tf1_hub", "https://tfhub.dev/google/albert_large/3"),
    ("albert_large", "tf1_hub", "https://tfhub.dev/google/albert_large/3"),
    ("albert_xlarge/1", "tf1_hub", "https://tfhub.dev/google/albert_xlarge/1"),
    ("albert_xlarge/2", "tf1_hub", "https://tfhub.dev/google/albert_xlarge/2"),
    ("albert_xlarge/3", "tf1_hub", "https://tfhub.dev/google/albert_xlarge/3"),
    ("albert_xlarge", "tf1_hub", "https://tfhub.dev/google/albert_xlarge/3"),
    ("albert_xxlarge/1", "tf1_hub", "https://tfhub.dev/google/albert_xxlarge/1"),
    ("albert_xxlarge/2", "tf1_hub", "https://tfhub.dev/google/albert_xxlarge/2"),
    ("albert_xxlarge/3", "tf1_hub", "https://tfhub.dev/google/albert_xxlarge/3"),
    ("albert_xxlarge", "tf1_hub", "https://tfhub.dev/google/albert_xxlarge/3"),
    ("albert_en_base", "model_garden", "https://tfhub.dev/tensorflow/albert_en_base/3"),
    ("albert_en_large", "model_garden", "https://tfhub.dev/tensorflow/albert_en_large/3"),
    ("albert_en_xlarge", "model_garden", "https://tfhub.dev/tensorflow/albert_en_xlarge/3"),
    ("albert_en_xxlarge", "model_garden", "https://tfhub.dev/tensorflow/albert_en_xxlarge/3"),
    ("albert_base_en_uncased", "keras_hub", "kaggle://keras/albert/keras/albert_base_en_uncased/5"),
    ("albert_large_en_uncased", "keras_hub", "kaggle://keras/albert/keras/albert_large_en_uncased/5"),
    ("albert_extra_large_en_uncased", "keras_hub", "kaggle://keras/albert/keras/albert_extra_large_en_uncased/5"),
    ("albert_extra_extra_large_en_uncased", "keras_hub",
     "kaggle://keras/albert/keras/albert_extra_extra_large_en_uncased/5"),
    ("albert-base-v1", "huggingface", "hf://albert/albert-base-v1"),
    ("albert-base-v2", "huggingface", "hf://albert/albert-base-v2"),
    ("albert-large-v1", "huggingface", "hf://albert/albert-large-v1"),
    ("albert-large-v2", "huggingface", "hf://albert/albert-large-v2"),
    ("albert-xlarge-v1", "huggingface", "hf://albert/albert-xlarge-v1"),
    ("albert-xlarge-v2", "huggingface", "hf://albert/albert-xlarge-v2"),
    ("albert-xxlarge-v1", "huggingface", "hf://albert/albert-xxlarge-v1"),
    ("albert-xxlarge-v2", "huggingface", "hf://albert/albert-xxlarge-v2"),
)
NAMES = {name: source for name, _, source in TABLE}
FAMILIES = {name: family for name, family, _ in TABLE}


def markdown() -> str:
    """The table as docs/weights.md shows it: a row per name."""
    return "\n".join(["| Name | Family | Source |", "|---|---|---|"]
                     + [f"| `{name}` | {family} | `{source}` |" for name, family, source in TABLE])


def closest(name: str, count: int = 3) -> list:
    return difflib.get_close_matches(name, list(NAMES), n=count, cutoff=0.5)
