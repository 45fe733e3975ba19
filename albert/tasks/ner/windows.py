"""Sentences of words -> packed windows of pieces with a tag id per position (run_ner.py's features, and
AlbertTokenClassifier's fit / predict on lists of words), and back.

Each word is tokenized alone (SentencePiece marks it as a word start); a word that yields no piece gets `[UNK]`, so
every word has a position. A word is labelled on its first piece; its other pieces and [CLS] / [SEP] are out of the
loss (tag id -1), or with `label_all_tokens` carry the word's tag (B-X as I-X, as Hugging Face's example does).

A sentence longer than max_seq_length - 2 pieces is cut into overlapping windows of that many pieces, one starting
every `doc_stride` pieces (as SQuAD's document spans), so every piece is in some window; a piece that continues a
word from the window before is out of the loss there. A word longer than a window is kept by its first pieces in
the window where it starts. Each word is
scored in one window only -- the one where it has the most context (SQuAD's rule: the smaller of the pieces before
and after it, plus a hundredth of the window's length) -- in training (it is in the loss once) and in prediction
(it is predicted once).
"""

import dataclasses

import numpy as np

IGNORED = -1


@dataclasses.dataclass(frozen=True)
class Window:
    sentence: int  # index of its sentence
    input_ids: tuple  # [CLS] pieces [SEP], unpadded
    tag_ids: tuple  # per position: a tag id, or IGNORED
    words: tuple  # (word index, position) of the words scored from this window


def unknown_id(tokenizer) -> int:
    """The id a word that yields no piece gets: the vocabulary's [UNK] (SentencePiece's <unk>)."""
    return tokenizer.convert_tokens_to_ids(["[UNK]"] if "[UNK]" in tokenizer.vocab else ["<unk>"])[0]


def word_pieces(tokenizer, words) -> list:
    """The piece ids of each word (tokenized alone; [UNK] for a word that yields none)."""
    unknown = unknown_id(tokenizer)
    return [list(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))) or [unknown] for word in words]


def spans(total: int, capacity: int, doc_stride: int) -> list:
    """(first, end) piece offsets of the windows of a sentence of `total` pieces: `capacity` pieces each, starting
    every `doc_stride` pieces (at most `capacity`, so every piece is in one), the last one reaching the end."""
    found, start = [], 0
    while True:
        end = min(start + capacity, total)
        found.append((start, end))
        if end == total:
            return found
        start += doc_stride


def continuation_tag(tag: str, tags: list) -> str:
    """The tag of a word's later pieces under label_all_tokens: B-X as I-X (when I-X is a tag), else the tag."""
    inside = "I-" + tag[2:]
    return inside if tag.startswith("B-") and inside in tags else tag


def windows(sentence_index: int, pieces: list, tag_ids: list | None, max_seq_length: int, doc_stride: int,
            cls_id: int, sep_id: int, continuation_ids: list | None = None) -> list:
    """The Windows of one sentence. `tag_ids`: each word's tag id (None: a test sentence, every id IGNORED);
    `continuation_ids`: each word's id for its later pieces (label_all_tokens), else None."""
    capacity = max_seq_length - 2
    flat = [(word, offset) for word, ids in enumerate(pieces) for offset in range(len(ids))]
    ids = [piece for word_pieces_ in pieces for piece in word_pieces_]
    first = np.cumsum([0] + [len(p) for p in pieces])[:-1]
    cut = spans(len(ids), capacity, doc_stride)
    best = {}  # word -> (score, window)
    for number, (start, end) in enumerate(cut):
        for word, f in enumerate(first):
            if start <= f < end:
                score = min(f - start, end - 1 - f) + 0.01 * (end - start)
                if word not in best or score > best[word][0]:
                    best[word] = (score, number)
    out = []
    for number, (start, end) in enumerate(cut):
        labels = [IGNORED]
        scored = []
        for index in range(start, end):
            word, offset = flat[index]
            mine = best[word][1] == number
            if mine and offset == 0:
                scored.append((word, len(labels)))
            if not mine or tag_ids is None:
                labels.append(IGNORED)
            elif offset == 0:
                labels.append(tag_ids[word])
            else:
                labels.append(continuation_ids[word] if continuation_ids is not None else IGNORED)
        labels.append(IGNORED)
        out.append(Window(sentence_index, (cls_id, *ids[start:end], sep_id), tuple(labels), tuple(scored)))
    return out


def sentence_windows(sentences: list, tokenizer, labels: list, max_seq_length: int, doc_stride: int,
                     label_all_tokens: bool = False) -> list:
    """The Windows of every sentence (anything with `words` and `tags`, e.g. albert.tasks.ner.conll.Sentence; tags None
    for untagged sentences), tags as ids into `labels`."""
    index = {tag: i for i, tag in enumerate(labels)}
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    out = []
    for number, sentence in enumerate(sentences):
        pieces = word_pieces(tokenizer, sentence.words)
        tag_ids = [index[t] for t in sentence.tags] if sentence.tags is not None else None
        continuation = ([index[continuation_tag(t, labels)] for t in sentence.tags]
                        if label_all_tokens and sentence.tags is not None else None)
        out.extend(windows(number, pieces, tag_ids, max_seq_length, doc_stride, cls_id, sep_id, continuation))
    return out


def padded(windows_: list, max_seq_length: int) -> dict:
    """input_ids / input_mask / segment_ids / tag_ids arrays [N, max_seq_length] of Windows (int32; tag_ids padded
    with IGNORED)."""
    n = len(windows_)
    arrays = {"input_ids": np.zeros((n, max_seq_length), np.int32), "input_mask": np.zeros((n, max_seq_length),
                                                                                           np.int32),
              "segment_ids": np.zeros((n, max_seq_length), np.int32),
              "tag_ids": np.full((n, max_seq_length), IGNORED, np.int32)}
    for row, window in enumerate(windows_):
        length = len(window.input_ids)
        arrays["input_ids"][row, :length] = window.input_ids
        arrays["input_mask"][row, :length] = 1
        arrays["tag_ids"][row, :length] = window.tag_ids
    return arrays


def word_tags(windows_: list, predictions, sentences: list, labels: list) -> list:
    """Each sentence's predicted tags, one per word: `predictions` [N, T] tag ids of the windows, each word read at
    its first piece in the window that scores it."""
    tags = [[None] * len(sentence.words) for sentence in sentences]
    for row, window in enumerate(windows_):
        for word, position in window.words:
            tags[window.sentence][word] = labels[int(predictions[row][position])]
    missing = [(s, w) for s, sentence_tags in enumerate(tags) for w, tag in enumerate(sentence_tags) if tag is None]
    assert not missing, f"words without a prediction: {missing[:5]}"
    return tags
