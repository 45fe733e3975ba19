#!/usr/bin/env bash
# The paper's Table 6 in miniature: pretrain two small ALBERTs on the same corpus, one on sentence-order (SOP)
# data and one on next-sentence (NSP, --random_next_sentence) data, and evaluate each on held-out SOP and NSP data.
# Reuses the demo's corpus and SentencePiece model (run scripts/demo.sh first, or this script makes them).
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
export TF_CPP_MIN_LOG_LEVEL=2
DEMO=${DEMO_DIR:-out/demo}
OUT=${EXPERIMENT_DIR:-out/sop_vs_nsp}
STEPS=${EXPERIMENT_STEPS:-1600}
SEQ=64
PRED=10
[[ -s $DEMO/spm.model ]] || bash scripts/demo.sh
mkdir -p "$OUT"
common=(--spm_model_file="$DEMO/spm.model" --max_seq_length=$SEQ --max_predictions_per_seq=$PRED --noprogress)
for task in sop nsp; do
  flag=(); [[ $task == nsp ]] && flag=(--random_next_sentence)
  [[ -s $OUT/train_$task.tfrecord ]] || $py create_pretraining_data.py --input_file="$DEMO/corpus_train.txt" \
    --output_file="$OUT/train_$task.tfrecord" --dupe_factor=3 --num_workers=2 "${common[@]}" "${flag[@]}"
  [[ -s $OUT/heldout_$task.tfrecord ]] || $py create_pretraining_data.py --input_file="$DEMO/corpus_heldout.txt" \
    --output_file="$OUT/heldout_$task.tfrecord" --dupe_factor=2 --random_seed=7 "${common[@]}" "${flag[@]}"
done
cp "$DEMO/albert_config.json" "$OUT/albert_config.json"
for task in sop nsp; do
  $py run_pretraining.py --input_file="$OUT/train_$task.tfrecord" --output_dir="$OUT/model_$task" \
    --albert_config_file="$OUT/albert_config.json" --max_seq_length=$SEQ --max_predictions_per_seq=$PRED \
    --train_batch_size=64 --num_train_steps="$STEPS" --num_warmup_steps=100 --learning_rate=0.01 \
    --save_checkpoints_steps="$STEPS" --iterations_per_loop=200 --mixed_precision=bf16 | tail -1
done
echo "| trained on \\ evaluated on | SOP accuracy | NSP accuracy |"
echo "|---|---|---|"
for task in sop nsp; do
  row="| $task |"
  for eval in sop nsp; do
    $py run_pretraining.py --nodo_train --do_eval --input_file="$OUT/train_$task.tfrecord" \
      --eval_file="$OUT/heldout_$eval.tfrecord" --output_dir="$OUT/model_$task" \
      --albert_config_file="$OUT/albert_config.json" --max_seq_length=$SEQ --max_predictions_per_seq=$PRED \
      --eval_batch_size=64 --max_eval_steps=28 > /dev/null
    acc=$(grep sentence_order_accuracy "$OUT/model_$task/eval_results.txt" | cut -d' ' -f3)
    row="$row $(printf %.3f "$acc") |"
  done
  echo "$row"
done
