"""Activation recomputation: the encoder's blocks keep only their inputs for the backward pass and run their forward
pass again there.

ALBERT shares parameters across layers, not activations: every one of the L x inner_group_num block applications
keeps its own q, k, v, attention probabilities and FFN activations (see `albert.model.sizing.activation_bytes`). With
recomputation a training step keeps one [B,T,H] float32 tensor per application, and the activations of one
application at a time while the backward pass goes through it: about 1/3 more compute for several times less
activation memory.

The whole sequence of applications is one custom gradient, so that the gradients of the shared weights are summed
as the backward pass goes (one running sum), not held once per application until the end (TensorFlow's tape sums
a variable's gradients only when it has them all: 12 copies of a base block's 28 MB of gradients).

Exactly the same numbers as without it, dropout included: each application's dropout seeds are read before its
forward pass; the recomputation sets them back, draws the same masks, and at the end the seeds are restored to
where the forward pass left them (so the next step draws what it would have drawn). Each recomputation waits for
the gradient arriving at its output, so that the runtime cannot run it early (and hold the activations again).
"""

import tensorflow as tf
from tensorflow.python.eager import record


def seed_generators(layers) -> list:
    """The random seed generators of `layers` and of every layer inside them, in a fixed order."""
    found = []
    for layer in layers:
        for inner in layer._flatten_layers(include_self=True):
            found.extend(getattr(inner, "_seed_generators", []))
    return found


def after(x, fn):
    """fn(x), every op of it (weight reads and their mixed-precision casts included) run only once x exists: the
    runtime would otherwise cast every application's weights at the start, all held at once (12 bf16 copies of a
    base block: 160 MiB; of an xxlarge block, 4.5 GiB)."""
    with tf.control_dependencies([x]):
        return fn(x)


def recomputed_sequence(fns: list, x, generators: list) -> list:
    """[x1, ..., xn] with x_i = fns[i](x_{i-1}), x0 = x, keeping only x0..x_{n-1} for the backward pass, which
    recomputes each application's activations. `fns` may read trainable variables (shared between them or not;
    their gradients are summed along the way) and draw random numbers only from `generators`."""
    unique = list({id(g): g for g in generators}.values())

    @tf.custom_gradient
    def forward(x):
        inputs, outputs, seeds = [], [], []
        with record.stop_recording():  # the outer tape keeps nothing of the forward pass (no public API for it)
            for fn in fns:
                seeds.append([tf.identity(g.state.value) for g in unique])
                inputs.append(x)
                x = after(x, fn)
                outputs.append(x)

        def backward(*dys, variables=None):
            variables = list(variables or [])
            end_states = [tf.identity(g.state.value) for g in unique]
            totals = [None] * len(variables)
            dx = None
            for i in reversed(range(len(fns))):
                if dys[i] is not None:
                    dx = dys[i] if dx is None else dx + dys[i]
                if dx is None:
                    continue
                # after the gradient at its output and the previous application's weight gradients are summed:
                # the runtime may not run ahead along the dx chain, holding every application's activations
                with tf.control_dependencies([dx] + [t for t in totals if t is not None]):
                    x_again = tf.identity(inputs[i])
                    for g, seed in zip(unique, seeds[i]):
                        g.state.assign(seed)
                with tf.GradientTape() as tape:
                    tape.watch(x_again)
                    y_again = after(x_again, fns[i])
                grads = tape.gradient(y_again, [x_again] + variables, output_gradients=dx)
                dx = grads[0]
                for j, g in enumerate(grads[1:]):
                    if g is not None:
                        g = tf.convert_to_tensor(g)
                        totals[j] = g if totals[j] is None else totals[j] + g
            dx = tf.zeros_like(x) if dx is None else dx
            with tf.control_dependencies([dx]):
                for g, state in zip(unique, end_states):
                    g.state.assign(state)
                dx = tf.identity(dx)
            return dx, totals

        return outputs, backward

    return forward(x)
