"""Where one encoder train step spends its time: TensorFlow's own op trace, grouped by kernel and by kind.

The encoder train step of benchmarks/throughput.py (forward + backward + AdamW), ours and keras-hub's `AlbertBackbone`
(with --keras_hub; benchmarks/requirements.txt) built from the same config, is traced with `tf.profiler` for a few
steps after warm-up. Ops run one at a time (`--inter_op 1`, the default), so the op times add up to the step and each
share is exact; with 2+ inter-op threads ops overlap and a share is only indicative. Kinds:

- GEMM: the matrix products oneDNN runs (MatMul, BatchMatMul and their fused forms): what the hardware's matrix
  units (AMX, tensor cores) speed up;
- everything else is memory-bound: elementwise (GELU's pieces, residual sums, LayerNorm arithmetic, dropout),
  casts (mixed precision), reductions (LayerNorm moments, bias gradients, the shared weights' gradient sums),
  layout (transposes around attention), optimizer updates.

The last column projects the step if the GEMMs ran `--gemm_speedup` times faster (e.g. 3.1: the bf16 2048^3 ceiling
of an AMX Xeon over this AMD EPYC's) and the rest did not: the share that is then not GEMM is what a faster
implementation must cut.

    python benchmarks/profile_step.py                                  # base, B=8, T=128, bf16
    python benchmarks/profile_step.py --precision fp32 --seq_length 512 --keras_hub
"""

import argparse
import collections
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GEMM = re.compile(r"^_?(Mkl|Fused|Native)*(MatMul|BatchMatMul|Einsum|Conv2D)")  # _MklMatMul, _MklFusedMatMul, ...
KINDS = [  # (kind, op types) besides GEMM; any other op type counts as elementwise
    ("cast", {"Cast"}),
    ("reduction", {"Sum", "Mean", "AddN", "BiasAddGrad", "Max", "Prod", "UnsortedSegmentSum", "L2Loss"}),
    ("layout", {"Transpose", "_MklTranspose", "Reshape", "Tile", "ConcatV2", "Pack", "Slice", "StridedSlice",
                "StridedSliceGrad", "GatherV2", "Identity", "Squeeze", "ExpandDims", "BroadcastTo"}),
    ("optimizer", {"AssignVariableOp", "AssignSubVariableOp", "AssignAddVariableOp", "AssignAdd", "Assign",
                   "ReadVariableOp", "ResourceApplyAdam", "ResourceApplyAdamWithAmsgrad"}),
    ("softmax", {"Softmax", "_MklSoftmax", "SoftmaxGrad"}),
]
OP_EVENT = re.compile(r"^[^\s:]+:(?P<type>[A-Za-z_][A-Za-z0-9_]*)$")  # "<node name>:<op type>"


def kind_of(op_type: str) -> str:
    if GEMM.match(op_type):
        return "GEMM"
    for kind, types in KINDS:
        if op_type in types:
            return kind
    return "elementwise"


def op_times(trace_dir: str) -> collections.Counter:
    """{op type: total seconds} over every TensorFlow op event of the host trace written to `trace_dir`."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    totals = collections.Counter()
    for path in glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True):
        space = xplane_pb2.XSpace()
        with open(path, "rb") as f:
            space.ParseFromString(f.read())
        for plane in space.planes:
            names = {key: meta.name for key, meta in plane.event_metadata.items()}
            for line in plane.lines:
                for event in line.events:
                    match = OP_EVENT.match(names.get(event.metadata_id, ""))
                    if match:
                        totals[match["type"]] += event.duration_ps * 1e-12
    return totals


def profile(call, steps: int) -> tuple:
    """(wall seconds per step, {op type: seconds per step}) of `call`, traced for `steps` calls after warm-up."""
    import tensorflow as tf

    from throughput import timed

    wall = timed([call], 2)[0]  # after one untimed call (tracing)
    with tempfile.TemporaryDirectory() as trace_dir:
        tf.profiler.experimental.start(trace_dir)
        for _ in range(steps):
            call()
        tf.profiler.experimental.stop()
        totals = op_times(trace_dir)
    return wall, {op: seconds / steps for op, seconds in totals.items()}


def report(name: str, wall: float, per_op: dict, top: int, speedup: float, tokens: int) -> None:
    ops_total = sum(per_op.values())
    by_kind = collections.Counter()
    for op, seconds in per_op.items():
        by_kind[kind_of(op)] += seconds
    gemm = by_kind["GEMM"]
    print(f"\n{name}: {wall * 1e3:,.0f} ms a step ({tokens / wall:,.0f} tokens/s untraced); traced ops "
          f"{ops_total * 1e3:,.0f} ms a step")
    print(f"  {'kind':12s} {'ms/step':>9s} {'share':>6s}")
    for kind, seconds in by_kind.most_common():
        print(f"  {kind:12s} {seconds * 1e3:9.1f} {100 * seconds / ops_total:5.1f}%")
    rest = ops_total - gemm
    projected = gemm / speedup + rest
    print(f"  GEMMs {speedup:g}x faster, the rest as is: {projected * 1e3:,.0f} ms a step, "
          f"{100 * rest / projected:.0f} % of it not GEMM")
    print(f"  {'op type':26s} {'ms/step':>9s} {'share':>6s}  kind")
    for op, seconds in sorted(per_op.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {op:26s} {seconds * 1e3:9.1f} {100 * seconds / ops_total:5.1f}%  {kind_of(op)}")


def main(argv=None):
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="bf16")
    parser.add_argument("--keras_hub", action="store_true", help="profile keras-hub's AlbertBackbone too")
    parser.add_argument("--inter_op", type=int, default=1, help="inter-op threads (1: ops one at a time, exact shares)")
    parser.add_argument("--steps", type=int, default=3, help="traced steps")
    parser.add_argument("--top", type=int, default=20, help="op types listed")
    parser.add_argument("--gemm_speedup", type=float, default=3.1, help="for the projection (see above)")
    args = parser.parse_args(argv)

    import tensorflow as tf

    from albert import AlbertConfig
    from throughput import cpu_evidence, encoder_steps

    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op)
    print(cpu_evidence())
    print(f"preset {args.preset}, B={args.batch_size}, T={args.seq_length}, {args.precision}, "
          f"inter-op threads {args.inter_op}")
    impls = ("ours", "keras_hub") if args.keras_hub else ("ours",)
    steps = encoder_steps(AlbertConfig.preset(args.preset), args.precision, args.batch_size, args.seq_length, impls)
    for name, (train, _) in steps.items():
        wall, per_op = profile(train, args.steps)
        report(f"{name} encoder train step", wall, per_op, args.top, args.gemm_speedup,
               args.batch_size * args.seq_length)


if __name__ == "__main__":
    main()
