"""Token classification (run_ner.py, `AlbertTokenClassifier`): CoNLL / JSON Lines files read into sentences,
words to piece windows and predictions back to words, entity scores, the serving model, the job and its settings.
"""
