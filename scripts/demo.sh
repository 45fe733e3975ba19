#!/usr/bin/env bash
# The main job: ALBERT pretraining end to end on this machine, nothing downloaded.
#   1. a real-English corpus from the docstrings of the Python standard library and the installed packages
#   2. an ALBERT-style SentencePiece model trained on it
#   3. create_pretraining_data.py: masked-LM + sentence-order TFRecords (training and held-out documents)
#   4. run_pretraining.py: a small ALBERT (4 layers sharing one block, H=128) with LAMB, in bf16 on a GPU or a CPU
#      with native bf16 (AVX512-BF16 / AMX), in float32 elsewhere (where bf16 is slower); the first lines say which
#   5. masked-LM and sentence-order accuracy on the held-out documents, next to chance
#   6. run_classifier.py: fine-tune the pretrained model on a GLUE-format (MRPC layout) pair task made from the
#      corpus -- are two consecutive sentences of a docstring in their order, or swapped? -- and print its dev
#      accuracy
#   7. export: the pretrained model as TF Hub-style SavedModels (encoder, preprocessor, MLM) and the fine-tuned
#      classifier as a serving model on raw strings, then classify a sentence pair in a fresh process that
#      imports only TensorFlow and tensorflow-text (DEMO_TEXT_A / DEMO_TEXT_B to try your own)
# Each result is printed next to its chance level with a verdict; a step that ends at chance says NOT LEARNED and
# the script exits with status 3. The end prints where the time went.
# Idempotent: a rerun reuses finished steps (and resumes an interrupted pretraining). DEMO_DIR=... to relocate,
# DEMO_STEPS=... to train longer.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
start=$(date +%s)
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt 2> >(grep -v "^WARNING: Location" >&2)
export TF_CPP_MIN_LOG_LEVEL=2
# TensorFlow's start-up chatter (oneDNN, CUDA probing) is written before its log level applies: filter it.
py() { .venv/bin/python "$@" 2> >(grep -v -E '^(WARNING: All log messages before absl|[IWE]0000 |To enable the)' >&2); }
# bf16 only where it is fast (albert.ground.cpu.fast_precision owns the rule)
read -r PRECISION WHY < <(.venv/bin/python tools/demo_precision.py)
echo "precision: $PRECISION ($WHY)"
OUT=${DEMO_DIR:-out/demo}
STEPS=${DEMO_STEPS:-1000}
SEQ=64
PRED=10
VOCAB=8000
mkdir -p "$OUT"
timings=("$(printf '%6d s  install (venv, requirements.txt)' $(( $(date +%s) - start )))")
not_learned=()
step() { step_name=$1; step_start=$(date +%s); echo "== $1"; }
done_step() { timings+=("$(printf '%6d s  %s%s' $(( $(date +%s) - step_start )) "$step_name" "${1:+ ($1)}")"); }
# newer A B: A exists and is newer than B (a finished output of B)
newer() { [[ -e $1 && ! $2 -nt $1 ]]; }

step "1/7 corpus: docstrings of the standard library and installed packages"
if [[ -s $OUT/corpus_train.txt ]]; then done_step "done before"; else
  py tools/demo_corpus.py --output_dir "$OUT"; done_step; fi

step "2/7 SentencePiece model ($VOCAB pieces)"
if [[ -s $OUT/spm.model ]]; then done_step "done before"; else
  py -m albert.train_spm --input_file="$OUT/corpus_train.txt" --model_prefix="$OUT/spm" --vocab_size=$VOCAB
  done_step; fi

step "3/7 pretraining data"
data=(--spm_model_file="$OUT/spm.model" --max_seq_length=$SEQ --max_predictions_per_seq=$PRED --noprogress)
if [[ -s $OUT/train.tfrecord && -s $OUT/heldout.tfrecord ]]; then done_step "done before"; else
  [[ -s $OUT/train.tfrecord ]] || py create_pretraining_data.py --input_file="$OUT/corpus_train.txt" \
    --output_file="$OUT/train.tfrecord" --dupe_factor=3 --num_workers=2 "${data[@]}"
  [[ -s $OUT/heldout.tfrecord ]] || py create_pretraining_data.py --input_file="$OUT/corpus_heldout.txt" \
    --output_file="$OUT/heldout.tfrecord" --dupe_factor=1 --random_seed=7 "${data[@]}"
  done_step; fi

step "4/7 pretraining a small ALBERT ($STEPS steps of 64 sequences)"
cat > "$OUT/albert_config.json.new" <<JSON
{"vocab_size": $VOCAB, "embedding_size": 128, "hidden_size": 128, "num_hidden_layers": 4,
 "num_attention_heads": 2, "intermediate_size": 512, "max_position_embeddings": $SEQ, "hidden_act": "gelu"}
JSON
cmp -s "$OUT/albert_config.json.new" "$OUT/albert_config.json" && rm "$OUT/albert_config.json.new" \
  || mv "$OUT/albert_config.json.new" "$OUT/albert_config.json"
if [[ -s $OUT/model/model.ckpt-$STEPS.index ]]; then done_step "done before"; else
  py run_pretraining.py --input_file="$OUT/train.tfrecord" --eval_file="$OUT/heldout.tfrecord" \
    --output_dir="$OUT/model" --albert_config_file="$OUT/albert_config.json" --max_seq_length=$SEQ \
    --max_predictions_per_seq=$PRED --train_batch_size=64 --num_train_steps="$STEPS" --num_warmup_steps=100 \
    --learning_rate=0.01 --save_checkpoints_steps=500 --iterations_per_loop=250 --mixed_precision="$PRECISION" \
    --do_eval --eval_batch_size=64 --max_eval_steps=14
  done_step; fi

step "5/7 held-out documents"
py tools/demo_report.py heldout --eval_results="$OUT/model/eval_results.txt" --train_records="$OUT/train.tfrecord" \
  --heldout_records="$OUT/heldout.tfrecord" --max_seq_length=$SEQ --max_predictions_per_seq=$PRED \
  --vocab_size=$VOCAB || not_learned+=("5/7 pretraining (held-out)")
py tools/demo_report.py fillmask --albert_directory="$OUT" --spm_model_file="$OUT/spm.model" \
  --heldout_corpus="$OUT/corpus_heldout.txt" --max_seq_length=$SEQ
done_step

step "6/7 fine-tuning on a pair task in the GLUE (MRPC) layout: sentences in order, or swapped?"
[[ -s $OUT/pair_task/MRPC/train.tsv ]] || py tools/demo_glue_task.py --task=order --corpus_dir="$OUT" \
  --output_dir="$OUT/pair_task"
if newer "$OUT/pair_serving/saved_model.pb" "$OUT/model/model.ckpt-best.index"; then done_step "done before"; else
  rm -rf "$OUT/pair_classifier"
  py run_classifier.py --task_name=MRPC --data_dir="$OUT/pair_task" --output_dir="$OUT/pair_classifier" \
    --albert_config_file="$OUT/albert_config.json" --spm_model_file="$OUT/spm.model" \
    --init_checkpoint="$OUT/model/model.ckpt-best" --do_train --do_eval --max_seq_length=$SEQ \
    --train_batch_size=32 --train_step=300 --warmup_step=30 --learning_rate=2e-4 --save_checkpoints_steps=150 --eval_batch_size=64 --mixed_precision="$PRECISION" \
    --export_dir="$OUT/pair_serving" | grep "^eval step\|^exported"
  done_step; fi
py tools/demo_report.py finetune --output_dir="$OUT/pair_classifier" --dev_file="$OUT/pair_task/MRPC/dev.tsv" \
  || not_learned+=("6/7 fine-tuning")

step "7/7 export and serve"
if newer "$OUT/hub/encoder/saved_model.pb" "$OUT/model/model.ckpt-best.index"; then
  echo "exported before: $OUT/hub/encoder, $OUT/hub/preprocessor and $OUT/hub/mlm"; else
  py export_to_tfhub.py --albert_directory="$OUT" --checkpoint_name=model/model.ckpt-best --export_path="$OUT/hub" \
    --seq_length=$SEQ; fi
A=${DEMO_TEXT_A:-"Return the number of items in the container."}
B=${DEMO_TEXT_B:-"The result is always a non-negative integer."}
echo "\$ .venv/bin/python tools/classify.py $OUT/pair_serving \"$A\" \"$B\""
py tools/classify.py "$OUT/pair_serving" "$A" "$B"
done_step

echo "== where the time went"
printf '%s\n' "${timings[@]}"
echo "done in $(( $(date +%s) - start )) s; everything is in $OUT"
if (( ${#not_learned[@]} )); then
  echo "NOT LEARNED (at chance, see above): ${not_learned[*]}" >&2
  exit 3
fi
