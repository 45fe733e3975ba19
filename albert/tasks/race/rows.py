"""RACE rows: an article, a question and its options packed as the original packs them (spec §11.2).

One packing for both run_race.py's features (albert.tasks.race.examples) and `AlbertMultipleChoice.choose` on raw
strings (albert.tasks.race.answering).
"""

from albert.text.tokenization import preprocess_text


def option_text(question: str, option: str) -> str:
    """The original's question+option text: the option fills a blank `_`, else follows the question. The question
    is normalised first, as the original did, so full-width and vertical-form low lines (NFKD `_`) are blanks."""
    question = preprocess_text(question)
    return question.replace("_", option) if "_" in question else f"{question} {option}"


def default_max_qa_length(max_seq_length: int) -> int:
    """run_race.py's --max_qa_length when not given (and choose()'s): 128, or half the length below 256."""
    return max(1, min(128, max_seq_length // 2))


def choice_rows(context: str, question: str, options, tokenizer, max_seq_length: int, max_qa_length: int) -> dict:
    """One [CLS] context [SEP] question+option [SEP] row per option: the LAST max_qa_length tokens of
    question+option, the context cut from its end to fit; segment 0 through the first [SEP]; zero padding."""
    context_tokens = tokenizer.tokenize(context)
    rows = {"input_ids": [], "input_mask": [], "segment_ids": []}
    for option in options:
        ending = tokenizer.tokenize(option_text(question, option))[-max_qa_length:]
        kept = context_tokens[:max(0, max_seq_length - 3 - len(ending))]
        ids = tokenizer.convert_tokens_to_ids(["[CLS]", *kept, "[SEP]", *ending, "[SEP]"])
        padding = max_seq_length - len(ids)
        rows["input_ids"].append(ids + [0] * padding)
        rows["input_mask"].append([1] * len(ids) + [0] * padding)
        rows["segment_ids"].append([0] * (len(kept) + 2) + [1] * (len(ending) + 1) + [0] * padding)
    return rows
