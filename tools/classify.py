"""Classify raw text with a serving model exported by `run_classifier.py --export_dir`, in a process that
imports only TensorFlow and tensorflow-text (no `albert`): what a user of the export does.

    python tools/classify.py out/demo/classifier_serving "First sentence." "Second sentence."
    python tools/classify.py out/demo/classifier_serving - < review.txt        # the sentence from stdin

It prints the predicted label and each label's probability: `prediction: good  probabilities: bad=0.120 good=0.880`.

The texts (arguments and stdin) are read as UTF-8. Another task's export (SQuAD, RACE, NER, fill-mask, a TF Hub
encoder or preprocessor) is one line saying what it is and which tool serves it; every mistake is one line on
stderr, exit status 2. The helpers here (one-line errors, UTF-8 arguments and stdin, what an export is) are shared
by tools/answer.py and tools/fill_mask.py.
"""

import argparse
import json
import os
import sys


class OneLineParser(argparse.ArgumentParser):
    """A mistake is one line, `classify.py: error: ...`, and exit status 2 (argparse prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def utf8_argument(parser, name: str, value: str) -> str:
    """A command-line text as UTF-8: Python decodes argv with the locale's encoding and keeps the bytes it cannot
    decode as lone surrogates; the argument's own bytes are decoded here as UTF-8, and other bytes refused."""
    raw = os.fsencode(value)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        parser.error(f"{name}: byte 0x{raw[e.start]:02x} at byte {e.start} of the argument is not UTF-8; pass the text "
                     "encoded as UTF-8")


def read_stdin(parser, name: str) -> str:
    """All of standard input as UTF-8 text (a leading byte-order mark dropped); other bytes refused in one line."""
    raw = sys.stdin.buffer.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        parser.error(f"{name} from stdin: byte 0x{raw[e.start]:02x} at byte {e.start} is not UTF-8; save the text as "
                     "UTF-8 (iconv -t UTF-8)")


# What each export of this project is, by its serving_default's inputs: (what it is, the tool or call serving it).
_PACKED = ("input_ids", "input_mask", "segment_ids")
_HUB = ("input_mask", "input_type_ids", "input_word_ids")  # sorted, as the names are compared
_NO_TOOL = "no tool here serves it: "
EXPORTS = {
    ("text_a",): ("a classifier (run_classifier.py --export_dir)", "classify with tools/classify.py {dir} TEXT"),
    ("text_a", "text_b"): ("a sentence-pair classifier (run_classifier.py --export_dir)",
                           "classify with tools/classify.py {dir} TEXT_A TEXT_B"),
    ("context", "question"): ("a raw-text SQuAD model (run_squad.py --export_dir's text/)",
                              "answer with tools/answer.py {dir} QUESTION CONTEXT"),
    ("input_ids", "input_mask", "p_mask", "segment_ids"): (
        "a SQuAD 2.0 model over packed ids (run_squad.py --export_dir)",
        "answer on raw text with tools/answer.py {dir}/text QUESTION CONTEXT"),
    ("squad 1.1",): ("a SQuAD 1.1 model over packed ids (run_squad.py --export_dir)",
                     "answer on raw text with tools/answer.py {dir}/text QUESTION CONTEXT"),
    ("article", "options", "question"): ("a raw-text RACE model (run_race.py --export_dir's text/)",
                                         _NO_TOOL + "call its serving_default(article, question, options) "
                                         "(docs/export.md)"),
    ("race",): ("a RACE model over packed ids (run_race.py --export_dir)",
                _NO_TOOL + "call the serving_default(article, question, options) of {dir}/text (docs/export.md)"),
    ("text",): ("a tagger (run_ner.py --export_dir)", _NO_TOOL + "call its serving_default(text) for one tag per word "
                "(docs/export.md)"),
    ("text", "top_k"): ("a fill-mask model (export_to_tfhub.py's OUT/fill_mask)",
                        "fill masks with tools/fill_mask.py {dir} TEXT"),
    _HUB: ("a TF Hub encoder (export_to_tfhub.py's OUT/encoder)",
           "it gives hidden states: fine-tune a classifier on them with run_classifier.py --export_dir"),
    (*_HUB, "masked_lm_positions"): ("a TF Hub masked-LM encoder (export_to_tfhub.py's OUT/mlm)",
                                     "fill masks on raw text with tools/fill_mask.py on OUT/fill_mask"),
    ("strings",): ("a TF Hub preprocessor (export_to_tfhub.py's OUT/preprocessor)",
                   "it gives token ids: fine-tune a classifier with run_classifier.py --export_dir"),
}


def what_export(signatures) -> tuple:
    """(the key of EXPORTS, or the serving_default's input names when it is none of them; (what the export is,
    the tool or call that serves it), or None) of a loaded SavedModel's signatures."""
    serve = signatures.get("serving_default")
    if serve is None:
        return (), None
    specs = serve.structured_input_signature[1]
    names = tuple(sorted(specs))
    if names == ("text",) and "top_k" in signatures:
        names = ("text", "top_k")
    elif names == _PACKED and specs["input_ids"].shape.rank == 3:
        names = ("race",)
    elif names == _PACKED and "start_logits" in serve.structured_outputs:
        names = ("squad 1.1",)
    return names, EXPORTS.get(names)


def refuse_export(parser, export_dir: str, signatures, wanted: tuple, kind: str):
    """One line unless the export's serving_default takes the inputs `wanted` (a key of EXPORTS): what the export
    is and which tool serves it, or, for a SavedModel of no known kind, the inputs it takes."""
    names, known = what_export(signatures)
    if names in wanted:
        return names
    if known is None:
        parser.error(f"{export_dir} is not {kind} (its serving_default takes {', '.join(names) or 'nothing'}); pass "
                     f"{EXPORTS[wanted[0]][0].split('(', 1)[1].rstrip(')')}")
    what, serve = known
    parser.error(f"{export_dir} is {what}, not {kind}; {serve.format(dir=export_dir)}")


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


def label_names(export_dir: str, count: int) -> list:
    """The label of each probability, from the export's assets/labels.json (albert.export.serving writes it); an
    export without it (an earlier version's) or one that does not match gives `None` for each."""
    try:
        with open(os.path.join(export_dir, "assets", "labels.json"), encoding="utf-8") as f:
            labels = json.load(f)
    except (OSError, ValueError):
        return [None] * count
    if not isinstance(labels, list) or len(labels) != count or not all(isinstance(x, str) for x in labels):
        return [None] * count
    return labels


def main(argv=None):
    parser = OneLineParser(prog="classify.py", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("export_dir", help="a run_classifier.py --export_dir SavedModel")
    parser.add_argument("text_a", help="the sentence (the first of a pair; '-': read it from stdin)")
    parser.add_argument("text_b", nargs="?", help="the second sentence, for a pair task ('-': read it from stdin)")
    args = parser.parse_args(argv)
    texts = {name: utf8_argument(parser, name, getattr(args, name)) for name in ("text_a", "text_b")
             if getattr(args, name) is not None}
    if list(texts.values()).count("-") > 1:
        parser.error("text_a and text_b are both '-': read one of them from stdin, give the other as an argument")
    for name, text in texts.items():
        if text == "-":
            texts[name] = read_stdin(parser, name).removesuffix("\n").removesuffix("\r")
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
    names = refuse_export(parser, args.export_dir, signatures, (("text_a",), ("text_a", "text_b")), "a classifier")
    inputs = {"text_a": tf.constant([texts["text_a"]])}
    if "text_b" in names:
        if "text_b" not in texts:
            parser.error(f"{args.export_dir} classifies sentence pairs: give two sentences")
        inputs["text_b"] = tf.constant([texts["text_b"]])
    elif "text_b" in texts:
        parser.error(f"{args.export_dir} classifies single sentences: give one sentence")
    outputs = serve(**inputs)
    prediction = outputs["predictions"].numpy()[0]
    prediction = prediction.decode() if isinstance(prediction, bytes) else float(prediction)
    line = f"prediction: {prediction}"
    if "probabilities" in outputs:
        probabilities = outputs["probabilities"].numpy()[0]
        labels = label_names(args.export_dir, len(probabilities))
        line += "  probabilities: " + " ".join(f"{label}={p:.3f}" if label is not None else f"{p:.3f}"
                                               for label, p in zip(labels, probabilities))
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
