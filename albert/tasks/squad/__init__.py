"""SQuAD 1.1 / 2.0 (run_squad.py, `AlbertSquadV1` / `AlbertSquadV2`): the file's layout, examples and feature
files, the piece-to-character alignment and windows, the model run over windows and the n-best answers, answers on
raw strings, the serving model, the official scoring, the job and its settings.
"""
