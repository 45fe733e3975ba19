"""ALBERT pretraining (run_pretraining.py): masked-LM + sentence-order prediction with LAMB on any strategy,
resumed from the newest checkpoint; with evaluation, model.ckpt-best by masked-LM accuracy."""

import json
import math
import os

import tensorflow as tf

from albert.ground.atomic import write_text
from albert.data.features import PACKED_INPUTS, pretraining_features
from albert.data.readers import check_records, expand_files, pretraining_dataset
from albert.runner.outputs import append_eval_results, begin_training, record_model_files
from albert.tasks.pretraining.model import AlbertPretrainer
from albert.ground.rundir import BEST_CHECKPOINT
from albert.tasks.pretraining.objective import pretraining_loss
from albert.train.loop import Trainer
from albert.train.optimizers import create_optimizer
from albert.train.settings import Runtime
from albert.train.setup import begin_job, check_batch_split, loop_config
from albert.weights.run_checkpoints import evaluate_each
from albert.weights.tf_checkpoints import save_original_checkpoint
from albert.runner.settings import say_long_warmup
from albert.tasks.pretraining.settings import PretrainingRun

MASKED_LM_ARRAYS = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def run(settings: PretrainingRun, runtime: Runtime):
    Pretraining(settings, runtime).run()


class Pretraining:
    def __init__(self, settings: PretrainingRun, runtime: Runtime):
        s = self.settings = settings
        self.runtime = runtime
        strategy, self.config = begin_job(runtime, s.albert_config_file, s.output_dir)
        config = self.config
        self.train_files = expand_files(s.input_file)
        self.eval_files = expand_files(s.eval_file) if s.eval_file else self.train_files
        spec = pretraining_features(s.max_seq_length, s.max_predictions_per_seq)
        spec.pop("token_boundary")  # not read
        lengths = {name: ("--max_seq_length", s.max_seq_length) for name in PACKED_INPUTS}
        lengths.update({name: ("--max_predictions_per_seq", s.max_predictions_per_seq) for name in MASKED_LM_ARRAYS})
        used = set(self.train_files if s.do_train else []) | set(self.eval_files if s.do_eval else [])
        check_records(sorted(used), spec, lengths, config.vocab_size, "pretraining records")
        replicas = strategy.num_replicas_in_sync
        accumulation = runtime.gradient_accumulation_steps
        check_batch_split("train_batch_size", s.train_batch_size, replicas, accumulation)
        check_batch_split("eval_batch_size", s.eval_batch_size, replicas)
        with strategy.scope():
            self.model = AlbertPretrainer(config)
            optimizer = create_optimizer(s.learning_rate, s.num_train_steps, s.num_warmup_steps, s.optimizer,
                                         s.poly_power, s.start_warmup_step, model=self.model)
        loop = loop_config(runtime, config, s.output_dir, s.num_train_steps, s.train_batch_size // accumulation,
                           s.max_seq_length, predictions=s.max_predictions_per_seq)
        self.trainer = Trainer(strategy, self.model, optimizer, pretraining_loss, loop,
                               loss_scaling=runtime.mixed_precision == "fp16")
        self.best_file = os.path.join(s.output_dir, BEST_CHECKPOINT + ".json")
        self.best = json.load(tf.io.gfile.GFile(self.best_file)) if tf.io.gfile.exists(self.best_file) else {}

    def dataset_fn(self, files: list, training: bool):
        s = self.settings

        def make(context, batch_size):
            return pretraining_dataset(files, s.max_seq_length, s.max_predictions_per_seq, batch_size, training,
                                       context, seed=self.runtime.random_seed)
        return make

    def run(self):
        s = self.settings
        if s.do_train:
            say_long_warmup(s, s.num_train_steps)
            begin_training(self.trainer, s.init_checkpoint, s.init_from_group0)
            self.trainer.train(self.dataset_fn(self.train_files, True),
                               on_checkpoint=self.evaluate if s.do_eval else None,
                               on_started=lambda: record_model_files(s.output_dir, self.config))
        elif s.do_eval:
            evaluate_each(self.model, s.output_dir, self.evaluate)

    def evaluate(self, step: int, _path=None) -> dict:
        """Masked-LM and sentence-order loss and accuracy on the eval records; model.ckpt-best (original names)
        and model.ckpt-best.json kept by masked-LM accuracy."""
        s = self.settings
        results = self.trainer.evaluate(self.dataset_fn(self.eval_files, False), s.max_eval_steps, s.eval_batch_size)
        results["loss"] = results["masked_lm_loss"] + results["sentence_order_loss"]
        results["global_step"] = step
        append_eval_results(os.path.join(s.output_dir, "eval_results.txt"), results)
        self.trainer.summaries.write("eval", results, step)
        print("eval " + " ".join(f"{k} {results[k]:.4f}" for k in sorted(results) if k != "global_step"))
        if results["masked_lm_accuracy"] > self.best.get("masked_lm_accuracy", -math.inf):
            self.best.update(results)
            save_original_checkpoint(self.model, os.path.join(s.output_dir, BEST_CHECKPOINT), global_step=step)
            write_text(self.best_file, json.dumps(self.best, indent=2, sort_keys=True) + "\n")
        return results
