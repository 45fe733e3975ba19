"""Fine-tuning recipes for the demo's pair task, over precisions and seeds: which recipe learns on every run?

    python experiments/demo_finetune_sweep.py --demo_dir out/demo --recipes lr5e-4,lr1e-4 --seeds 1,2,3

Each run is `run_classifier.py` from the demo's pretrained model.ckpt-best into DEMO_DIR/sweep/<recipe>-<precision>-
<seed>; the table gives the best dev accuracy of each (chance 0.5) and the share of runs that stayed at chance.
"""

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPES = {  # name -> run_classifier flags (300 steps of 32 pairs, as the demo)
    "lr1e-3": ["--learning_rate=1e-3", "--warmup_step=30"],
    "lr5e-4": ["--learning_rate=5e-4", "--warmup_step=30"],
    "lr2e-4": ["--learning_rate=2e-4", "--warmup_step=30"],
    "lr1e-4": ["--learning_rate=1e-4", "--warmup_step=30"],
    "lr1e-4w100": ["--learning_rate=1e-4", "--warmup_step=100"],
    "lr5e-5": ["--learning_rate=5e-5", "--warmup_step=30"],
    "lamb2e-3": ["--optimizer=lamb", "--learning_rate=2e-3", "--warmup_step=30"],
    "scratch-lr5e-4": ["--learning_rate=5e-4", "--warmup_step=30"],  # no pretrained weights: the baseline
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo_dir", default="out/demo")
    parser.add_argument("--glue_dir", default=None, help="default DEMO_DIR/pair_task")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--train_step", type=int, default=300)
    args = parser.parse_args()
    d = args.demo_dir
    rows = []
    for recipe in args.recipes.split(","):
        for precision in args.precisions.split(","):
            for seed in args.seeds.split(","):
                out = os.path.join(d, "sweep", f"{recipe}-{precision}-{seed}")
                start = time.time()
                result = subprocess.run(
                    [sys.executable, os.path.join(ROOT, "run_classifier.py"), "--task_name=MRPC",
                     f"--data_dir={args.glue_dir or os.path.join(d, 'pair_task')}", f"--output_dir={out}",
                     f"--albert_config_file={d}/albert_config.json", f"--spm_model_file={d}/spm.model",
                     *([] if recipe.startswith("scratch") else [f"--init_checkpoint={d}/model/model.ckpt-best"]),
                     "--do_train", "--do_eval",
                     "--max_seq_length=64", "--train_batch_size=32", f"--train_step={args.train_step}",
                     f"--save_checkpoints_steps={args.train_step // 2}", "--eval_batch_size=64",
                     f"--mixed_precision={precision}", f"--random_seed={seed}", *RECIPES[recipe]],
                    capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
                if result.returncode:
                    sys.exit(result.stderr[-2000:])
                best = float(open(os.path.join(out, "best_trial.txt")).read().split(":")[2])
                rows.append((recipe, precision, seed, best))
                print(f"{recipe} {precision} seed {seed}: best dev accuracy {best:.3f} ({time.time() - start:.0f} s)",
                      flush=True)
    print("| recipe | precision | accuracies | min |")
    print("|---|---|---|---|")
    for recipe in args.recipes.split(","):
        for precision in args.precisions.split(","):
            values = [r[3] for r in rows if r[0] == recipe and r[1] == precision]
            print(f"| {recipe} | {precision} | {', '.join(f'{v:.3f}' for v in values)} | {min(values):.3f} |")


if __name__ == "__main__":
    main()
