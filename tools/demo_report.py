"""Print the demo's results next to chance, with a plain verdict for each: did the step learn?

    demo_report.py heldout ...   masked-LM accuracy against a uniform guess and against always predicting the
                                 training data's most frequent masked token; sentence-order accuracy against a
                                 coin and against always predicting the held-out majority label
    demo_report.py finetune ...  the fine-tuned classifier's best dev accuracy against the dev majority label
    demo_report.py fillmask ...  what pretraining learned, in words: a word of a few held-out sentences masked, the
                                 original beside the pretrained model's top 3 (AlbertPretrainer.fill_mask)

A result counts as learned only when it is more than 3 standard errors above its majority baseline (binomial, n
the number of held-out predictions); otherwise the step says NOT LEARNED and the script exits with status 3.
"""

import argparse
import collections
import csv
import math
import os
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/tools/", 1)[0])


def verdict(accuracy: float, baseline: float, n: int) -> tuple:
    """(learned, text): learned when `accuracy` beats `baseline` by more than 3 binomial standard errors."""
    margin = 3 * math.sqrt(baseline * (1 - baseline) / max(n, 1))
    if accuracy > baseline + margin:
        return True, f"learned: {accuracy - baseline:+.3f} over the majority baseline (3 standard errors: {margin:.3f})"
    return False, (f"NOT LEARNED: {accuracy:.3f} is within {margin:.3f} (3 standard errors over {n:,} examples) of "
                   f"the majority baseline {baseline:.3f}, i.e. at chance")


def labels(path, seq, pred):
    import tensorflow as tf

    from albert.data.features import pretraining_features
    from albert.data.readers import feature_description

    description = feature_description(pretraining_features(seq, pred))
    tokens, order = collections.Counter(), []
    for batch in tf.data.TFRecordDataset(path).batch(4096).map(lambda r: tf.io.parse_example(r, description)):
        weights = batch["masked_lm_weights"].numpy() > 0
        tokens.update(batch["masked_lm_ids"].numpy()[weights].tolist())
        order.extend(batch["next_sentence_labels"].numpy()[:, 0].tolist())
    return tokens, order


def heldout(args) -> bool:
    evaluations = [{}]  # eval_results.txt holds every evaluation of the run, a block of sorted keys each
    for line in open(args.eval_results).read().splitlines():
        key, value = line.split(" = ")
        if key in evaluations[-1]:
            evaluations.append({})
        evaluations[-1][key] = value
    results = evaluations[-1]
    train_tokens, _ = labels(args.train_records, args.max_seq_length, args.max_predictions_per_seq)
    heldout_tokens, heldout_order = labels(args.heldout_records, args.max_seq_length, args.max_predictions_per_seq)
    top_token = train_tokens.most_common(1)[0][0]
    masked = sum(heldout_tokens.values())
    majority_token = heldout_tokens[top_token] / masked
    majority_order = max(np.mean(heldout_order), 1 - np.mean(heldout_order))
    mlm, sop = float(results["masked_lm_accuracy"]), float(results["sentence_order_accuracy"])
    print(f"held-out: {len(heldout_order):,} instances, {masked:,} masked tokens (model at step "
          f"{results['global_step']}, the last of {len(evaluations)} evaluations)")
    print(f"{'':24}{'model':>8}{'uniform':>10}{'majority':>10}")
    print(f"{'masked-LM accuracy':24}{mlm:>8.3f}{1 / args.vocab_size:>10.4f}{majority_token:>10.3f}")
    print(f"{'sentence-order accuracy':24}{sop:>8.3f}{0.5:>10.3f}{majority_order:>10.3f}")
    print(f"masked-LM loss {float(results['masked_lm_loss']):.3f}, sentence-order loss "
          f"{float(results['sentence_order_loss']):.3f}")
    ok_mlm, text = verdict(mlm, majority_token, masked)
    print(f"masked-LM: {text}")
    ok_sop, text = verdict(sop, majority_order, len(heldout_order))
    print(f"sentence order: {text}")
    return ok_mlm and ok_sop


def finetune(args) -> bool:
    with open(args.dev_file, encoding="utf-8", newline="") as f:
        gold = [row[0] for row in list(csv.reader(f, delimiter="\t", quotechar=None))[1:]]
    majority = collections.Counter(gold).most_common(1)[0][1] / len(gold)
    step, best_step, best = open(os.path.join(args.output_dir, "best_trial.txt")).read().split(":")
    accuracy = float(best)
    learned, text = verdict(accuracy, majority, len(gold))
    print(f"pair task dev accuracy {accuracy:.3f} (best of the evaluations, at step {best_step} of {step}; "
          f"{len(gold):,} dev pairs, majority label {majority:.3f})")
    print(f"fine-tuning: {text}")
    return learned


SPACE = "\u2581"  # SentencePiece's word start, a piece of its own before some symbols


def masked_sentences(path, tokenizer, count: int) -> list:
    """(text with one word as [MASK], that word) for `count` sentences spread over a held-out corpus file: sentences
    of 8 to 16 words, masking the middle-most word that is one whole piece of the vocabulary (so that the model can
    name it) and not one of the first two."""
    with open(path, encoding="utf-8") as f:
        lines = [line.split() for line in f if 8 <= len(line.split()) <= 16]
    chosen = []
    for words in lines[::max(1, len(lines) // (4 * count))]:
        whole = [i for i, w in enumerate(words) if i >= 2 and w.isalpha() and len(w) >= 4
                 and tokenizer.tokenize(w) == [SPACE + w.lower()]]
        if whole:
            i = min(whole, key=lambda i: abs(i - len(words) / 2))
            chosen.append((" ".join(words[:i] + ["[MASK]"] + words[i + 1:]), words[i].lower()))
        if len(chosen) == count:
            break
    return chosen


def fillmask(args) -> bool:
    from albert.tasks.pretraining.model import AlbertPretrainer
    from albert.text.tokenization import FullTokenizer

    model = AlbertPretrainer.from_pretrained(args.albert_directory, checkpoint_name=args.checkpoint_name,
                                             spm_model_file=args.spm_model_file, seq_length=args.max_seq_length)
    tokenizer = FullTokenizer(None, True, args.spm_model_file)
    cases = masked_sentences(args.heldout_corpus, tokenizer, args.sentences)
    pieces = len(tokenizer.vocab)
    answers = model.fill_mask([text for text, _ in cases], top_k=pieces)  # every piece, ranked
    print(f"fill-mask on {len(cases)} held-out sentences: the word masked (its rank among the {pieces:,} pieces), "
          "then the model's top 3")
    ranks = []
    for (text, word), ranked in zip(cases, answers):
        ranks.append(1 + [p["token_str"] for p in ranked].index(word))
        guesses = ", ".join(f"{p['token_str'] or SPACE!r} {p['score']:.2f}" for p in ranked[:3])
        print(f"  {text}\n    {word:>14} ({ranks[-1]:>5,}) | {guesses}")
    print(f"the word masked: the top guess in {ranks.count(1)} of {len(cases)}, median rank {np.median(ranks):,.0f} "
          f"(a uniform guess: {(pieces + 1) / 2:,.0f})")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("heldout")
    for name in ("eval_results", "train_records", "heldout_records"):
        report.add_argument(f"--{name}", required=True)
    report.add_argument("--max_seq_length", type=int, required=True)
    report.add_argument("--max_predictions_per_seq", type=int, required=True)
    report.add_argument("--vocab_size", type=int, required=True)
    report = commands.add_parser("finetune")
    report.add_argument("--output_dir", required=True, help="run_classifier.py's --output_dir")
    report.add_argument("--dev_file", required=True, help="the task's dev.tsv (label in the first column)")
    report = commands.add_parser("fillmask")
    report.add_argument("--albert_directory", required=True, help="albert_config.json's directory")
    report.add_argument("--checkpoint_name", default="model/model.ckpt-best", help="inside --albert_directory")
    report.add_argument("--spm_model_file", required=True)
    report.add_argument("--heldout_corpus", required=True, help="held-out documents, one sentence per line")
    report.add_argument("--max_seq_length", type=int, required=True)
    report.add_argument("--sentences", type=int, default=5)
    args = parser.parse_args()
    learned = {"heldout": heldout, "finetune": finetune, "fillmask": fillmask}[args.command](args)
    sys.exit(0 if learned else 3)


if __name__ == "__main__":
    main()
