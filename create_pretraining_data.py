r"""Raw text -> TFRecords of masked-LM (n-gram, whole-word) + sentence-order instances, in the original format.

    python create_pretraining_data.py --input_file=corpus.txt --output_file=out/train.tfrecord \
        --spm_model_file=30k-clean.model --max_seq_length=512 --dupe_factor=40 --num_workers=8

Input: one sentence per line, a blank line between documents; comma-separated files or globs, plain or .gz,
local or gs://. The same --random_seed gives byte-identical files for any --num_workers.

    # the same job as an Apache Beam pipeline (pip install -r requirements-beam.txt); Beam's options pass through:
    python create_pretraining_data.py --input_file='corpus/*.txt' --output_file=out/train \
        --spm_model_file=30k-clean.model --runner=DirectRunner --direct_running_mode=multi_processing
    # on a dask.distributed cluster (dask scheduler; dask worker tcp://HOST:8786, the project on their PYTHONPATH):
    python create_pretraining_data.py ... --runner=DaskRunner --dask_client_address=tcp://HOST:8786
"""


from absl import flags

from albert.ground import cli
from albert.data import beam
from albert.data.beam import check_runner, import_beam, pipeline_options
from albert.data.corpus import expand_inputs
from albert.data.generator import generate
from albert.data.instances import Options
from albert.ground.errors import AlbertError
from albert.ground.stderr_filter import stderr_is_terminal
from albert.text.tokenization import FullTokenizer

flags.DEFINE_string("input_file", None, "Raw text file(s), comma-separated, globs allowed (plain or .gz).")
flags.DEFINE_string("output_file", None, "Output TFRecord file(s), comma-separated; instances go round-robin.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary (used when --spm_model_file is empty).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model (e.g. 30k-clean.model).")
flags.DEFINE_string("input_file_mode", "r", "Kept for compatibility: input is always read as UTF-8 bytes.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input.")
flags.DEFINE_bool("do_whole_word_mask", True, "Mask whole words (all pieces of a word together).")
flags.DEFINE_bool("do_permutation", False, "Also add permuted-token predictions (doubles the masked-LM arrays).")
flags.DEFINE_bool("favor_shorter_ngram", True, "n-gram length probabilities proportional to 1/n (else reversed).")
flags.DEFINE_bool("random_next_sentence", False, "BERT next-sentence negatives instead of sentence-order swaps.")
flags.DEFINE_integer("max_seq_length", 512, "Maximum tokens per instance, [CLS] and [SEP]s included.")
flags.DEFINE_integer("ngram", 3, "Maximum n-gram length (in words with whole-word masking).")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum masked positions per instance.")
flags.DEFINE_integer("random_seed", 12345, "Seed of every random choice: same seed, same bytes.")
flags.DEFINE_integer("dupe_factor", 40, "Passes over the corpus, each with new segmentation and masks.")
flags.DEFINE_float("masked_lm_prob", 0.15, "Fraction of tokens to mask.")
flags.DEFINE_float("short_seq_prob", 0.1, "Probability of a shorter random target length for a document pass.")
flags.DEFINE_integer("num_workers", 1, "Worker processes (output is identical for any number).")
flags.DEFINE_bool("progress", True, "Show a progress bar on stderr.")
flags.DEFINE_string("runner", None, "Run as an Apache Beam pipeline on this runner (DirectRunner, DaskRunner, "
                    "DataflowRunner, FlinkRunner, SparkRunner, ...); Beam's own pipeline options pass through "
                    "(DaskRunner: --dask_client_address=tcp://HOST:8786, else a local cluster). --output_file is "
                    "then the prefix of <prefix>-00000-of-000NN shards. Needs pip install -r requirements-beam.txt.")
flags.DEFINE_integer("num_output_shards", 0, "With --runner: the number of output shards (0: about 256 MB each).")
FLAGS = flags.FLAGS


def main(argv):
    unknown = argv[1:]
    if unknown and not FLAGS.runner:
        raise AlbertError(f"unknown flag {unknown[0]!r}; see --help (Beam pipeline options need --runner)")
    cli.require({"input_file": FLAGS.input_file, "output_file": FLAGS.output_file})
    if not FLAGS.spm_model_file and not FLAGS.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")
    cli.check_at_least("max_seq_length", FLAGS.max_seq_length, 5, "[CLS] A [SEP] B [SEP] with a token in A and B")
    cli.check_at_least("max_predictions_per_seq", FLAGS.max_predictions_per_seq, 1)
    cli.check_at_least("ngram", FLAGS.ngram, 1)
    cli.check_at_least("dupe_factor", FLAGS.dupe_factor, 1)
    cli.check_at_least("num_workers", FLAGS.num_workers, 1)
    cli.check_at_least("num_output_shards", FLAGS.num_output_shards, 0)
    cli.check_probability("masked_lm_prob", FLAGS.masked_lm_prob)
    cli.check_probability("short_seq_prob", FLAGS.short_seq_prob)
    if FLAGS.input_file_mode not in ("r", "rb"):
        raise AlbertError(f"--input_file_mode must be r or rb, got {FLAGS.input_file_mode!r}")

    if FLAGS.max_predictions_per_seq > FLAGS.max_seq_length - 3:
        raise AlbertError(f"--max_predictions_per_seq {FLAGS.max_predictions_per_seq} exceeds the tokens a sequence of "
                          f"--max_seq_length {FLAGS.max_seq_length} holds besides [CLS] and two [SEP]; pass at most "
                          f"{FLAGS.max_seq_length - 3}")

    input_files = expand_inputs(FLAGS.input_file)
    output_files = [p.strip() for p in FLAGS.output_file.split(",") if p.strip()]
    if FLAGS.runner:
        import_beam()  # one line naming the install command when Beam is missing
        check_runner(FLAGS.runner)
        pipeline_options(FLAGS.runner, unknown)
        if len(output_files) != 1:
            raise AlbertError("--runner writes shards named after one --output_file prefix; pass one path, not "
                              f"{len(output_files)}")
    cli.check_output_files("output_file", output_files,
                           (*input_files, FLAGS.spm_model_file, FLAGS.vocab_file))
    tokenizer = FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file)
    options = Options(
        max_seq_length=FLAGS.max_seq_length, short_seq_prob=FLAGS.short_seq_prob,
        masked_lm_prob=FLAGS.masked_lm_prob, max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        do_whole_word_mask=FLAGS.do_whole_word_mask, ngram=FLAGS.ngram, favor_shorter_ngram=FLAGS.favor_shorter_ngram,
        random_next_sentence=FLAGS.random_next_sentence, do_permutation=FLAGS.do_permutation)
    if FLAGS.runner:
        summary = beam.run(input_files, output_files[0], tokenizer, options, runner=FLAGS.runner,
                           pipeline_args=unknown, do_lower_case=FLAGS.do_lower_case, dupe_factor=FLAGS.dupe_factor,
                           random_seed=FLAGS.random_seed, num_shards=FLAGS.num_output_shards)
        for line in summary.lines():
            print(line)
        print(f"wrote {summary.output_files[0]} ... {summary.output_files[-1]} (runner {FLAGS.runner})")
        return
    summary = generate(input_files, output_files, tokenizer, options, do_lower_case=FLAGS.do_lower_case,
                       dupe_factor=FLAGS.dupe_factor, random_seed=FLAGS.random_seed,
                       num_workers=FLAGS.num_workers, progress=FLAGS.progress and stderr_is_terminal())
    for line in summary.lines():
        print(line)
    print("wrote " + ", ".join(output_files))


if __name__ == "__main__":
    cli.run(main, pass_unknown=True)
