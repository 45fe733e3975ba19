#!/usr/bin/env bash
# Fine-tune on the GLUE tasks with the paper's hyperparameters (arXiv 1909.11942, Table 14 = the original
# run_glue.sh): train + evaluate each checkpoint + predict the test set, one output directory per task.
#   ALBERT_ROOT   directory with albert_config.json, 30k-clean.model and model.ckpt-best (a released model)
#   GLUE_DIR      directory with CoLA/, MNLI/, MRPC/, ... in the GLUE layout
#   OUTPUT_ROOT   where out/<task> go (default out/glue)
# Usage: bash scripts/run_glue.sh [--dry-run] [TASK ...]     (default: every task below)
set -euo pipefail
cd "$(dirname "$0")/.."
dry=""
if [[ ${1:-} == "--dry-run" ]]; then dry=1; shift; fi
: "${ALBERT_ROOT:?set ALBERT_ROOT to a released model directory}" "${GLUE_DIR:?set GLUE_DIR to the GLUE data}"
OUTPUT_ROOT=${OUTPUT_ROOT:-out/glue}
# task: learning_rate batch train_step warmup_step save_checkpoints_steps
declare -A RECIPE=(
  [CoLA]="1e-5 16 5336 320 100"    [STS-B]="2e-5 16 3598 214 100"  [SST-2]="1e-5 32 20935 1256 100"
  [MNLI]="3e-5 128 10000 1000 100" [QNLI]="1e-5 32 33112 1986 200" [QQP]="5e-5 128 14000 1000 100"
  [RTE]="3e-5 32 800 200 100"      [MRPC]="2e-5 32 800 200 100"    [WNLI]="2e-5 16 2000 250 100"
)
tasks=("$@")
[[ ${#tasks[@]} -gt 0 ]] || tasks=(MNLI QNLI QQP RTE SST-2 MRPC CoLA STS-B WNLI)
for task in "${tasks[@]}"; do
  [[ -n ${RECIPE[$task]:-} ]] || { echo "unknown task $task; use one of ${!RECIPE[*]}" >&2; exit 2; }
  read -r lr batch steps warmup save <<< "${RECIPE[$task]}"
  cmd=(.venv/bin/python run_classifier.py --task_name="$task" --data_dir="$GLUE_DIR"
       --output_dir="$OUTPUT_ROOT/$task" --albert_config_file="$ALBERT_ROOT/albert_config.json"
       --spm_model_file="$ALBERT_ROOT/30k-clean.model" --init_checkpoint="$ALBERT_ROOT/model.ckpt-best"
       --do_lower_case --max_seq_length=512 --optimizer=adamw --do_train --do_eval --do_predict
       --learning_rate="$lr" --train_batch_size="$batch" --train_step="$steps" --warmup_step="$warmup"
       --save_checkpoints_steps="$save")
  if [[ -n $dry ]]; then echo "${cmd[*]}"; else "${cmd[@]}"; fi
done
