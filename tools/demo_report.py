"""Print the demo's held-out results next to chance: masked-LM accuracy against a uniform guess and against always
predicting the training data's most frequent masked token; sentence-order accuracy against a coin and against
always predicting the held-out majority label."""

import argparse
import collections
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, __file__.rsplit("/tools/", 1)[0])

from albert.feature_specs import pretraining_features  # noqa: E402
from albert.input_pipeline import feature_description  # noqa: E402


def labels(path, seq, pred):
    description = feature_description(pretraining_features(seq, pred))
    tokens, order = collections.Counter(), []
    for batch in tf.data.TFRecordDataset(path).batch(4096).map(lambda r: tf.io.parse_example(r, description)):
        weights = batch["masked_lm_weights"].numpy() > 0
        tokens.update(batch["masked_lm_ids"].numpy()[weights].tolist())
        order.extend(batch["next_sentence_labels"].numpy()[:, 0].tolist())
    return tokens, order


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("eval_results", "train_records", "heldout_records"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--max_seq_length", type=int, required=True)
    parser.add_argument("--max_predictions_per_seq", type=int, required=True)
    parser.add_argument("--vocab_size", type=int, required=True)
    args = parser.parse_args()
    results = dict(line.split(" = ") for line in open(args.eval_results).read().splitlines())
    train_tokens, _ = labels(args.train_records, args.max_seq_length, args.max_predictions_per_seq)
    heldout_tokens, heldout_order = labels(args.heldout_records, args.max_seq_length, args.max_predictions_per_seq)
    top_token = train_tokens.most_common(1)[0][0]
    majority_token = heldout_tokens[top_token] / sum(heldout_tokens.values())
    majority_order = max(np.mean(heldout_order), 1 - np.mean(heldout_order))
    mlm, sop = float(results["masked_lm_accuracy"]), float(results["sentence_order_accuracy"])
    print(f"held-out: {len(heldout_order):,} instances, {sum(heldout_tokens.values()):,} masked tokens "
          f"(model at step {results['global_step']})")
    print(f"{'':24}{'model':>8}{'uniform':>10}{'majority':>10}")
    print(f"{'masked-LM accuracy':24}{mlm:>8.3f}{1 / args.vocab_size:>10.4f}{majority_token:>10.3f}")
    print(f"{'sentence-order accuracy':24}{sop:>8.3f}{0.5:>10.3f}{majority_order:>10.3f}")
    print(f"masked-LM loss {float(results['masked_lm_loss']):.3f}, sentence-order loss "
          f"{float(results['sentence_order_loss']):.3f}")


if __name__ == "__main__":
    main()
