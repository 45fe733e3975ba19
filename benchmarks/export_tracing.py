"""How many times `export_to_tfhub.py` traces each endpoint, and how long it takes, on a tiny model (in-process).

Tracing is most of an export's time at small sizes (a tokenizing endpoint costs about a second per trace on 2 cores),
and TensorFlow traces again, inside `tf.saved_model.save`, any function traced before it outside a save context. The
exports pass signatures as their tf.functions and trace polymorphic variants in a save context
(albert.export.savedmodel.in_save_context), so each endpoint should be traced once per variant: this prints every
trace, the seconds spent tracing and in all, and lists each (name, input signature) traced more than once (one
function traced again, such as the LiteRT file's `serve`, which Keras' ExportArchive traces when the endpoint is
added and again when it saves). A count,
not a timing: the same on every machine.

    .venv/bin/python benchmarks/export_tracing.py
"""

import collections
import os
import runpy
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SPM = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_pretraining", "spiece.model")


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    from albert import AlbertConfig, AlbertPretrainer
    from albert.text.tokenization import load_sentencepiece
    from albert.weights.tf_checkpoints import save_original_checkpoint

    traces, seconds = collections.Counter(), [0.0]
    create = tracing_compilation._create_concrete_function

    def counted(function_type, type_context, func_graph, tracing_options):
        start = time.perf_counter()
        concrete = create(function_type, type_context, func_graph, tracing_options)
        seconds[0] += time.perf_counter() - start
        traces[(tracing_options.name, str(concrete.structured_input_signature))] += 1
        return concrete

    tracing_compilation._create_concrete_function = counted
    with tempfile.TemporaryDirectory() as work:
        model_dir = os.path.join(work, "model")
        os.makedirs(model_dir)
        config = AlbertConfig(vocab_size=load_sentencepiece(SPM).GetPieceSize(), embedding_size=8, hidden_size=16,
                              num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                              max_position_embeddings=32)
        config.to_json_file(os.path.join(model_dir, "albert_config.json"))
        save_original_checkpoint(AlbertPretrainer(config), os.path.join(model_dir, "model.ckpt-best"))
        sys.argv = ["export_to_tfhub.py", f"--albert_directory={model_dir}", f"--spm_model_file={SPM}",
                    f"--export_path={os.path.join(work, 'hub')}", "--seq_length=16"]
        start = time.perf_counter()
        try:
            runpy.run_path(os.path.join(ROOT, "export_to_tfhub.py"), run_name="__main__")
        except SystemExit as e:
            if e.code:
                raise
        total = time.perf_counter() - start
    by_name = collections.Counter()
    for (name, _), count in traces.items():
        by_name[name] += count
    twice = {key: count for key, count in traces.items() if count > 1 and not key[0].startswith("_")}
    print(f"{sum(traces.values())} traces, {seconds[0]:.1f} s tracing, {total:.1f} s for the export")
    for name, count in by_name.most_common():
        print(f"  {count:3d}  {name}")
    print(f"names traced more than once with the same inputs: {len(twice)}" + "".join(f"\n  {k[0]} {k[1][:100]}" for k in twice))


if __name__ == "__main__":
    main()
