"""Text classification (run_classifier.py, `AlbertClassifier`): GLUE's file layouts and a user's own files,
the features, the metrics, the serving model, the job and its settings.
"""
