"""Answer a question from a text with the raw-text serving model of `run_squad.py --export_dir` (EXPORT/text), in a
process that imports only TensorFlow and tensorflow-text (no `albert`): what a user of the export does.

    python tools/answer.py out/squad_serving/text "Where does the Moselle rise?" "The Moselle rises in the Vosges."

Prints the answer as written in the text and its character offsets and score (a SQuAD 2.0 model: or `no answer`,
with its no-answer score). The question and the text (arguments, stdin) are read as UTF-8. A bad request (an empty
question or text, bytes that are not UTF-8, another task's export) is one line on stderr, exit status 2.
"""

import os
import re
import sys

from classify import OneLineParser, import_tensorflow_quietly, read_stdin, refuse_export, utf8_argument


def main(argv=None):
    parser = OneLineParser(prog="answer.py", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("export_dir", help="the raw-text SQuAD SavedModel (run_squad.py's EXPORT_DIR/text)")
    parser.add_argument("question", help="the question")
    parser.add_argument("context", help="the text the answer is to be found in ('-': read it from stdin)")
    args = parser.parse_args(argv)
    question, context = utf8_argument(parser, "question", args.question), utf8_argument(parser, "context", args.context)
    if context == "-":
        context = read_stdin(parser, "context")
    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
        parser.error(f"{args.export_dir}: not a SavedModel directory (no saved_model.pb); pass run_squad.py's "
                     "EXPORT_DIR/text")
    tf = import_tensorflow_quietly()
    try:
        signatures = tf.saved_model.load(args.export_dir).signatures
    except (OSError, ValueError, tf.errors.OpError) as e:
        parser.error(f"{args.export_dir}: cannot load the SavedModel ({str(e).splitlines()[0][:200]})")
    refuse_export(parser, args.export_dir, signatures, (("context", "question"),), "a raw-text SQuAD model")
    try:
        out = signatures["serving_default"](question=tf.constant([question]), context=tf.constant([context]))
    except tf.errors.InvalidArgumentError as e:  # the graph's assertion: its message, without TensorFlow's frame
        found = re.search(r"assertion failed: \[([^\]]*)\]", e.message)
        parser.error(found.group(1) if found else e.message.strip().splitlines()[-1][:300])
    out = {name: value.numpy()[0] for name, value in out.items()}
    if "has_answer" in out and not out["has_answer"]:
        print(f"no answer (no-answer score {out['null_score']:.3f})")
        return 0
    if out["start"] < 0:
        print("no answer (no span of the text qualifies)")
        return 0
    line = f"answer: {out['answer'].decode()}  (characters {out['start']}-{out['end']}, score {out['score']:.3f}"
    if "null_score" in out:
        line += f", no-answer score {out['null_score']:.3f}"
    print(line + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
