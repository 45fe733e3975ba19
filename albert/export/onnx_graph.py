"""Rewrites of the graph tf2onnx writes for the task models, into the operators ONNX Runtime runs fastest; each
gives the same float32 function up to rounding (tests/test_onnx_export.py compares with Keras at 1e-5):

- `fuse_layer_norms`: tf.nn.moments + tf.nn.batch_normalization, as tf2onnx spells them (GlobalAveragePool, Sub,
  Mul, GlobalAveragePool, Add epsilon, Sqrt, Reciprocal, Mul gamma, Mul, Neg, Mul, Add beta, Add), become one
  `LayerNormalization` (opset 17) over the last axis;
- `direct_matmuls`: Keras Dense's Tensordot (Reshape to 2-D, MatMul, Reshape back, and the Shape / Gather /
  Concat / Cast that compute the shape) becomes one MatMul of the 3-D input by the 2-D weight (ONNX MatMul
  broadcasts).

Both match exactly what they know and leave every other node alone; `sweep` then drops what nothing reads.
"""

import numpy as np

# onnx is the optional `onnx` extra: each function imports it, so that importing this module needs only the core.


class Graph:
    """Lookups over an ONNX GraphProto: who writes and who reads each value, the constant initializers."""

    def __init__(self, graph):
        self.graph = graph
        self.constants = {t.name: t for t in graph.initializer}
        self.index()

    def index(self):
        self.writer = {out: node for node in self.graph.node for out in node.output}
        self.readers = {}
        for node in self.graph.node:
            for name in dict.fromkeys(node.input):  # a node reading a value twice reads it once here
                self.readers.setdefault(name, []).append(node)

    def constant(self, name):
        from onnx import numpy_helper

        return numpy_helper.to_array(self.constants[name]) if name in self.constants else None

    def only_reader(self, name, op_type):
        """The one node reading `name`, if it is an `op_type` (and `name` is no graph output)."""
        readers = self.readers.get(name, [])
        outputs = {v.name for v in self.graph.output}
        return readers[0] if len(readers) == 1 and readers[0].op_type == op_type and name not in outputs else None

    def reader(self, name, op_type, other=None):
        """A node of `op_type` reading `name` (and `other` as its other input, when given)."""
        for node in self.readers.get(name, []):
            if node.op_type == op_type and (other is None or set(node.input) == {name, other}):
                return node
        return None

    def add_constant(self, name, value):
        from onnx import numpy_helper

        if name not in self.constants:
            tensor = numpy_helper.from_array(np.asarray(value), name)
            self.graph.initializer.append(tensor)
            self.constants[name] = tensor
        return name


def other_input(node, name):
    """The input of binary `node` that is not `name` (None unless `name` is one of exactly two inputs)."""
    if len(node.input) != 2 or name not in node.input:
        return None
    return node.input[1] if node.input[0] == name else node.input[0]


def ranks(model) -> dict:
    """{value name: rank} where ONNX shape inference knows it."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model).graph
    values = list(inferred.value_info) + list(inferred.input) + list(inferred.output)
    return {v.name: len(v.type.tensor_type.shape.dim) for v in values if v.type.tensor_type.HasField("shape")}


def layer_norm_match(g: Graph, mean, rank: dict):
    """(nodes to remove, x, gamma, beta or None, epsilon, output) of the LayerNorm whose mean is `mean`, or None."""
    x = mean.input[0]
    if rank.get(x) != 3:  # GlobalAveragePool averages every axis after the second: the last one only at rank 3
        return None
    diff = g.reader(mean.output[0], "Sub")
    neg = g.reader(mean.output[0], "Neg")
    if diff is None or neg is None or list(diff.input) != [x, mean.output[0]]:
        return None
    if len(g.readers[mean.output[0]]) != 2:  # the mean read elsewhere too: it stays
        return None
    square = g.only_reader(diff.output[0], "Mul")
    if square is None or list(square.input) != [diff.output[0]] * 2:
        return None
    chain, value = [], square.output[0]
    for op_type in ("GlobalAveragePool", "Add", "Sqrt", "Reciprocal", "Mul"):
        node = g.only_reader(value, op_type)
        if node is None:
            return None
        chain.append(node)
        value = node.output[0]
    variance, plus, root, inverse, scaled = chain
    epsilon = g.constant(other_input(plus, variance.output[0]))
    gamma = g.constant(other_input(scaled, inverse.output[0]))
    if epsilon is None or gamma is None or epsilon.size != 1 or list(root.input) != [plus.output[0]]:
        return None
    times_x = g.reader(scaled.output[0], "Mul", x)
    shift = g.reader(scaled.output[0], "Mul", neg.output[0])
    if times_x is None or shift is None or len(g.readers[scaled.output[0]]) != 2:
        return None
    nodes, beta, last = [mean, diff, neg, square, variance, plus, root, inverse, scaled, times_x, shift], None, shift
    with_beta = g.only_reader(shift.output[0], "Add")
    if with_beta is not None and g.constant(other_input(with_beta, shift.output[0])) is not None:
        beta, last = g.constant(other_input(with_beta, shift.output[0])), with_beta
        nodes.append(with_beta)
    final = g.only_reader(last.output[0], "Add")
    if final is None or other_input(final, last.output[0]) != times_x.output[0]:
        return None
    if len(g.readers[neg.output[0]]) != 1 or len(g.readers[times_x.output[0]]) != 1:
        return None
    outputs = {v.name for v in g.graph.output}
    if any(out in outputs for node in nodes for out in node.output):  # an intermediate value is wanted as it is
        return None
    return nodes + [final], x, gamma, beta, float(epsilon.reshape(())), final.output[0]


def each_match(model, op_type: str, match, rank: dict):
    """(Graph, node, match) for every `op_type` node where `match(graph, node, rank)` finds its pattern; the
    lookups are redone after each, as the caller rewrites the graph in between (`rank`: ranks(model), computed
    once: the rewrites keep every value they leave)."""
    g = Graph(model.graph)
    for node in [n for n in model.graph.node if n.op_type == op_type]:
        found = match(g, node, rank)
        if found is not None:
            yield g, node, found
            g.index()


def fuse_layer_norms(model, rank: dict) -> int:
    """Each matched LayerNorm -> LayerNormalization(axis=-1); returns how many."""
    import onnx

    fused = 0
    for g, _, (nodes, x, gamma, beta, epsilon, output) in each_match(model, "GlobalAveragePool", layer_norm_match,
                                                                      rank):
        width = gamma.size
        if beta is None:
            beta = np.zeros(width, gamma.dtype)
        if beta.size != width:
            continue
        name = f"{output.split(':')[0]}/fused"
        scale = g.add_constant(f"{name}/gamma", gamma.reshape(width))
        bias = g.add_constant(f"{name}/beta", beta.reshape(width))
        place = list(model.graph.node).index(nodes[-1])
        for node in nodes:
            model.graph.node.remove(node)
        model.graph.node.insert(place - len(nodes) + 1, onnx.helper.make_node(
            "LayerNormalization", [x, scale, bias], [output], name=name, axis=-1, epsilon=epsilon))
        fused += 1
    return fused


def tensordot_match(g: Graph, matmul, rank: dict):
    """(x, the Reshape back) of a MatMul that Tensordot wrapped: Reshape(x, [-1, K]) -> MatMul(W: [K, N]) ->
    Reshape(to x's leading axes + [N], computed from Shape(x)), or None."""
    weight = g.constant(matmul.input[1])
    flatten = g.writer.get(matmul.input[0])
    if weight is None or weight.ndim != 2 or flatten is None or flatten.op_type != "Reshape":
        return None
    x, target = flatten.input[0], g.constant(flatten.input[1])
    if target is None or target.tolist() != [-1, weight.shape[0]] or rank.get(x, 0) < 2:
        return None
    restore = g.only_reader(matmul.output[0], "Reshape")
    if restore is None or not computes_leading_axes(g, restore.input[1], x, rank[x], weight.shape[1]):
        return None
    return x, restore


def computes_leading_axes(g: Graph, name, x, rank: int, width: int) -> bool:
    """Whether `name` is [x's first rank-1 axes..., width] as Tensordot computes it: (Cast) Concat(Gather((Cast)
    Shape(x), [0 .. rank-2]), [width])."""
    node = g.writer.get(name)
    if node is not None and node.op_type == "Cast":
        node = g.writer.get(node.input[0])
    if node is None or node.op_type != "Concat" or len(node.input) != 2:
        return False
    gather, tail = g.writer.get(node.input[0]), g.constant(node.input[1])
    if gather is None or gather.op_type != "Gather" or tail is None or tail.tolist() != [width]:
        return False
    indices = g.constant(gather.input[1])
    if indices is None or indices.tolist() != list(range(rank - 1)):
        return False
    shape = g.writer.get(gather.input[0])
    if shape is not None and shape.op_type == "Cast":
        shape = g.writer.get(shape.input[0])
    return shape is not None and shape.op_type == "Shape" and list(shape.input) == [x]


def direct_matmuls(model, rank: dict) -> int:
    """Each matched Tensordot -> one MatMul of the N-D input; returns how many."""
    done = 0
    for _, matmul, (x, restore) in each_match(model, "MatMul", tensordot_match, rank):
        matmul.input[0] = x
        matmul.output[0] = restore.output[0]
        model.graph.node.remove(restore)
        done += 1
    return done


def sweep(model) -> int:
    """Drop nodes whose outputs nothing reads (and initializers no node reads); returns the nodes dropped."""
    graph, dropped = model.graph, 0
    outputs = {v.name for v in graph.output}
    while True:
        read = {name for node in graph.node for name in node.input} | outputs
        dead = [node for node in graph.node if not any(out in read for out in node.output)]
        if not dead:
            break
        for node in dead:
            graph.node.remove(node)
        dropped += len(dead)
    read = {name for node in graph.node for name in node.input} | outputs
    for tensor in [t for t in graph.initializer if t.name not in read]:
        graph.initializer.remove(tensor)
    return dropped


def optimize(model) -> dict:
    """All the rewrites above, in place; {rewrite: count}."""
    import onnx

    rank = ranks(model)
    counts = {"layer_norms": fuse_layer_norms(model, rank), "matmuls": direct_matmuls(model, rank)}
    counts["dropped"] = sweep(model)
    onnx.checker.check_model(model)
    return counts
