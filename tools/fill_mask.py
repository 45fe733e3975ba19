"""Fill the masked words of raw texts with the fill-mask SavedModel of `export_to_tfhub.py` (OUT/fill_mask), in a
process that imports only TensorFlow and tensorflow-text (no `albert`): what a user of the export does.

    python tools/fill_mask.py out/hub/fill_mask "The capital of France is [MASK]." --top_k 3
    python tools/fill_mask.py out/hub/fill_mask - < sentences.txt      # each line of stdin a text

For each text: the text, then one line per mask with its top-k words and their probabilities. A text the model
cannot fill (no [MASK], too many masks, too long) is one line on stderr; the others are still shown, and the exit
status is 2. The texts (arguments, stdin) are read as UTF-8: other bytes, or another task's export, are one line
on stderr before any text is filled, exit status 2.
"""

import os
import re
import sys

from classify import OneLineParser, import_tensorflow_quietly, read_stdin, refuse_export, utf8_argument


def main(argv=None):
    parser = OneLineParser(prog="fill_mask.py", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("export_dir", help="the fill_mask SavedModel of export_to_tfhub.py (OUT/fill_mask)")
    parser.add_argument("texts", nargs="+", help="texts holding [MASK] where a word is missing ('-': each line of "
                        "stdin a text)")
    parser.add_argument("--top_k", type=int, default=5, help="the words shown per mask (default 5)")
    args = parser.parse_args(argv)
    if args.top_k < 1:
        parser.error(f"--top_k {args.top_k}: give a whole number of at least 1")
    texts = []
    for number, text in enumerate(args.texts, 1):
        text = utf8_argument(parser, f"text {number}", text)
        texts += [line for line in read_stdin(parser, f"text {number}").splitlines() if line.strip()] \
            if text == "-" else [text]
    if not texts:
        parser.error("no text: stdin holds no line with text; give texts holding [MASK]")
    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
        parser.error(f"{args.export_dir}: not a SavedModel directory (no saved_model.pb); pass export_to_tfhub.py's "
                     "OUT/fill_mask")
    tf = import_tensorflow_quietly()
    try:
        signatures = tf.saved_model.load(args.export_dir).signatures
    except (OSError, ValueError, tf.errors.OpError) as e:
        parser.error(f"{args.export_dir}: cannot load the SavedModel ({str(e).splitlines()[0][:200]})")
    refuse_export(parser, args.export_dir, signatures, (("text", "top_k"),), "a fill-mask model")
    try:
        out = signatures["top_k"](text=tf.constant(texts), top_k=tf.constant(args.top_k, tf.int32))
    except tf.errors.InvalidArgumentError as e:  # the graph's assertion: its message, without TensorFlow's frame
        found = re.search(r"assertion failed: \[([^\]]*)\]", e.message)
        parser.error(found.group(1) if found else e.message.strip().splitlines()[-1][:300])
    out = {name: value.numpy() for name, value in out.items()}
    failed = 0
    for b, text in enumerate(texts):
        error = out["errors"][b].decode()
        if error:
            print(f"fill_mask.py: error: text {b + 1}: {error}", file=sys.stderr)
            failed += 1
            continue
        print(text)
        for m in range(out["mask_counts"][b]):
            start, end = out["mask_offsets"][b, m]
            guesses = "  ".join(f"{word.decode() or repr('')} {score:.3f}"
                                for word, score in zip(out["token_strs"][b, m], out["scores"][b, m]))
            print(f"  {text[start:end]} {m + 1} (characters {start}-{end}): {guesses}")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
