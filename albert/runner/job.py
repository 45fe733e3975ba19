"""The fine-tuning job's skeleton, which each task's job fills in (albert.tasks.<task>.job).

In order: train, evaluating every checkpoint when asked (`--do_eval`), or without training evaluate every
checkpoint the run already has; then, from the checkpoint to predict with (model.ckpt-best, else the latest, else
`--init_checkpoint`), predict (`--do_predict`) and export (`--export_dir`, written whole or not at all). A task's job
makes its `model` and `trainer` and gives the steps that differ: `training_batches`, `evaluate`, `predict`,
`export` and `record_files`.
"""

from albert.ground.outputs import writing
from albert.runner.settings import say_long_warmup
from albert.runner.outputs import begin_training
from albert.weights.loader import init_from_checkpoint
from albert.weights.run_checkpoints import evaluate_each, prediction_checkpoint


class FineTuningJob:
    """Train / evaluate / predict / export once, into the settings' output_dir."""

    settings = None  # the runner's settings (albert.runner.settings.FineTuningExport)
    output_dir = None  # where this run's checkpoints are (--output_dir; a seed's own folder under it with --seeds)
    model = None  # the task model, made under the job's distribution strategy
    trainer = None  # albert.train.setup.fine_tuning_trainer's

    def run(self):
        s = self.settings
        if s.do_train:
            self.train()
        elif s.do_eval:
            evaluate_each(self.model, self.output_dir, self.evaluate)
        if s.do_predict or s.export_dir:
            init_from_checkpoint(self.model, prediction_checkpoint(self.output_dir, s.init_checkpoint))
        if s.do_predict:
            self.predict()
        if s.export_dir:
            with writing(s.export_dir, s.export_command, "--export_dir") as out:
                self.export(out)

    def train(self):
        """--train_step steps from --init_checkpoint (or where the run stopped), every checkpoint evaluated with
        --do_eval; the run directory made a model directory (`record_files`) once training starts."""
        s = self.settings
        say_long_warmup(s, s.train_step)
        resumed = begin_training(self.trainer, s.init_checkpoint)
        self.trainer.train(self.training_batches(resumed), on_checkpoint=self.evaluate if s.do_eval else None,
                           on_started=self.record_files)

    def training_batches(self, resumed: int | None):
        """A function of (input context, batch size) giving the training batches; `resumed`: the step a run
        resumes from (None for a new run), whose feature files must be the ones it started with."""
        raise NotImplementedError

    def evaluate(self, step: int, _path=None):
        """The dev metrics of the model as it is, at `step`: appended to eval_results.txt, model.ckpt-best kept."""
        raise NotImplementedError

    def predict(self):
        """The test set's predictions, written into output_dir."""
        raise NotImplementedError

    def export(self, out: str):
        """The serving model and its files, written in `out` (moved to --export_dir when complete)."""
        raise NotImplementedError

    def record_files(self):
        """The run directory as a model directory: its config, SentencePiece model and run record."""
        raise NotImplementedError
