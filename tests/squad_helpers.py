"""A synthetic, learnable extractive task in the SQuAD JSON layout, and the tiny model and SentencePiece model that
learn it: the answer is the word right after `code` (2.0: a third of the paragraphs have no code)."""

import json
import os
import subprocess
import sys

from tests.helpers import ROOT

# The tiny answering models of tests/test_answers.py and tests/test_squad_serving.py (over the released 30k-clean
# SentencePiece model), and their long context: ~90 pieces, seven windows at max_seq_length 40 and doc_stride 12;
# accents, a curly quote and a run of spaces for the piece-to-character alignment.
ANSWERING_CONFIG = dict(vocab_size=30000, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=24, max_position_embeddings=64,
                        initializer_range=1.0)
LONG_CONTEXT = ("The river Moselle rises in the Vosges and flows north  through Lorraine, past Metz and Thionville, "
                "into Luxembourg and Germany. At Koblenz it meets the Rhine. Its valley is famous for Riesling "
                "wine, terraced vineyards, Roman ruins at Trier and the “Porta Nigra”, castles at Cochem and Eltz, "
                "and the café towns of the Mittelmosel, where boats carry visitors between Bernkastel-Kues and "
                "Traben-Trarbach.")

FILLER = ["red", "blue", "green", "tree", "house", "river", "stone", "cloud", "bird", "lamp", "door", "road"]
ANSWERS = ["apple", "mango", "lemon", "peach", "grape", "melon", "olive", "plum"]


def make_squad(path, rng, paragraphs: int, version_2: bool):
    data = []
    for p in range(paragraphs):
        words = [rng.choice(FILLER) for _ in range(rng.randrange(6, 14))]
        impossible = version_2 and p % 3 == 0
        qa = {"id": f"q{p}", "question": "what is the code?"}
        if impossible:
            qa.update(answers=[], is_impossible=True)
        else:
            answer = rng.choice(ANSWERS)
            at = rng.randrange(len(words) + 1)
            words[at:at] = ["code", answer]
            start = len(" ".join(words[:at + 1])) + 1
            qa["answers"] = [{"text": answer, "answer_start": start}]
            if version_2:
                qa["is_impossible"] = False
        data.append({"title": f"t{p}", "paragraphs": [{"context": " ".join(words).capitalize() + ".",
                                                       "qas": [qa]}]})
    with open(path, "w") as f:
        json.dump({"version": "v2.0" if version_2 else "1.1", "data": data}, f)


def make_sentencepiece(directory, rng) -> str:
    from albert.text.tokenization import train_sentencepiece

    text = directory / "sp.txt"
    lines = [" ".join(rng.choice(FILLER + ANSWERS + ["code", "what", "is", "the"]) for _ in range(12))
             for _ in range(600)]
    text.write_text("\n".join(lines) + "\n")
    return train_sentencepiece([str(text)], str(directory / "sp"), vocab_size=56)


def tiny_config(directory) -> str:
    path = directory / "albert_config.json"
    path.write_text(json.dumps({"vocab_size": 60, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
                                "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 48}))
    return str(path)


def run_squad(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, os.path.join(ROOT, "run_squad.py"), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


# A small Korean SQuAD 1.1 file, written by hand: (context, [(question, answer)]), each answer at its first occurrence
# in its context. Hangul syllables decompose into jamo under the original's NFKD and SentencePiece composes them back,
# so characters and pieces no longer pair one by one.
KOREAN = [
    ("서울특별시는 대한민국의 수도이자 최대 도시이다. 한강이 도시를 가로질러 흐르며, 인구는 약 950만 명이다. "
     "조선 왕조가 1394년에 한양으로 도읍을 옮긴 이래 600년 넘게 수도의 역할을 해 왔다.",
     [("대한민국의 수도는 어디인가?", "서울특별시"), ("서울을 가로질러 흐르는 강은?", "한강"),
      ("서울의 인구는 얼마인가?", "약 950만 명"), ("조선이 한양으로 도읍을 옮긴 해는?", "1394년")]),
    ("한글은 1443년 세종대왕이 창제하고 1446년에 훈민정음이라는 이름으로 반포한 문자이다. 자음 14자와 모음 10자로 "
     "이루어져 있으며, 과학적인 문자 체계로 평가받는다.",
     [("한글을 창제한 사람은 누구인가?", "세종대왕"), ("한글이 반포된 해는?", "1446년"),
      ("반포 당시 한글의 이름은?", "훈민정음"), ("한글의 자음은 몇 자인가?", "14자")]),
    ("제주도는 한반도 남쪽에 있는 화산섬으로, 한라산이 섬의 중앙에 솟아 있다. 한라산의 높이는 1,947미터로 남한에서 "
     "가장 높은 산이다. 2007년에 제주 화산섬과 용암 동굴이 유네스코 세계자연유산에 등재되었다.",
     [("제주도 중앙에 있는 산은?", "한라산"), ("한라산의 높이는 얼마인가?", "1,947미터"),
      ("제주 화산섬이 세계자연유산에 등재된 해는?", "2007년")]),
    ("김치는 배추나 무 같은 채소를 소금에 절인 뒤 고춧가루, 마늘, 젓갈 등으로 양념하여 발효시킨 한국의 전통 "
     "음식이다. 2013년에는 김장 문화가 유네스코 인류무형문화유산으로 지정되었다.",
     [("김치를 만들 때 채소를 무엇에 절이는가?", "소금"), ("김장 문화가 인류무형문화유산이 된 해는?", "2013년"),
      ("김치의 주재료인 채소는?", "배추나 무")]),
    ("부산은 대한민국 제2의 도시이자 최대의 항구 도시이다. 해운대 해수욕장과 자갈치 시장이 유명하며, 매년 10월에는 "
     "부산국제영화제가 열린다.",
     [("대한민국 최대의 항구 도시는?", "부산"), ("부산국제영화제는 언제 열리는가?", "매년 10월"),
      ("부산의 유명한 시장은?", "자갈치 시장")]),
    ("이순신 장군은 임진왜란 때 거북선을 이끌고 일본 수군을 여러 차례 물리쳤다. 1597년 명량 해전에서는 13척의 배로 "
     "133척의 적선을 상대하여 승리하였다.",
     [("이순신이 이끈 배는?", "거북선"), ("명량 해전이 일어난 해는?", "1597년"),
      ("명량 해전에서 이순신의 배는 몇 척이었나?", "13척")]),
    ("삼성전자는 1969년에 설립된 전자 기업으로, 본사는 경기도 수원시에 있다. 스마트폰 브랜드 Galaxy와 메모리 반도체 "
     "DRAM으로 세계 시장을 이끌고 있다.",
     [("삼성전자가 설립된 해는?", "1969년"), ("삼성전자의 스마트폰 브랜드는?", "Galaxy"),
      ("삼성전자의 본사는 어디에 있는가?", "경기도 수원시")]),
    ("경복궁은 1395년에 지어진 조선 왕조의 법궁이다. 임진왜란 때 불에 탄 뒤 오랫동안 방치되었다가 1867년 "
     "흥선대원군이 다시 지었다.",
     [("경복궁이 지어진 해는?", "1395년"), ("경복궁을 다시 지은 사람은?", "흥선대원군")]),
]


def make_korean_squad(path, paragraphs=KOREAN) -> int:
    """KOREAN as a SQuAD 1.1 file (one answer per question: a training file and a predict file); the question count."""
    data, count = [], 0
    for p, (context, questions) in enumerate(paragraphs):
        qas = []
        for q, (question, answer) in enumerate(questions):
            assert answer in context, answer
            qas.append({"id": f"ko{p}-{q}", "question": question,
                        "answers": [{"text": answer, "answer_start": context.index(answer)}]})
        count += len(qas)
        data.append({"title": f"ko{p}", "paragraphs": [{"context": context, "qas": qas}]})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": data}, f, ensure_ascii=False)
    return count


# ------------------------------------------------------------------------------------- multi-script generator
# Words of each script the alignment must place (code point ranges, or a function of the rng), mixed with Latin.
LATIN_WORDS = ["the", "River", "Moselle", "2.5", "12,345", "1,000,000", "ΟΔΟΣ", "café", "Zoë’s", "naïve", "“quoted”",
               "ﬁne", "½", "①", "x²", "Ångström", "İstanbul", "ǅemal", "straße", "HTTP/2", "e-mail", "(a)"]
SCRIPTS = {
    "hangul": [(0xAC00, 0xD7A3)],
    "cjk": [(0x4E00, 0x9FFF), (0x3041, 0x3096), (0x30A1, 0x30FA), (0xFF21, 0xFF3A), (0xFF10, 0xFF19)],
    "thai": [(0x0E01, 0x0E3A), (0x0E40, 0x0E4E)],
    "arabic": [(0x0621, 0x063A), (0x0641, 0x0652), (0x0660, 0x0669), (0xFE80, 0xFEFC)],
    "accents": [(0x41, 0x5A), (0x61, 0x7A), (0x61, 0x7A), (0x300, 0x36F), (0xC0, 0xFF), (0x391, 0x3A9),
                (0x3B1, 0x3C9)],
    "emoji": [(0x1F300, 0x1F64F), (0x1F900, 0x1F9FF), (0x1F3FB, 0x1F3FF), (0x200D, 0x200D), (0xFE0F, 0xFE0F)],
}
SPECIALS = ["\x00", "\x08", "\u200b", "\ufeff", "\u00ad", "\u00a8", "\u2581", "\x85", "\u0301"]
SEPARATORS = [" ", " ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "", "\x00", ", ", ". ", " \u200b "]


def _jamo(rng) -> str:
    """Conjoining Hangul jamo, leading + vowel (+ trailing): SentencePiece's NFKC composes them into a syllable."""
    return (chr(rng.randint(0x1100, 0x1112)) + chr(rng.randint(0x1161, 0x1175))
            + (chr(rng.randint(0x11A8, 0x11C2)) if rng.random() < 0.5 else ""))


def script_word(rng, script: str) -> str:
    if script == "latin":
        return rng.choice(LATIN_WORDS)
    if script == "specials":
        return "".join(rng.choice(SPECIALS + ["a", "b"]) for _ in range(rng.randint(1, 3)))
    if script == "jamo":
        return "".join(_jamo(rng) for _ in range(rng.randint(1, 3)))
    ranges = SCRIPTS[script]
    return "".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(rng.randint(1, 6)))


ALL_SCRIPTS = ["latin", "specials", "jamo", *SCRIPTS]


def multi_script_case(rng) -> tuple:
    """(question, context, answer text, answer_start): a context of words from one to three scripts (and Latin),
    joined by separators of every kind; the answer some consecutive words of it."""
    scripts = rng.sample(ALL_SCRIPTS, rng.randint(1, 3)) + ["latin"] * rng.randint(0, 1)
    words = [script_word(rng, rng.choice(scripts)) for _ in range(rng.randint(2, 30))]
    context, spans = "", []
    for k, word in enumerate(words):
        if k:
            context += rng.choice(SEPARATORS)
        spans.append((len(context), len(context) + len(word)))
        context += word
    first = rng.randrange(len(words))
    last = min(len(words) - 1, first + rng.randint(0, 3))
    start, end = spans[first][0], spans[last][1]
    question = " ".join(script_word(rng, rng.choice(scripts)) for _ in range(rng.randint(1, 6))) + "?"
    if not context.strip():
        context += " x"
    return question, context, context[start:end], start


def make_multi_script_squad(path, rng, count: int) -> list:
    """`count` multi_script_case questions as a SQuAD 1.1 file, one paragraph each; the cases."""
    cases = [multi_script_case(rng) for _ in range(count)]
    data = [{"title": f"m{i}", "paragraphs": [{"context": context, "qas": [
        {"id": f"m{i}", "question": question, "answers": [{"text": text, "answer_start": start}]}]}]}
        for i, (question, context, text, start) in enumerate(cases)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": data}, f, ensure_ascii=False)
    return cases
