"""The original TF1 variable names: ONE declarative name table, to which every other format translates.

Each row pairs an original variable name with the attribute path of the matching Keras weight. The layouts are
the same on both sides (Dense kernels [in, out]; `output_weights` [classes, H] kept as such by our heads), so no
row needs a reshape. Encoder block rows are relative to `bert/encoder/transformer/<block>/`, where <block> is
each key of the encoder's `attention_blocks` / `ffn_blocks` (`group_<g>/inner_group_<k>`, or
`layer_<l>/inner_group_<k>` for parts that `sharing` leaves unshared). No TensorFlow here: the table is read by
the loader (albert.weights.loader) and the checkpoint writer (albert.weights.tf_checkpoints).
"""

ENCODER_TABLE = [
    ("bert/embeddings/word_embeddings", "embeddings.word_embeddings"),
    ("bert/embeddings/token_type_embeddings", "embeddings.token_type_embeddings"),
    ("bert/embeddings/position_embeddings", "embeddings.position_embeddings"),
    ("bert/embeddings/LayerNorm/beta", "embeddings.layer_norm.beta"),
    ("bert/embeddings/LayerNorm/gamma", "embeddings.layer_norm.gamma"),
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "embedding_projection.kernel"),  # only when E != H
    ("bert/encoder/embedding_hidden_mapping_in/bias", "embedding_projection.bias"),
    ("bert/pooler/dense/kernel", "pooler.kernel"),
    ("bert/pooler/dense/bias", "pooler.bias"),
]
BLOCK_PREFIX = "bert/encoder/transformer/"
ATTENTION_TABLE = [
    ("attention_1/self/query/kernel", "query.kernel"),
    ("attention_1/self/query/bias", "query.bias"),
    ("attention_1/self/key/kernel", "key.kernel"),
    ("attention_1/self/key/bias", "key.bias"),
    ("attention_1/self/value/kernel", "value.kernel"),
    ("attention_1/self/value/bias", "value.bias"),
    ("attention_1/output/dense/kernel", "output_dense.kernel"),
    ("attention_1/output/dense/bias", "output_dense.bias"),
    ("LayerNorm/beta", "layer_norm.beta"),
    ("LayerNorm/gamma", "layer_norm.gamma"),
]
FFN_TABLE = [
    ("ffn_1/intermediate/dense/kernel", "intermediate.kernel"),
    ("ffn_1/intermediate/dense/bias", "intermediate.bias"),
    ("ffn_1/intermediate/output/dense/kernel", "output_dense.kernel"),
    ("ffn_1/intermediate/output/dense/bias", "output_dense.bias"),
    ("LayerNorm_1/beta", "layer_norm.beta"),
    ("LayerNorm_1/gamma", "layer_norm.gamma"),
]
HEAD_TABLES = {
    "mlm": [
        ("cls/predictions/transform/dense/kernel", "mlm_head.dense.kernel"),
        ("cls/predictions/transform/dense/bias", "mlm_head.dense.bias"),
        ("cls/predictions/transform/LayerNorm/beta", "mlm_head.layer_norm.beta"),
        ("cls/predictions/transform/LayerNorm/gamma", "mlm_head.layer_norm.gamma"),
        ("cls/predictions/output_bias", "mlm_head.output_bias"),
    ],
    "sop": [
        ("cls/seq_relationship/output_weights", "sop_head.output_weights"),
        ("cls/seq_relationship/output_bias", "sop_head.output_bias"),
    ],
    "classifier": [
        ("output_weights", "classifier_head.output_weights"),
        ("output_bias", "classifier_head.output_bias"),
    ],
    "squad_v1": [
        ("cls/squad/output_weights", "squad_head.output_weights"),
        ("cls/squad/output_bias", "squad_head.output_bias"),
    ],
    "squad_v2": [
        ("start_logits/dense/kernel", "squad_head.start_dense.kernel"),
        ("start_logits/dense/bias", "squad_head.start_dense.bias"),
        ("end_logits/dense_0/kernel", "squad_head.end_dense_0.kernel"),
        ("end_logits/dense_0/bias", "squad_head.end_dense_0.bias"),
        ("end_logits/LayerNorm/beta", "squad_head.end_layer_norm.beta"),
        ("end_logits/LayerNorm/gamma", "squad_head.end_layer_norm.gamma"),
        ("end_logits/dense_1/kernel", "squad_head.end_dense_1.kernel"),
        ("end_logits/dense_1/bias", "squad_head.end_dense_1.bias"),
        ("answer_class/dense_0/kernel", "squad_head.answer_dense_0.kernel"),
        ("answer_class/dense_0/bias", "squad_head.answer_dense_0.bias"),
        ("answer_class/dense_1/kernel", "squad_head.answer_dense_1.kernel"),
    ],
    "token": [
        ("cls/token/output_weights", "token_head.output_weights"),
        ("cls/token/output_bias", "token_head.output_bias"),
    ],
    "choice": [
        ("output_weights", "choice_head.output_weights"),
        ("output_bias", "choice_head.output_bias"),
    ],
}


def _resolve(root, path: str):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def encoder_of(model):
    """The AlbertEncoder of a model of `albert.tasks.<task>.model` (its `encoder`), or the encoder itself."""
    return getattr(model, "encoder", model)


def original_variable_map(model) -> dict:
    """{original TF1 name: Keras variable} for an encoder or any model of `albert.tasks.<task>.model`."""
    encoder = encoder_of(model)
    names = {}
    for name, path in ENCODER_TABLE:
        variable = _resolve(encoder, path)
        if variable is not None:
            names[name] = variable
    for blocks, table in ((encoder.attention_blocks, ATTENTION_TABLE), (encoder.ffn_blocks, FFN_TABLE)):
        for key, block in blocks.items():
            for suffix, path in table:
                names[f"{BLOCK_PREFIX}{key}/{suffix}"] = _resolve(block, path)
    for head in getattr(model, "checkpoint_heads", ()):
        for name, path in HEAD_TABLES[head]:
            names[name] = _resolve(model, path)
    return names


