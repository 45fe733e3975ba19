"""Classify raw text with a serving model exported by `run_classifier.py --export_dir`, in a process that
imports only TensorFlow and tensorflow-text (no `albert`): what a user of the export does.

    python tools/classify.py out/demo/classifier_serving "First sentence." "Second sentence."
"""

import argparse
import os
import sys


class OneLineParser(argparse.ArgumentParser):
    """A mistake is one line, `classify.py: error: ...`, and exit status 2 (argparse prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def import_tensorflow_quietly():
    """TensorFlow and tensorflow-text (its SentencePiece op, which the SavedModel uses), without the native
    start-up lines they print to descriptor 2 (an import error still shows: it is raised after the restore)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved, quiet = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    try:
        import tensorflow as tf
        import tensorflow_text  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(quiet)
    return tf


def main(argv=None):
    parser = OneLineParser(prog="classify.py", description=__doc__.split("\n")[0])
    parser.add_argument("export_dir", help="a run_classifier.py --export_dir SavedModel")
    parser.add_argument("text_a", help="the sentence (the first of a pair)")
    parser.add_argument("text_b", nargs="?", help="the second sentence, for a pair task")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
        parser.error(f"{args.export_dir}: not a SavedModel directory (no saved_model.pb); pass a run_classifier.py "
                     "--export_dir")
    tf = import_tensorflow_quietly()
    try:
        signatures = tf.saved_model.load(args.export_dir).signatures
    except (OSError, ValueError, tf.errors.OpError) as e:
        parser.error(f"{args.export_dir}: cannot load the SavedModel ({str(e).splitlines()[0][:200]})")
    if "serving_default" not in signatures:
        parser.error(f"{args.export_dir}: the SavedModel has no serving_default signature; pass a run_classifier.py "
                     "--export_dir")
    serve = signatures["serving_default"]
    names = sorted(serve.structured_input_signature[1])
    inputs = {"text_a": tf.constant([args.text_a])}
    if "text_b" in names:
        if args.text_b is None:
            parser.error(f"{args.export_dir} classifies sentence pairs: give two sentences")
        inputs["text_b"] = tf.constant([args.text_b])
    outputs = serve(**inputs)
    prediction = outputs["predictions"].numpy()[0]
    prediction = prediction.decode() if isinstance(prediction, bytes) else float(prediction)
    line = f"prediction: {prediction}"
    if "probabilities" in outputs:
        line += "  probabilities: " + " ".join(f"{p:.3f}" for p in outputs["probabilities"].numpy()[0])
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
