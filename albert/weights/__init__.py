"""ALBERT weights in every format through one loader (`albert.weights.loader`), which recognises the format from
the files (`albert.weights.formats`): the original TF1 names (`original`, the table every other format maps to),
our TF2 checkpoints, Hugging Face (`huggingface`) and keras-hub (`keras_hub`) directories; each format is one
declarative name table."""
