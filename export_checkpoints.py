r"""Re-save a checkpoint under the original TF1 variable names, without optimizer slots: the encoder, the MLM and
sentence-order heads and global_step, as the original export_checkpoints.py did.

    python export_checkpoints.py --albert_directory=out/pretrain --checkpoint_name=model.ckpt-125000 \
        --export_path=out/albert_base/model.ckpt-best

--albert_directory holds albert_config.json, the SentencePiece .model and the checkpoint (original or ours).
"""

from absl import flags

from albert.ground import cli
from albert.hub.resolve import resolve

cli.define_model_directory_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
flags.DEFINE_bool("do_lower_case", True, "Unused (kept for compatibility).")
flags.DEFINE_string("export_path", None, "Prefix of the checkpoint to write (e.g. out/model.ckpt-best).")
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.require({"albert_directory": FLAGS.albert_directory, "export_path": FLAGS.export_path})
    FLAGS.albert_directory = resolve(FLAGS.albert_directory)
    cli.check_output_path("export_path", FLAGS.export_path, (FLAGS.albert_directory,))
    from albert.export.hub import export_release_checkpoint  # TensorFlow loads here, once the flags are checked

    print(export_release_checkpoint(FLAGS.albert_directory, FLAGS.export_path, FLAGS.checkpoint_name,
                                    FLAGS.spm_model_file))


if __name__ == "__main__":
    cli.run(main)
