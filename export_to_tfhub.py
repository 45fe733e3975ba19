"""Export a pretrained ALBERT as TF Hub–style SavedModels: OUT/encoder, OUT/preprocessor (in-graph tokenization
with tensorflow-text) and OUT/mlm (masked-LM and sentence-order logits).

    python export_to_tfhub.py --albert_directory=albert_base --export_path=out/hub

--albert_directory holds albert_config.json, the SentencePiece .model (and .vocab) and the checkpoint
(--checkpoint_name, default model.ckpt-best: the original TF1 names, or a checkpoint of run_pretraining.py); or it
is a Hugging Face AlbertForPreTraining directory (config.json, model.safetensors, spiece.model): the MLM export
needs both pretraining heads.
Everything is written under a temporary name and renamed into place; a failed export leaves nothing behind.
"""

from absl import flags

from albert.ground import cli
from albert.data.features import boundaries
from albert.hub.resolve import resolve

cli.define_model_directory_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
flags.DEFINE_bool("do_lower_case", True, "Lower-case text in the preprocessor.")
flags.DEFINE_bool("use_einsum", True, "Kept for compatibility (attention is always einsum-shaped).")
flags.DEFINE_string("export_path", None, "Output directory (replaced if it exists).")
cli.define_tflite_flag()
cli.define_length_flags(training=False)
flags.DEFINE_integer("seq_length", None, "Length of the preprocessor's default packing (default: 128, or the "
                     "model's max_position_embeddings when it is smaller).")
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.require({"albert_directory": FLAGS.albert_directory, "export_path": FLAGS.export_path})
    FLAGS.albert_directory = resolve(FLAGS.albert_directory)
    if FLAGS.seq_length is not None:
        cli.check_at_least("seq_length", FLAGS.seq_length, 3)
    boundaries(FLAGS.seq_length or 128, FLAGS.length_buckets)  # a malformed value is one line here
    cli.check_output_path("export_path", FLAGS.export_path.rstrip("/"), (FLAGS.albert_directory, FLAGS.spm_model_file),
                          directory=True)
    from albert.export.hub import export_hub_models  # TensorFlow loads here, once the flags are checked

    print(export_hub_models(FLAGS.albert_directory, FLAGS.export_path, FLAGS.checkpoint_name, FLAGS.spm_model_file,
                            FLAGS.do_lower_case, FLAGS.seq_length, FLAGS.tflite_quantization, FLAGS.length_buckets,
                            FLAGS.tflite_metadata, FLAGS.tflite_length))


if __name__ == "__main__":
    cli.run(main)
