"""AlbertConfig: the one model configuration, read from and written to the original `albert_config.json`."""

import copy
import dataclasses
import json
import math
import os
from typing import Any

from albert.ground.atomic import write_text
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.textfiles import decode_utf8, parse_config
from albert.weights import huggingface, keras_hub, model_garden, tf1_hub
from albert.weights.formats import config_format

ACTIVATIONS = ("gelu", "relu", "tanh", "linear")
SHARING = ("all", "attention", "ffn", "none")
# Keys of the released configs that no code of the original ever read; accepted and written back unchanged.
VESTIGIAL_KEYS = ("gap_size", "num_memory_blocks", "net_structure_type", "down_scale_factor", "layers_to_keep")
_POSITIVE_INT_KEYS = (
    "vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups",
    "num_attention_heads", "intermediate_size", "inner_group_num", "max_position_embeddings", "type_vocab_size",
)


@dataclasses.dataclass
class AlbertConfig:
    """Every key of the original `albert_config.json`, plus `sharing`.

    Defaults are the original class's (xxlarge shapes, no dropout); a key missing from a JSON file takes them.

    `sharing` picks which parts of a transformer block are shared across layers (the paper's ablation):
    `all` (the original: attention and FFN come from the layer's group), `attention` (attention shared, FFN per
    layer), `ffn` (FFN shared, attention per layer), `none` (nothing shared). A shared part of layer l is taken from
    group `int(l / num_hidden_layers * num_hidden_groups)`, exactly as the original maps layers to groups.
    """

    vocab_size: int
    embedding_size: int = 128
    hidden_size: int = 4096
    num_hidden_layers: int = 12
    num_hidden_groups: int = 1
    num_attention_heads: int = 64
    intermediate_size: int = 16384
    inner_group_num: int = 1
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    sharing: str = "all"
    # Vestigial keys: kept only so that a released config is written back as it was read.
    down_scale_factor: int = 1
    extra: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    # ----------------------------------------------------------------------------------------------- validation
    def validate(self, source: str = "AlbertConfig"):
        for key in _POSITIVE_INT_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise AlbertError(f"{source}: `{key}` must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise AlbertError(
                f"{source}: `hidden_size` ({self.hidden_size}) must be divisible by `num_attention_heads` "
                f"({self.num_attention_heads}); pick a head count that divides it")
        if self.hidden_act not in ACTIVATIONS:
            raise AlbertError(
                f"{source}: `hidden_act` {self.hidden_act!r} is unknown; use one of {', '.join(ACTIVATIONS)}")
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise AlbertError(f"{source}: `{key}` must be a number in [0, 1), got {value!r}")
        if isinstance(self.initializer_range, bool) or not isinstance(self.initializer_range, (int, float)) \
                or not math.isfinite(self.initializer_range) or self.initializer_range <= 0:
            raise AlbertError(f"{source}: `initializer_range` must be a positive finite number, got "
                              f"{self.initializer_range!r}")
        if self.sharing not in SHARING:
            raise AlbertError(f"{source}: `sharing` {self.sharing!r} is unknown; use one of {', '.join(SHARING)}")

    # ------------------------------------------------------------------------------------------ derived values
    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def check_sequence_length(self, length: int, what: str, source: str | None = None, fix: str = ""):
        """AlbertError unless a sequence of `length` (`what`: the flag or argument that set it) fits the position
        table: at most max_position_embeddings (of the config file `source`); `fix`: said after."""
        if length > self.max_position_embeddings:
            raise AlbertError(f"{what} {length} exceeds max_position_embeddings ({self.max_position_embeddings})"
                              + (f" of {source}" if source else "") + fix)

    def group_of_layer(self, layer_idx: int) -> int:
        """The original's layer -> group rule: float division, then truncation."""
        return int(layer_idx / self.num_hidden_layers * self.num_hidden_groups)

    def block_plan(self) -> list[tuple[str, str]]:
        """For every block application (layer-major, then inner group), the keys of its attention and FFN weights.

        A shared part is keyed by the original scope `group_<g>/inner_group_<k>`, g from the original's layer ->
        group rule; a part that `sharing` leaves unshared is keyed `layer_<l>/inner_group_<k>`.
        """
        plan = []
        for layer_idx in range(self.num_hidden_layers):
            group = self.group_of_layer(layer_idx)
            for inner in range(self.inner_group_num):
                shared = f"group_{group}/inner_group_{inner}"
                own = f"layer_{layer_idx}/inner_group_{inner}"
                attention_key = shared if self.sharing in ("all", "attention") else own
                ffn_key = shared if self.sharing in ("all", "ffn") else own
                plan.append((attention_key, ffn_key))
        return plan

    # -------------------------------------------------------------------------------------------------- JSON
    @classmethod
    def from_dict(cls, values: dict, source: str = "config") -> "AlbertConfig":
        if not isinstance(values, dict):
            raise AlbertError(f"{source}: expected a JSON object of config keys, got {type(values).__name__}")
        if values.get("vocab_size") is None:
            raise AlbertError(f"{source}: `vocab_size` is required (the number of rows of the word embeddings)")
        fields = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known, extra = {}, {}
        for key, value in values.items():
            if key in fields:
                known[key] = value
            elif key in VESTIGIAL_KEYS:
                extra[key] = value
            else:
                raise AlbertError(
                    f"{source}: unknown config key `{key}`; valid keys are {', '.join(sorted(fields))} "
                    f"(and the unused {', '.join(VESTIGIAL_KEYS)})")
        config = cls.__new__(cls)
        for f in dataclasses.fields(cls):
            if f.name == "extra":
                continue
            default = f.default
            setattr(config, f.name, copy.deepcopy(known.get(f.name, default)))
        config.extra = extra
        config.validate(source)
        return config

    @classmethod
    def from_json_file(cls, path: str) -> "AlbertConfig":
        """The config of a model from its config file: albert_config.json, a Hugging Face or keras-hub config.json,
        or where a hub model keeps it, a Model Garden SavedModel's keras_metadata.pb or (a TF1 Hub module without
        albert_config.json) its saved_model.pb."""
        fs = _filesystem(path)
        if not fs.exists(path):
            raise AlbertError(f"{path}: config file not found; pass the albert_config.json of the model")
        if fs.isdir(path):
            raise AlbertError(f"{path}: is a directory; pass the albert_config.json file of the model")
        if path.endswith(model_garden.METADATA):
            return cls.from_dict(model_garden.config_values(path), source=path)
        if path.endswith(tf1_hub.GRAPH_FILE):
            return cls.from_dict(tf1_hub.config_values(path), source=path)
        with fs.GFile(path, "rb") as f:
            data = f.read()
        values = parse_config(decode_utf8(data, path), path)
        kind = config_format(values)
        if kind == "huggingface":
            values = huggingface.config_values(values, path)
        elif kind == "keras_hub":
            values = keras_hub.config_values(values, path)
        return cls.from_dict(values, source=path)

    def to_dict(self) -> dict:
        """The keys the original writes (its constructor arguments), the vestigial keys read, and `sharing` when
        it is not the original's `all`."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("extra", "sharing"):
                continue
            out[f.name] = copy.deepcopy(getattr(self, f.name))
        if self.sharing != "all":
            out["sharing"] = self.sharing
        out.update(copy.deepcopy(self.extra))
        return out

    def to_json_string(self) -> str:
        """The original's format: sorted keys, indent 2, trailing newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str) -> None:
        write_text(path, self.to_json_string())

    def replace(self, **changes) -> "AlbertConfig":
        values = self.to_dict()
        values.update(changes)
        return AlbertConfig.from_dict(values, source="AlbertConfig.replace")

    # ----------------------------------------------------------------------------------------------- presets
    @classmethod
    def preset(cls, name: str) -> "AlbertConfig":
        """`base|large|xlarge|xxlarge` x `v1|v2`, e.g. `base_v2`, as the released `albert_config.json` files."""
        if name not in PRESETS:
            raise AlbertError(f"unknown preset {name!r}; use one of {', '.join(PRESETS)}")
        return cls.from_dict(PRESETS[name], source=f"preset {name}")


class _LocalFiles:
    """The three file operations config reading needs, for local paths, without importing TensorFlow."""

    exists = staticmethod(os.path.exists)
    isdir = staticmethod(os.path.isdir)
    GFile = staticmethod(open)


def _filesystem(path: str):
    """tf.io.gfile for URLs (gs://, hdfs://, ...), plain files otherwise."""
    if is_remote(path):
        import tensorflow as tf

        return tf.io.gfile
    return _LocalFiles


def _released(hidden, layers, heads, intermediate, dropout, **extra):
    values = {
        "attention_probs_dropout_prob": dropout, "hidden_dropout_prob": dropout, "down_scale_factor": 1,
        "embedding_size": 128, "gap_size": 0, "hidden_act": "gelu", "hidden_size": hidden,
        "initializer_range": 0.02, "inner_group_num": 1, "intermediate_size": intermediate,
        "max_position_embeddings": 512, "net_structure_type": 0, "num_attention_heads": heads,
        "num_hidden_groups": 1, "num_hidden_layers": layers, "num_memory_blocks": 0, "type_vocab_size": 2,
        "vocab_size": 30000,
    }
    values.update(extra)
    return values


# v1: dropout 0.1 except xxlarge (0); v2: no dropout anywhere (maintainers, google-research/albert#23).
PRESETS = {
    "base_v1": _released(768, 12, 12, 3072, 0.1),
    "large_v1": _released(1024, 24, 16, 4096, 0.1),
    "xlarge_v1": _released(2048, 24, 16, 8192, 0.1),
    "xxlarge_v1": _released(4096, 12, 64, 16384, 0.0, layers_to_keep=[]),
    "base_v2": _released(768, 12, 12, 3072, 0.0),
    "large_v2": _released(1024, 24, 16, 4096, 0.0),
    "xlarge_v2": _released(2048, 24, 16, 8192, 0.0),
    "xxlarge_v2": _released(4096, 12, 64, 16384, 0.0, layers_to_keep=[]),
}
