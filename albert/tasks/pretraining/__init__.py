"""Pretraining and fill-mask (run_pretraining.py, export_to_tfhub.py, `AlbertPretrainer`): the masked-LM +
sentence-order objective, masks filled on raw text, the fill-mask serving model, the TF Hub export, the job and its
settings.
"""
