"""Export a pretrained ALBERT as TF Hub–style SavedModels: OUT/encoder, OUT/preprocessor (in-graph tokenization
with tensorflow-text) and OUT/mlm (masked-LM and sentence-order logits).

    python export_to_tfhub.py --albert_directory=albert_base --export_path=out/hub

--albert_directory holds albert_config.json, the SentencePiece .model (and .vocab) and the checkpoint
(--checkpoint_name, default model.ckpt-best: the original TF1 names, or a checkpoint of run_pretraining.py); or it
is a Hugging Face AlbertForPreTraining directory (config.json, model.safetensors, spiece.model): the MLM export
needs both pretraining heads.
Everything is written under a temporary name and renamed into place; a failed export leaves nothing behind.
"""

import os

from absl import flags

from albert import cli, litert
from albert.atomic import replacing_directory
from albert.errors import AlbertError

cli.define_model_directory_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
flags.DEFINE_bool("do_lower_case", True, "Lower-case text in the preprocessor.")
flags.DEFINE_bool("use_einsum", True, "Kept for compatibility (attention is always einsum-shaped).")
flags.DEFINE_string("export_path", None, "Output directory (replaced if it exists).")
litert.define_flag()
flags.adopt_module_key_flags(litert)  # --help lists it with the script's own flags
flags.DEFINE_integer("seq_length", None, "Length of the preprocessor's default packing (default: 128, or the "
                     "model's max_position_embeddings when it is smaller).")
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.require({"albert_directory": FLAGS.albert_directory, "export_path": FLAGS.export_path})
    if FLAGS.seq_length is not None:
        cli.check_at_least("seq_length", FLAGS.seq_length, 3)
    cli.check_output_path("export_path", FLAGS.export_path.rstrip("/"), (FLAGS.albert_directory, FLAGS.spm_model_file),
                          directory=True)
    from albert import export
    from albert.weights import model_directory_files

    files = model_directory_files(FLAGS.albert_directory, FLAGS.checkpoint_name, FLAGS.spm_model_file)
    model, config = export.load_pretrainer(files)
    seq_length = FLAGS.seq_length or min(128, config.max_position_embeddings)
    if seq_length > config.max_position_embeddings:
        raise AlbertError(f"--seq_length {seq_length} exceeds max_position_embeddings "
                          f"({config.max_position_embeddings}) of {files['config']}")
    out = FLAGS.export_path.rstrip("/")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with replacing_directory(out) as tmp:
        config.to_json_file(os.path.join(tmp, "albert_config.json"))  # the original's format, whatever the input's
        assets = {"albert_config.json": os.path.join(tmp, "albert_config.json"),
                  os.path.basename(files["spm_model"]): files["spm_model"]}
        if files["spm_vocab"]:
            assets[os.path.basename(files["spm_vocab"])] = files["spm_vocab"]
        export.export_encoder(model.encoder, os.path.join(tmp, "encoder"), assets)
        lite = litert.export_tflite(model.encoder, os.path.join(tmp, "encoder", "model.tflite"), export.HUB_INPUTS,
                                    seq_length, ("pooled_output", "sequence_output"), FLAGS.tflite_quantization,
                                    input_map=export.encoder_inputs)
        export.export_encoder(model.encoder, os.path.join(tmp, "mlm"), assets, mlm_model=model)
        export.export_preprocessor(files["spm_model"], FLAGS.do_lower_case, os.path.join(tmp, "preprocessor"),
                                   seq_length)
        os.remove(os.path.join(tmp, "albert_config.json"))
    print(f"exported {out}/encoder (and encoder/model.tflite, {lite['bytes']:,} bytes at length {seq_length}), "
          f"{out}/preprocessor and {out}/mlm from {files['checkpoint']}")


if __name__ == "__main__":
    cli.run(main)
