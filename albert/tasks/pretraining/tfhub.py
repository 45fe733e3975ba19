"""The pretrained model exported: export_to_tfhub.py's encoder, preprocessor, mlm and fill_mask SavedModels
(albert.export.hub writes the first three, albert.tasks.pretraining.serving the last) and export_checkpoints.py's
release-layout checkpoint, both from a model directory (release layout, Hugging Face or keras-hub).
"""

import os

import keras

from albert.config import AlbertConfig
from albert.data.features import boundaries
from albert.export.hub import export_encoder, export_preprocessor
from albert.export.litert import export_tflite, file_length
from albert.export.options import HUB_EXPORT_COMMAND, MODEL_DIRECTORY_FLAGS
from albert.export.savedmodel import HUB_INPUTS, encoder_inputs
from albert.export.tflite_metadata import describe
from albert.ground.errors import AlbertError
from albert.ground.outputs import check, writing
from albert.model.preprocessor import DEFAULT_SEQ_LENGTH
from albert.tasks.pretraining.model import AlbertPretrainer
from albert.tasks.pretraining.serving import export_fill_mask
from albert.weights.formats import check_vocabulary, read_model_directory
from albert.weights.loader import load_located
from albert.weights.tf_checkpoints import checkpoint_step, save_original_checkpoint


def load_pretrainer(files: dict):
    """The AlbertPretrainer (float32) of a model directory (`albert.weights.formats.read_model_directory`: release
    layout, Hugging Face or keras-hub), every weight -- MLM and SOP heads included -- read from its weights; the
    config must match the SentencePiece model."""
    config = AlbertConfig.from_json_file(files.config)
    check_vocabulary(files, config)
    keras.mixed_precision.set_global_policy("float32")
    model = AlbertPretrainer(config)
    path = files.weights
    try:
        report = load_located(model, path, files.format)
    except AlbertError as e:
        if files.format != "ours":
            raise
        raise AlbertError(f"{path}: does not hold this pretraining model ({str(e)[:160]}); use the "
                          "albert_config.json it was trained with and a pretraining checkpoint") from None
    if report.missing:
        raise AlbertError(f"{path}: lacks {len(report.missing)} variables of the pretraining model (first: "
                          f"{report.missing[0]}); export a pretraining checkpoint, not a fine-tuned one (Hugging Face: "
                          "AlbertForPreTraining)")
    return model, config


def export_hub_models(albert_directory: str, export_path: str, checkpoint_name: str, spm_model_file: str | None,
                      do_lower_case: bool, seq_length: int | None, quantization: str,
                      length_buckets: str = "default", tflite_metadata: str = "tokenizer",
                      tflite_length: str = "default") -> str:
    """export_to_tfhub.py: a model directory (release layout, Hugging Face, keras-hub) as export_path/encoder (with
    its model.tflite), export_path/preprocessor, export_path/mlm and export_path/fill_mask, written whole or not at
    all."""
    out = export_path.rstrip("/")
    check(out, HUB_EXPORT_COMMAND, "--export_path", (albert_directory, spm_model_file))
    files = read_model_directory(albert_directory, checkpoint_name, spm_model_file, MODEL_DIRECTORY_FLAGS)
    model, config = load_pretrainer(files)
    seq_length = seq_length or min(DEFAULT_SEQ_LENGTH, config.max_position_embeddings)
    config.check_sequence_length(seq_length, "--seq_length", files.config)
    with writing(out, HUB_EXPORT_COMMAND, "--export_path", (albert_directory, spm_model_file)) as tmp:
        config.to_json_file(os.path.join(tmp, "albert_config.json"))  # the original's format, whatever the input's
        assets = {"albert_config.json": os.path.join(tmp, "albert_config.json"),
                  os.path.basename(files.spm_model): files.spm_model}
        if files.spm_vocab:
            assets[os.path.basename(files.spm_vocab)] = files.spm_vocab
        bounds = boundaries(seq_length, length_buckets)
        export_encoder(model.encoder, os.path.join(tmp, "encoder"), assets)
        lite_length = file_length(seq_length, bounds, tflite_length, runtime_fixed=True)
        described = describe(tflite_metadata, "ALBERT encoder", "ALBERT (pretrained, not fine-tuned): [CLS] text "
                             "[SEP] -> pooled_output (the [CLS] position through the pooler: the text's embedding) "
                             "and sequence_output (one vector per token).", files.spm_model, None, do_lower_case,
                             outputs={"pooled_output": "The text's embedding: [CLS] through the pooler (dense, tanh).",
                                      "sequence_output": "A vector per token."})
        lite = export_tflite(model.encoder, os.path.join(tmp, "encoder", "model.tflite"), HUB_INPUTS, lite_length,
                             ("pooled_output", "sequence_output"), quantization, input_map=encoder_inputs,
                             described=described)
        export_encoder(model.encoder, os.path.join(tmp, "mlm"), assets, mlm_model=model)
        export_preprocessor(files.spm_model, do_lower_case, os.path.join(tmp, "preprocessor"), seq_length, bounds)
        export_fill_mask(model, files.spm_model, do_lower_case, seq_length, os.path.join(tmp, "fill_mask"))
        os.remove(os.path.join(tmp, "albert_config.json"))
    length = f"length {seq_length}" if lite_length else f"any length up to {seq_length}"
    return (f"exported {out}/encoder (and encoder/model.tflite, {lite['bytes']:,} bytes, {length}), "
            f"{out}/preprocessor, {out}/mlm and {out}/fill_mask from {files.weights}")


def export_release_checkpoint(albert_directory: str, export_path: str, checkpoint_name: str,
                              spm_model_file: str | None) -> str:
    """export_checkpoints.py: the pretraining model of a model directory re-saved under the original TF1 names,
    without optimizer slots (the encoder, the MLM and sentence-order heads and global_step)."""
    files = read_model_directory(albert_directory, checkpoint_name, spm_model_file, MODEL_DIRECTORY_FLAGS)
    model, _ = load_pretrainer(files)
    step = checkpoint_step(files.weights) if files.format in ("original", "ours") else None
    path = save_original_checkpoint(model, export_path, global_step=step)
    return f"wrote {path} (original names, no optimizer slots) from {files.weights}"
