"""ALBERT's optimizers and learning-rate schedule, with the original's exact semantics (spec §8).

- AdamW and LAMB share: m and v without bias correction, epsilon 1e-6, weight decay 0.01 ADDED TO THE UPDATE
  (not to the loss, not decoupled from the trust ratio), no decay for variables whose original name contains
  `LayerNorm`, `layer_norm` or `bias`. LAMB then scales each variable's step by ||w|| / ||update|| (1 when either
  norm is 0), with the same exclusions.
- The schedule: linear warmup over `num_warmup_steps` from `start_warmup_step`, then polynomial decay to 0 at
  `num_train_steps`, computed from the raw step as the original does.
- Gradients are all-reduced across replicas, made dense (an embedding's `IndexedSlices`) and clipped to global
  norm `clip_norm` in that order, then applied; `create_optimizer` sets clip_norm 1.0, the clipping the
  original's create_optimizer did (the optimizer class alone, as the original's, does not clip). The project's
  training loop (albert/train/loop.py) does the first three itself and sets `gradients_reduced_and_clipped`; in
  `model.fit` the optimizer does them, so `compile(optimizer=create_optimizer(...))` trains as the loop does, on
  any strategy.
"""

import re

import keras
import tensorflow as tf
from keras import ops

from albert.ground.errors import AlbertError
from albert.weights.original import original_variable_map

EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, learning_rate: float, num_train_steps: int, num_warmup_steps: int = 0,
                 poly_power: float = 1.0, start_warmup_step: int = 0):
        self.learning_rate = float(learning_rate)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.poly_power = float(poly_power)
        self.start_warmup_step = int(start_warmup_step)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        progress = ops.minimum(step, float(self.num_train_steps)) / float(max(self.num_train_steps, 1))
        decayed = self.learning_rate * ops.power(1.0 - progress, self.poly_power)
        if not self.num_warmup_steps:
            return decayed
        # The original let steps before start_warmup_step give a negative rate; they give 0 here.
        warmup_step = ops.maximum(step - float(self.start_warmup_step), 0.0)
        warmup = self.learning_rate * warmup_step / float(self.num_warmup_steps)
        return ops.where(warmup_step < float(self.num_warmup_steps), warmup, decayed)

    def get_config(self):
        return dict(learning_rate=self.learning_rate, num_train_steps=self.num_train_steps,
                    num_warmup_steps=self.num_warmup_steps, poly_power=self.poly_power,
                    start_warmup_step=self.start_warmup_step)


class AlbertOptimizer(keras.optimizers.Optimizer):
    """AdamW (`layer_adaptation=False`) or LAMB (`layer_adaptation=True`) as in the original release.

    `variable_names` maps `id(variable)` to the name the exclusion patterns are matched against (the original TF1
    name, from `albert.original_variable_map`); variables it lacks are matched by their Keras path.
    """

    def __init__(self, learning_rate, layer_adaptation: bool, variable_names: dict | None = None,
                 weight_decay_rate: float = 0.01, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-6, exclude_from_weight_decay=EXCLUDE_FROM_WEIGHT_DECAY,
                 exclude_from_layer_adaptation=None, clip_norm: float | None = None, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name or ("lamb" if layer_adaptation else "adamw"),
                         **kwargs)
        self.clip_norm = clip_norm
        self.gradients_reduced_and_clipped = False  # set by albert.train.loop.Trainer, which does both itself
        self.layer_adaptation = layer_adaptation
        self.variable_names = dict(variable_names or {})
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay = tuple(exclude_from_weight_decay or ())
        self.exclude_from_layer_adaptation = tuple(
            exclude_from_layer_adaptation if exclude_from_layer_adaptation is not None
            else self.exclude_from_weight_decay)

    def _name_of(self, variable) -> str:
        return self.variable_names.get(id(variable), getattr(variable, "path", variable.name))

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = [self.add_variable_from_reference(v, "adam_m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, "adam_v") for v in var_list]
        names = [self._name_of(v) for v in var_list]
        self._decays = [bool(self.weight_decay_rate) and not any(re.search(p, n) for p in
                                                                  self.exclude_from_weight_decay) for n in names]
        self._adapts = [self.layer_adaptation and not any(re.search(p, n) for p in
                                                          self.exclude_from_layer_adaptation) for n in names]

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._m[index], self._v[index]
        gradient = ops.cast(gradient, variable.dtype)
        lr = ops.cast(learning_rate, variable.dtype)
        m_next = self.beta_1 * m + (1.0 - self.beta_1) * gradient
        v_next = self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(m, m_next)
        self.assign(v, v_next)
        update = m_next / (ops.sqrt(v_next) + self.epsilon)
        if self._decays[index]:
            update = update + self.weight_decay_rate * variable
        if self._adapts[index]:
            w_norm = ops.sqrt(ops.sum(ops.square(variable)))
            u_norm = ops.sqrt(ops.sum(ops.square(update)))
            ratio = ops.where((w_norm > 0) & (u_norm > 0), w_norm / ops.maximum(u_norm, 1e-30), 1.0)
            update = ratio * update
        self.assign_sub(variable, lr * update)

    # A private Keras method, overridden because no public hook runs between Keras's all-reduce and the update:
    # Keras 3's own clipping (`global_clipnorm`) runs on each replica's gradients BEFORE the all-reduce in the
    # TensorFlow backend, which is not the original's clipping of the global batch's gradient.
    def _all_reduce_sum_gradients(self, grads_and_vars):
        """Keras calls this in the replica context just before the update: all-reduce (Keras's), then dense, then
        the global-norm clip, as the training loop does -- unless the loop has done all three already."""
        grads_and_vars = list(grads_and_vars)
        if self.gradients_reduced_and_clipped:
            return grads_and_vars
        grads_and_vars = super()._all_reduce_sum_gradients(grads_and_vars)
        present = [i for i, (g, _) in enumerate(grads_and_vars) if g is not None]
        grads = [tf.convert_to_tensor(grads_and_vars[i][0]) for i in present]
        if self.clip_norm and grads:
            grads, _ = tf.clip_by_global_norm(grads, self.clip_norm)
        out = list(grads_and_vars)
        for i, g in zip(present, grads):
            out[i] = (g, grads_and_vars[i][1])
        return out

    def get_config(self):
        config = super().get_config()
        config.update(layer_adaptation=self.layer_adaptation, weight_decay_rate=self.weight_decay_rate,
                      beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon, clip_norm=self.clip_norm)
        return config


def clip_norm_of(optimizer) -> float | None:
    """The global norm gradients are clipped to: the optimizer's one setting (AlbertOptimizer's `clip_norm`, a Keras
    optimizer's `global_clipnorm`); None: no clipping."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    return getattr(inner, "clip_norm", None) or getattr(inner, "global_clipnorm", None)


def create_optimizer(learning_rate: float, num_train_steps: int, num_warmup_steps: int, optimizer: str = "adamw",
                     poly_power: float = 1.0, start_warmup_step: int = 0, model=None) -> AlbertOptimizer:
    """The optimizer of every runner: `adamw` or `lamb` with the warmup + polynomial-decay schedule. With `model`,
    the exclusions are matched on the original variable names, exactly as the original matched them."""
    if optimizer not in ("adamw", "lamb"):
        raise AlbertError(f"--optimizer {optimizer!r} is unknown; use adamw or lamb")
    names = {}
    if model is not None:
        names = {id(variable): name for name, variable in original_variable_map(model).items()}
    schedule = WarmupPolynomialDecay(learning_rate, num_train_steps, num_warmup_steps, poly_power, start_warmup_step)
    return AlbertOptimizer(schedule, layer_adaptation=optimizer == "lamb", variable_names=names, clip_norm=1.0)
