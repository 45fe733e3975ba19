"""Convert ALBERT weights between layouts: any supported input, the release layout or Hugging Face out.

    python -m albert.convert --input=hf_dir --output=albert_base --to=release
    python -m albert.convert --input=albert_base --output=hf_dir --to=huggingface

--input is a model directory: the release layout (albert_config.json, the SentencePiece .model, a checkpoint with
the original TF1 names or one of ours), a Hugging Face directory (config.json, model.safetensors, spiece.model) or
a keras-hub preset; a fine-tuning run's --output_dir is one (it records albert_config.json and the SentencePiece
model). The library call is albert.export.conversion.convert.
"""

import os

from absl import flags

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.hub.resolve import resolve
from albert.ground.rundir import BEST_CHECKPOINT

FORMATS = ("release", "huggingface")
flags.DEFINE_string("input", None, "Model reference: a model directory (release layout, Hugging Face, keras-hub, "
                    "TF1 Hub module, Model Garden SavedModel), an archive, a name, a hub id or handle, a URL.")
flags.DEFINE_string("output", None, "Output directory (replaced if it exists).")
flags.DEFINE_enum("to", None, FORMATS, "Output layout: release (albert_config.json, 30k-clean.model, "
                  "model.ckpt-best with the original names) or huggingface (config.json, model.safetensors, "
                  "spiece.model).")
flags.DEFINE_string("architecture", None, "Hugging Face class the weights hold or are written as (default: read "
                    "from the input; AlbertModel, AlbertForPreTraining, AlbertForMaskedLM, "
                    "AlbertForSequenceClassification, AlbertForQuestionAnswering, AlbertForMultipleChoice).")
flags.DEFINE_string("checkpoint_name", BEST_CHECKPOINT, "Checkpoint prefix inside a release-layout --input.")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model (default: the one of --input).")
cli.define_download_flag()
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.require({"input": FLAGS.input, "output": FLAGS.output, "to": FLAGS.to})
    FLAGS.input = resolve(FLAGS.input)
    if not os.path.isdir(FLAGS.input):
        raise AlbertError(f"{FLAGS.input}: --input not found (a model directory)")
    cli.check_output_path("output", FLAGS.output.rstrip("/"), (FLAGS.input, FLAGS.spm_model_file), directory=True)
    from albert.export.conversion import convert  # TensorFlow loads here, once the flags are checked

    report = convert(FLAGS.input, FLAGS.output, FLAGS.to, FLAGS.architecture, FLAGS.checkpoint_name,
                     FLAGS.spm_model_file)
    fresh = f"; freshly initialised (not in the input): {', '.join(report.missing)}" if report.missing else ""
    print(f"wrote {FLAGS.output} ({FLAGS.to}) from {report.path}: {len(report.loaded)} tensors{fresh}")


if __name__ == "__main__":
    cli.run(main)
