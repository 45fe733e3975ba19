"""Classify raw text with a serving model exported by `run_classifier.py --export_dir`, in a process that
imports only TensorFlow and tensorflow-text (no `albert`): what a user of the export does.

    python tools/classify.py out/demo/classifier_serving "First sentence." "Second sentence."
"""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("export_dir", help="a run_classifier.py --export_dir SavedModel")
    parser.add_argument("text_a", help="the sentence (the first of a pair)")
    parser.add_argument("text_b", nargs="?", help="the second sentence, for a pair task")
    args = parser.parse_args(argv)
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece op the SavedModel uses)

    serve = tf.saved_model.load(args.export_dir).signatures["serving_default"]
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
