"""The ALBERT encoder as Keras 3 layers, numerically identical to the original TF1 `modeling.py`.

Data flow (B batch, T tokens, E embedding_size, H hidden_size, N heads, D = H / N, I intermediate_size):

    input_ids, segment_ids --word + type + position embeddings (width E)--> LayerNorm --> dropout   [B,T,E]
      --> Dense E->H (only when E != H)                                                             [B,T,H]
      --> L layers x inner_group_num post-LN blocks, each block's weights taken from its group       [B,T,H]
      --> tanh pooler on token 0                                                                     [B,H]

Layer names follow the original's variable scopes so that `albert/weights/original.py` can map every original TF1
variable to a weight here with one readable table. Under a mixed-precision policy every LayerNorm runs in float32
(its layer dtype is pinned) and attention softmax is computed in float32; residual sums are taken in float32.
"""

import keras
import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.model.from_pretrained import FromPretrained
from albert.model.recompute import recomputed_sequence, seed_generators
from albert.model.serialization import ConfigSerializable, register
from albert.model.text_inputs import TextInputs

LAYER_NORM_EPSILON = 1e-12


def get_activation(name: str):
    """The original's activations. ALBERT's "gelu" is the tanh approximation (not the erf form)."""
    if name == "gelu":
        return lambda x: keras.activations.gelu(x, approximate=True)
    if name == "linear":
        return None
    return {"relu": keras.activations.relu, "tanh": keras.activations.tanh}[name]


def truncated_normal(stddev: float):
    """TF1's truncated_normal_initializer: normal(0, stddev) redrawn outside 2 standard deviations."""
    return keras.initializers.TruncatedNormal(stddev=stddev)


def layer_norm(name: str) -> keras.layers.LayerNormalization:
    """LayerNorm over the last axis, epsilon 1e-12, always computed in float32."""
    return keras.layers.LayerNormalization(axis=-1, epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


def dense(units: int, config: AlbertConfig, name: str, activation=None, use_bias=True) -> keras.layers.Dense:
    return keras.layers.Dense(units, activation=activation, use_bias=use_bias, name=name,
                              kernel_initializer=truncated_normal(config.initializer_range))


def attention_bias(input_mask):
    """Additive float32 bias [B,1,1,T]: 0 for real key positions, -10000 for padding (as the original)."""
    mask = ops.cast(input_mask, "float32")
    # expand_dims, not mask[:, None, None, :]: a new-axis strided slice has no builtin LiteRT kernel
    return (1.0 - ops.expand_dims(ops.expand_dims(mask, 1), 1)) * -10000.0


class AlbertEmbeddings(keras.layers.Layer):
    """Word, token-type and absolute-position embeddings of width E, summed, then LayerNorm and dropout."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.layer_norm = layer_norm("LayerNorm")
        self.dropout = keras.layers.Dropout(config.hidden_dropout_prob, dtype=self.dtype_policy)

    def build(self, input_shape=None):
        c = self.config
        init = truncated_normal(c.initializer_range)
        self.word_embeddings = self.add_weight(
            shape=(c.vocab_size, c.embedding_size), initializer=init, name="word_embeddings")
        self.token_type_embeddings = self.add_weight(
            shape=(c.type_vocab_size, c.embedding_size), initializer=init, name="token_type_embeddings")
        self.position_embeddings = self.add_weight(
            shape=(c.max_position_embeddings, c.embedding_size), initializer=init, name="position_embeddings")
        self.layer_norm.build((None, None, c.embedding_size))

    def call(self, input_ids, segment_ids, training=None):
        seq_len = input_ids.shape[1]
        if seq_len is not None:
            self.config.check_sequence_length(seq_len, "sequence length", fix="; use a max_seq_length of at most that")
        seq_len = ops.shape(input_ids)[1]
        x = ops.take(self.word_embeddings, input_ids, axis=0)
        x = x + ops.take(self.token_type_embeddings, segment_ids, axis=0)
        x = x + self.position_embeddings[None, :seq_len, :]
        return self.dropout(self.layer_norm(x), training=training)


class AttentionBlock(keras.layers.Layer):
    """Multi-head self-attention, output projection, dropout, then LayerNorm(x + attention) (original
    `attention_1` and the block's first `LayerNorm`)."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        h = config.hidden_size
        self.query = dense(h, config, "query")
        self.key = dense(h, config, "key")
        self.value = dense(h, config, "value")
        self.output_dense = dense(h, config, "output_dense")
        self.layer_norm = layer_norm("LayerNorm")
        self.probs_dropout = keras.layers.Dropout(config.attention_probs_dropout_prob)
        self.output_dropout = keras.layers.Dropout(config.hidden_dropout_prob)

    def build(self, input_shape=None):
        h = self.config.hidden_size
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build((None, None, h))
        self.layer_norm.build((None, None, h))

    def call(self, x, input_mask, training=None, first_token_only=False):
        """LayerNorm(x + attention(x)) [B,T,H]; with `first_token_only`, of token 0 only [B,1,H] (its query
        attends to every key: the same numbers as row 0 of the whole)."""
        c = self.config
        batch, seq_len = ops.shape(x)[0], ops.shape(x)[1]
        rows = x[:, :1, :] if first_token_only else x
        queries = 1 if first_token_only else seq_len

        def heads(t, length):
            return ops.reshape(t, (batch, length, c.num_attention_heads, c.head_size))

        # Scaling q before the product equals the original's scaling of the logits, at T/D of the cost.
        q = heads(self.query(rows), queries) * ops.cast(c.head_size ** -0.5, self.compute_dtype)
        k = heads(self.key(x), seq_len)
        v = heads(self.value(x), seq_len)
        logits = ops.einsum("btnd,bsnd->bnts", q, k)
        probs = tf.nn.softmax(ops.cast(logits, "float32") + attention_bias(input_mask), axis=-1)
        probs = self.probs_dropout(ops.cast(probs, self.compute_dtype), training=training)
        context = ops.reshape(ops.einsum("bnts,bsnd->btnd", probs, v), (batch, queries, c.hidden_size))
        out = self.output_dropout(self.output_dense(context), training=training)
        return self.layer_norm(ops.cast(out, "float32") + ops.cast(rows, "float32"))


class FeedForwardBlock(keras.layers.Layer):
    """Dense H->I with the hidden activation, Dense I->H, dropout, then LayerNorm(x + ffn) (original `ffn_1` and
    the block's `LayerNorm_1`)."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.intermediate = dense(config.intermediate_size, config, "intermediate",
                                  activation=get_activation(config.hidden_act))
        self.output_dense = dense(config.hidden_size, config, "output_dense")
        self.layer_norm = layer_norm("LayerNorm_1")
        self.dropout = keras.layers.Dropout(config.hidden_dropout_prob)

    def build(self, input_shape=None):
        self.intermediate.build((None, None, self.config.hidden_size))
        self.output_dense.build((None, None, self.config.intermediate_size))
        self.layer_norm.build((None, None, self.config.hidden_size))

    def call(self, x, training=None):
        out = self.dropout(self.output_dense(self.intermediate(x)), training=training)
        return self.layer_norm(ops.cast(out, "float32") + ops.cast(x, "float32"))


@register
class AlbertEncoder(FromPretrained, TextInputs, ConfigSerializable, keras.Model):
    """The ALBERT encoder.

    Call with a dict of int32 [B,T] tensors `input_ids`, `input_mask` (default all ones), `segment_ids` (default
    zeros) -- or with strings when a preprocessor is attached (`from_pretrained`); returns a dict with
    `sequence_output` [B,T,H], `pooled_output` [B,H], `encoder_outputs` (a list of num_hidden_layers x
    inner_group_num [B,T,H] tensors, one per block application, as the original) and `embedding_output` [B,T,E].
    Dropout is active only with `training=True`.
    """

    def __init__(self, config: AlbertConfig, name="albert", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        # The embedding sums and LayerNorm are memory-bound lookups: float32 costs nothing and keeps them exact.
        self.embeddings = AlbertEmbeddings(config, name="embeddings", dtype="float32")
        self.embedding_projection = None
        if config.embedding_size != config.hidden_size:
            # float32 under mixed precision too (E*H MACs a token, ~0.1% of the work): the residual stream it
            # starts then carries no bf16 rounding of its own.
            self.embedding_projection = keras.layers.Dense(
                config.hidden_size, name="embedding_hidden_mapping_in", dtype="float32",
                kernel_initializer=truncated_normal(config.initializer_range))
        self.plan = config.block_plan()
        # Each distinct block is a direct attribute (e.g. `group_0_inner_group_0_attention`): tf.train.Checkpoint
        # follows attributes but not the containers Keras wraps lists and dicts in.
        self._block_attributes = {}
        for attention_key, ffn_key in self.plan:
            for key, kind, cls in ((attention_key, "attention", AttentionBlock), (ffn_key, "ffn", FeedForwardBlock)):
                attribute = f"{key.replace('/', '_')}_{kind}"
                if attribute not in self._block_attributes.values():
                    setattr(self, attribute, cls(config, name=attribute))
                    self._block_attributes[(kind, key)] = attribute
        self.pooler = dense(config.hidden_size, config, "pooler", activation="tanh")
        # Training keeps only each block application's input and recomputes the rest in the backward pass
        # (albert.model.recompute; the same numbers): set by `set_recompute` / the runners' --recompute.
        self.recompute = False
        self.build()

    @property
    def attention_blocks(self) -> dict:
        """{block key: AttentionBlock}, keys as in `AlbertConfig.block_plan`."""
        return {key: getattr(self, attr) for (kind, key), attr in self._block_attributes.items() if kind == "attention"}

    @property
    def ffn_blocks(self) -> dict:
        """{block key: FeedForwardBlock}, keys as in `AlbertConfig.block_plan`."""
        return {key: getattr(self, attr) for (kind, key), attr in self._block_attributes.items() if kind == "ffn"}

    def build(self, input_shape=None):
        c = self.config
        self.embeddings.build()
        if self.embedding_projection is not None:
            self.embedding_projection.build((None, None, c.embedding_size))
        for block in list(self.attention_blocks.values()) + list(self.ffn_blocks.values()):
            block.build()
        self.pooler.build((None, c.hidden_size))

    def call(self, inputs, training=None, pooled_only=False):
        """The outputs above; with `pooled_only`, {"pooled_output"} alone, the last block application computing
        token 0 only (what a classifier reads: the same numbers, ~1/L of the encoder's work less)."""
        inputs = self._features(inputs)  # strings, with a preprocessor (from_pretrained)
        # Keras may hand integer features over as floats (its default input dtype, e.g. fit under a strategy).
        input_ids = ops.cast(inputs["input_ids"], "int32")
        input_mask = inputs.get("input_mask")
        segment_ids = inputs.get("segment_ids")
        input_mask = ops.ones_like(input_ids) if input_mask is None else ops.cast(input_mask, "int32")
        segment_ids = ops.zeros_like(input_ids) if segment_ids is None else ops.cast(segment_ids, "int32")
        embedding_output = self.embeddings(input_ids, segment_ids, training=training)
        x = embedding_output
        if self.embedding_projection is not None:
            x = self.embedding_projection(x)
        attention_blocks, ffn_blocks = self.attention_blocks, self.ffn_blocks
        last = len(self.plan) - 1
        applications = [lambda h, a=attention_blocks[a_key], f=ffn_blocks[f_key], first=pooled_only and i == last:
                        f(a(h, input_mask, training=training, first_token_only=first), training=training)
                        for i, (a_key, f_key) in enumerate(self.plan)]
        if self.recompute and training:
            blocks = list(attention_blocks.values()) + list(ffn_blocks.values())
            encoder_outputs = recomputed_sequence(applications, x, seed_generators(blocks))
        else:
            encoder_outputs = []
            for apply in applications:
                x = apply(x)
                encoder_outputs.append(x)
        x = encoder_outputs[-1]
        pooled_output = self.pooler(x[:, 0, :])
        if pooled_only:
            return {"pooled_output": pooled_output}
        return {
            "sequence_output": x,
            "pooled_output": pooled_output,
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }

    def serving_outputs(self, outputs: dict) -> dict:
        """A SavedModel signature holds named tensors, not lists: each block application's output is
        `encoder_outputs_<i>` (as in the TF Hub encoder's signature)."""
        flat = {k: v for k, v in outputs.items() if k != "encoder_outputs"}
        flat.update({f"encoder_outputs_{i}": x for i, x in enumerate(outputs["encoder_outputs"])})
        return flat


def set_recompute(model: keras.Layer, on: bool = True) -> int:
    """Turn activation recomputation on (or off) in every ALBERT encoder inside `model`; returns how many."""
    encoders = [layer for layer in model._flatten_layers(include_self=True) if isinstance(layer, AlbertEncoder)]
    for encoder in encoders:
        encoder.recompute = on
    return len(encoders)

