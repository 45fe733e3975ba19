"""run_squad.py's settings (`SquadRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, finite, probability, setting
from albert.runner.settings import FineTuningExport, runner_settings
from albert.tasks.squad import windows as squad_windows


@dataclasses.dataclass(frozen=True)
@runner_settings
class SquadRun(FineTuningExport):
    """run_squad.py's settings."""

    COMMAND: ClassVar[str] = "run_squad.py"

    @property
    def model_class(self) -> str:
        """The task model its checkpoints hold."""
        return "AlbertSquadV2" if self.version_2_with_negative else "AlbertSquadV1"

    train_file: str | None = setting(None, "SQuAD JSON for training (train-v1.1.json, train-v2.0.json).",
                                     group="inputs")
    predict_file: str | None = setting(None, "SQuAD JSON to predict (and score, when it has answers).", group="inputs")
    train_feature_file: str | None = setting(None, "Train feature TFRecord (default output_dir/train.tf_record); "
                                             "built once, reused while its settings and questions match.",
                                             group="inputs")
    predict_feature_file: str | None = setting(None, "Predict feature TFRecord (default "
                                               "output_dir/predict.tf_record).", group="inputs")
    predict_feature_left_file: str | None = setting(None, "The decoder's metadata of the predict features, JSON "
                                                    "(default: the predict feature file + .json).", group="inputs")
    doc_stride: int | None = setting(None, "Span stride (default: --max_seq_length / 3). The pieces between the "
                                     "starts of consecutive document spans of a long paragraph: 128 at the default "
                                     "length 384.", check=at_least(1), group="inputs",
                                     derived=lambda s: squad_windows.default_doc_stride(s.max_seq_length))
    max_query_length: int | None = setting(None, "Question pieces (default 64, at most --max_seq_length / 2). A "
                                           "question's first pieces are kept: 64 from --max_seq_length 128 up.",
                                           check=at_least(1), group="inputs",
                                           derived=lambda s: squad_windows.default_max_query_length(s.max_seq_length))
    num_train_epochs: float = setting(3.0, "Epochs over the training questions.", check=finite, group="training")
    warmup_proportion: float = setting(0.1, "Fraction of the steps spent warming up.", check=probability,
                                       group="training")
    n_best_size: int = setting(20, "Candidates kept per question in nbest_predictions.json.", check=at_least(1),
                               group="evaluation")
    max_answer_length: int = setting(30, "Longest answer, in pieces.", check=at_least(1), group="evaluation")
    version_2_with_negative: bool = setting(False, "SQuAD 2.0: questions may have no answer.", group="inputs")
    start_n_top: int = setting(5, "2.0: beam size over start positions.", check=at_least(1), group="evaluation")
    end_n_top: int = setting(5, "2.0: beam size over end positions per start.", check=at_least(1), group="evaluation")
    dropout_prob: float = setting(0.1, "2.0: dropout in the answer-class head.", check=probability, group="training")
    null_score_diff_threshold: float | None = setting(None, "2.0: predict no answer where the no-answer score "
                                                      "exceeds this (default: the best-F1 threshold on the predict "
                                                      "file's own answers).", group="evaluation")

    def __post_init__(self):
        super().__post_init__()
        self.features.check()

    @property
    def features(self) -> squad_windows.Windows:
        return squad_windows.Windows(self.max_seq_length, self.doc_stride, self.max_query_length, self.do_lower_case)
