"""One package per task: classification, squad, race, ner, pretraining. Each holds its task model class, reader,
features and windows, post-processing, serving signature, job, settings and metrics; `loading` and `conversion`
know every task model."""
