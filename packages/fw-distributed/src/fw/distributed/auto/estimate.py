"""`estimate`: step time and memory of a training step under a parallel strategy.

The model is traced once per micro-batch size into fw's IR (forward with
fw.core.ir's builder, backward with fw.autograd's `append_backward`, the same
VJP rules eager mode runs), every operation is priced by `op_cost` and the
device's roofline, and the strategy's structure is laid on top:

- tensor parallel (``mp``): Megatron's pairs are found in the forward program —
  a `linear` whose input is replicated and whose output reaches another `linear`
  through shape-preserving ops only (activations, reshapes, attention) is a column
  split, that later `linear` a row split; the ops between them run on 1/mp of the
  data. Each pair costs an all-reduce of the row output in forward and of the
  column input's gradient in backward (Megatron's ``g`` and ``f``).
- pipeline (``pp``): the forward ops are cut into ``pp`` contiguous stages of
  balanced cost (backward cost follows its forward op); the activations that cross
  a cut travel by send/recv once per micro-batch each way; 1F1B takes
  ``(m + p - 1)`` slots of the slowest stage, ``(p - 1)`` of them the bubble
  (Narayanan et al., SC21: bubble fraction ``(p-1)/(m+p-1)``).
- data parallel (``dp``): gradients are all-reduced in fw's DataParallel buckets
  (1 MB first, then 25 MB) as backward produces them; a bucket's all-reduce may
  overlap the rest of backward by the cluster's ``comm_overlap`` fraction (a small
  event simulation).
- ZeRO (``sharding`` ranks, ``sharding_stage`` 1-3, Rajbhandari et al. 2020):
  stage 1 all-reduces gradients then broadcasts each owner's updated parameters,
  stage 2 reduces each owner's gradients to it instead, stage 3 all-gathers the
  parameters before forward and reduce-scatters every gradient; optimizer states
  (and gradients, parameters) are divided by the degree.
- recompute: checkpoints every ~sqrt(n) ops (Chen et al. 2016) — activation memory
  falls to the checkpoints plus one segment, forward runs twice.
- AMP (``amp="float16"|"bfloat16"``): matmul/conv ops run at the device's rate for
  that dtype and move half the bytes; parameters keep an fp32 master copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fw.distributed.auto.comm import collective_time
from fw.distributed.auto.comm import collective_time as _collective_time
from fw.distributed.auto.op_cost import OpCost, cost_of

__all__ = ["ParallelConfig", "Estimate", "estimate", "trace_step"]

_PASS = {"reshape", "reshape_dyn", "unbind", "split", "transpose", "scaled_dot_product_attention",
         "gelu", "relu", "silu", "tanh", "sigmoid", "dropout", "swiglu", "add", "multiply",
         "scale", "cast", "squeeze", "unsqueeze", "flatten", "softmax", "leaky_relu", "elu",
         "subtract", "divide"}

_BUCKET_FIRST, _BUCKET = 1 << 20, 25 << 20  # fw DataParallel's defaults


@dataclass(frozen=True)
class ParallelConfig:
    """Degrees and switches of one hybrid-parallel strategy.

    Args:
        dp (int): data-parallel replicas.
        mp (int): tensor-parallel ranks (Megatron column/row splits).
        pp (int): pipeline stages.
        sharding (int): ZeRO ranks (data parallel too; fleet refuses sharding with
            dp > 1, so one of the two is 1).
        sharding_stage (int): 1, 2 or 3.
        micro_batches (int): micro-batches per step (pipeline's accumulate_steps,
            or gradient accumulation without a pipeline).
        recompute (bool): activation recomputation.
        amp (str, optional): "float16" or "bfloat16" for mixed precision.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import ParallelConfig
        >>> cfg = ParallelConfig(dp=2, pp=2, micro_batches=4)
        >>> cfg.world, cfg.label()
        (4, 'dp2-pp2-m4')
    """

    dp: int = 1
    mp: int = 1
    pp: int = 1
    sharding: int = 1
    sharding_stage: int = 1
    micro_batches: int = 1
    recompute: bool = False
    amp: str | None = None

    def __post_init__(self):
        for f in ("dp", "mp", "pp", "sharding", "micro_batches"):
            v = getattr(self, f)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise ValueError(f"ParallelConfig: {f} must be an int >= 1, got {v!r}")
        if self.sharding_stage not in (1, 2, 3):
            raise ValueError(f"ParallelConfig: sharding_stage must be 1, 2 or 3, got "
                             f"{self.sharding_stage!r}")
        if self.amp not in (None, "float16", "bfloat16"):
            raise ValueError(f"ParallelConfig: amp must be None, 'float16' or 'bfloat16', got "
                             f"{self.amp!r}")

    @property
    def world(self) -> int:
        """The ranks the configuration needs: dp x mp x pp x sharding.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import ParallelConfig
            >>> ParallelConfig(dp=2, mp=2).world
            4
        """
        return self.dp * self.mp * self.pp * self.sharding

    def label(self) -> str:
        """A short name for tables, e.g. ``dp2-mp2``.

        Returns:
            str: the label.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import ParallelConfig
            >>> ParallelConfig(dp=2, mp=2).label()
            'dp2-mp2'
        """
        parts = [f"{k}{getattr(self, k)}" for k in ("dp", "mp", "pp") if getattr(self, k) > 1]
        if self.sharding > 1:
            parts.append(f"zero{self.sharding_stage}x{self.sharding}")
        if self.micro_batches > 1:
            parts.append(f"m{self.micro_batches}")
        if self.recompute:
            parts.append("rc")
        if self.amp:
            parts.append(self.amp)
        return "-".join(parts) or "single"


@dataclass
class Estimate:
    """What `estimate` predicts for one training step (seconds, bytes per rank).

    Attributes:
        step_time: wall time of one optimizer step.
        compute: forward + backward + optimizer time on the critical path.
        communication: exposed (not overlapped) communication time.
        bubble: pipeline idle time.
        memory: peak bytes per rank; `memory_breakdown` splits it.
        ops: one row per op of the traced step: ``(phase, op, kind, flops, bytes,
            seconds)`` (seconds for one micro-batch on one rank, before TP/PP splits).
        uncovered: ``{op name: count}`` of ops priced at their fixed overhead only
            because fw has no FLOP/byte formula for them.
        comm_detail: seconds per communication item.
        optimizer: the optimizer step's part of `compute`.
        accumulate: the part of `compute` that adds micro-batches' gradients.
        flops_per_step: FLOPs one rank executes per step (before recompute).

    Args:
        (the Attributes above, and `config`: the `ParallelConfig` estimated; made by
        `estimate`.)

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Cluster, ParallelConfig, estimate
        >>> est = estimate(fw.nn.Linear(4, 2), ParallelConfig(), Cluster.a100_dgx(),
        ...                input_spec=[([8, 4], "float32")])
        >>> type(est).__name__, est.config.world
        ('Estimate', 1)
    """

    config: ParallelConfig
    step_time: float
    compute: float
    communication: float
    bubble: float
    memory: float
    memory_breakdown: dict
    ops: list
    uncovered: dict
    comm_detail: dict
    flops_per_step: float
    optimizer: float = 0.0
    notes: list = field(default_factory=list)
    accumulate: float = 0.0

    def table(self, top: int = 15) -> str:
        """The `top` most expensive ops as text.

        Args:
            top (int, optional): how many ops. Default: 15.

        Returns:
            str: the table, most expensive first.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster, ParallelConfig, estimate
            >>> est = estimate(fw.nn.Linear(4, 2), ParallelConfig(), Cluster.a100_dgx(),
            ...                input_spec=[([8, 4], "float32")])
            >>> est.table(top=2).splitlines()[0].split()
            ['phase', 'op', 'kind', 'GFLOP', 'MB', 'ms']
        """
        rows = sorted(self.ops, key=lambda r: -r[5])[:top]
        out = [f"{'phase':5} {'op':32} {'kind':7} {'GFLOP':>9} {'MB':>9} {'ms':>8}"]
        for ph, name, kind, fl, by, t in rows:
            out.append(f"{ph:5} {name:32} {kind:7} {fl / 1e9:9.4f} {by / 1e6:9.3f} "
                       f"{t * 1e3:8.3f}")
        return "\n".join(out)

    def __str__(self) -> str:
        mb = self.memory / 2 ** 20
        s = (f"Estimate[{self.config.label()}]: step {self.step_time * 1e3:.3f} ms = compute "
             f"{self.compute * 1e3:.3f} + communication {self.communication * 1e3:.3f} + "
             f"bubble {self.bubble * 1e3:.3f}; peak memory {mb:.1f} MiB/rank")
        if self.uncovered:
            s += f"; no formula for {sorted(self.uncovered)}"
        return s


# ---------------------------------------------------------------- tracing
def _types(input_spec):
    from fw.core.ir import TensorType

    out = []
    for s in input_spec:
        if isinstance(s, TensorType):
            out.append(s)
        elif hasattr(s, "shape") and hasattr(s, "dtype"):
            out.append(TensorType(list(s.shape), s.dtype))
        elif isinstance(s, (tuple, list)) and len(s) == 2:
            out.append(TensorType(list(s[0]), s[1]))
        else:
            raise TypeError(f"estimate: input_spec entries must be TensorType, InputSpec or "
                            f"(shape, dtype), got {s!r}")
    return out


@dataclass
class _Step:
    fwd: list  # [(op, OpCost|None)]
    bwd: list
    params: list  # param Values (with .type)
    program: object


def trace_step(layer_or_program, input_spec=None, loss_fn=None, backward=True) -> _Step:
    """Trace one training step of a Layer (forward, loss, backward) into IR.

    Args:
        layer_or_program: an `fw.nn.Layer`, or an `fw.core.ir.Program` whose first
            output is the loss (its backward is appended) or whose ops already are
            the whole step (``backward=False``).
        input_spec (list): for a Layer: the inputs' `TensorType`/`InputSpec`/
            ``(shape, dtype)``.
        loss_fn (callable, optional): ``loss_fn(layer, *inputs) -> loss``; default the
            mean of the layer's output.
        backward (bool): append the backward.

    Returns:
        the traced step (forward ops, backward ops, parameters).

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import trace_step
        >>> step = trace_step(fw.nn.Linear(4, 2), [([8, 4], "float32")])
        >>> len(step.params), len(step.bwd) > 0
        (2, True)
    """
    from fw.autograd import append_backward
    from fw.core.ir import Program, building

    if isinstance(layer_or_program, Program):
        prog = layer_or_program.clone()
        n_fwd = len(prog.block.ops)
        if backward:
            outs = prog.outputs() if callable(getattr(prog, "outputs", None)) else prog.outputs
            if not outs:
                raise ValueError("estimate: the program has no output to differentiate")
            with building(prog):
                append_backward(prog, outs[0])
    else:
        if input_spec is None:
            raise ValueError(f"estimate: input_spec is required to trace a "
                             f"{type(layer_or_program).__name__}")
        types = _types(input_spec)
        with building() as b:
            args = [b.add_input(t, f"in{i}") for i, t in enumerate(types)]
            if loss_fn is not None:
                loss = loss_fn(layer_or_program, *args)
            else:
                out = layer_or_program(*args)
                loss = out if out.ndim == 0 else out.mean()
            n_fwd = len(b.program.block.ops)
            if backward:
                append_backward(loss)
            b.set_outputs(loss)
        prog = b.program
    ops = list(prog.block.ops)
    priced = [(op, _price(op)) for op in ops]
    params = [a for a in prog.parameters() if not a.stop_gradient]
    return _Step(priced[:n_fwd], priced[n_fwd:], params, prog)


def _price(op):
    ins = [v.type if v is not None else None for v in op.operands]
    outs = [r.type for r in op.results]
    if op.name in ("cond", "while"):
        if op.name == "while":
            return None  # trip count unknown statically
        total = None
        for blk in op.blocks:  # a cond: the dearer branch
            c = OpCost(0, 0, "vector")
            for inner in blk.ops:
                ic = _price(inner)
                if ic is not None:
                    c = c + ic
            if total is None or c.flops + c.bytes > total.flops + total.bytes:
                total = c
        return total
    return cost_of(op.name, ins, outs, op.attrs)


# ---------------------------------------------------------------- pricing
def _kernel_time(c: OpCost, dev, amp) -> float:
    """Roofline seconds of one kernel (no overhead)."""
    if c.kind in ("view", "comm"):
        return 0.0
    dtype, nbytes = c.dtype, c.bytes
    if c.kind == "scatter":  # one slice at a time: bounded by its own bandwidth
        return nbytes / (dev.scatter_bandwidth or dev.mem_bandwidth)
    kind = c.kind if c.kind in ("matmul", "bmm", "conv") else "vector"
    if amp and kind in ("matmul", "bmm", "conv") and dtype == "float32":
        dtype, nbytes = amp, nbytes / 2
    return max(c.flops / dev.rate(kind, dtype), nbytes / dev.mem_bandwidth)


def _op_time(c: OpCost | None, dev, amp, slow) -> float:
    t = dev.op_overhead
    if c is None or c.kind in ("view", "comm"):
        return t * slow
    # an op of several kernels (attention) is the sum of their rooflines
    parts = c.parts
    if parts and getattr(dev, "fused_softmax", False):
        parts = _fuse_between_products(parts)
    work = sum(_kernel_time(p, dev, amp) for p in parts) if parts else _kernel_time(
        c, dev, amp)
    return (t + work) * slow


def _fuse_between_products(parts):
    """Attention on a device with a fused scale-mask-softmax: the vector passes
    between the two batched products become one kernel that reads and writes the
    scores once (the first of them, the scale, is exactly that read + write)."""
    bmm = [i for i, p in enumerate(parts) if p.kind == "bmm"]
    if len(bmm) < 2 or bmm[1] - bmm[0] < 2:
        return parts
    i, j = bmm[0], bmm[1]
    mid = parts[i + 1:j]
    fused = OpCost(sum(p.flops for p in mid), mid[0].bytes, "vector", mid[0].dtype)
    return tuple(parts[:i + 1]) + (fused,) + tuple(parts[j:])


def _tp_pairs(fwd):
    """Indices of the forward ops split by tensor parallelism, and the (column, row)
    linear pairs (Megatron's pattern, found by data flow)."""
    split_vals, split_ops, pairs = set(), set(), []
    users = {}
    for i, (op, _) in enumerate(fwd):
        for v in op.operands:
            if v is not None:
                users.setdefault(id(v), []).append(i)

    def reaches_linear(v, seen):
        for j in users.get(id(v), ()):
            op = fwd[j][0]
            if op.name == "linear" and op.operands[0] is v:
                return j
            if op.name in _PASS and j not in seen:
                seen.add(j)
                for r in op.results:
                    k = reaches_linear(r, seen)
                    if k is not None:
                        return k
        return None

    rows = set()
    for i, (op, _) in enumerate(fwd):
        if op.name == "linear" and i not in rows and op.operands[1].role == "param":
            j = reaches_linear(op.results[0], set())
            if j is not None and fwd[j][0].operands[1].role == "param":
                pairs.append((i, j))
                rows.add(j)
                split_ops.add(i)
                split_vals.add(id(op.results[0]))
                continue
        if i in rows:
            split_ops.add(i)
            continue
        if op.name in _PASS and any(v is not None and id(v) in split_vals for v in op.operands):
            split_ops.add(i)
            for r in op.results:
                split_vals.add(id(r))
    return split_ops, pairs


def _partition(costs, p):
    """Cut `costs` into `p` non-empty contiguous parts with the smallest largest sum
    (binary search on the bound, greedy packing: O(n log) for thousands of ops)."""
    n = len(costs)
    if p >= n:
        return [[i] for i in range(n)] + [[] for _ in range(p - n)]

    def pack(bound):
        parts, cur, s = [], [], 0.0
        for i, c in enumerate(costs):
            left_items, left_parts = n - i, p - len(parts) - 1
            if cur and (s + c > bound or left_items <= left_parts):
                parts.append(cur)
                cur, s = [], 0.0
            cur.append(i)
            s += c
        parts.append(cur)
        return parts

    lo, hi = max(costs), sum(costs)
    for _ in range(60):
        mid = (lo + hi) / 2
        if len(pack(mid)) <= p:
            hi = mid
        else:
            lo = mid
    parts = pack(hi)
    while len(parts) < p:  # split the largest part that has two ops or more
        k = max((j for j in range(len(parts)) if len(parts[j]) > 1),
                key=lambda j: sum(costs[i] for i in parts[j]))
        half = len(parts[k]) // 2
        parts[k:k + 1] = [parts[k][:half], parts[k][half:]]
    return parts


def _crossing_bytes(fwd, bounds):
    """Bytes of activations defined in one stage and used in a later one, per cut."""
    stage_of = {}
    for s, idx in enumerate(bounds):
        for i in idx:
            stage_of[i] = s
    defined = {}
    for i, (op, _) in enumerate(fwd):
        for r in op.results:
            defined[id(r)] = (stage_of.get(i, 0), r)
    per_cut = [0] * max(len(bounds) - 1, 0)
    counted = set()
    for i, (op, _) in enumerate(fwd):
        s = stage_of.get(i, 0)
        for v in op.operands:
            if v is None or id(v) not in defined:
                continue
            s0, val = defined[id(v)]
            for c in range(s0, s):
                if (id(v), c) not in counted:
                    counted.add((id(v), c))
                    per_cut[c] += max(val.type.numel(), 0) * val.type.dtype.itemsize
    return per_cut


def _activation_bytes(fwd, split, mp, recompute):
    sizes = []
    for i, (op, c) in enumerate(fwd):
        if c is not None and c.kind == "view":
            sizes.append(0)
            continue
        b = sum(max(r.type.numel(), 0) * r.type.dtype.itemsize for r in op.results)
        sizes.append(b / mp if i in split else b)
    if not recompute or len(sizes) < 4:
        return float(sum(sizes))
    seg = max(int(math.sqrt(len(sizes))), 1)
    chunks = [sizes[i:i + seg] for i in range(0, len(sizes), seg)]
    return float(sum(ch[-1] for ch in chunks) + max(sum(ch) for ch in chunks))


def _n_buckets(grad_bytes):
    """DataParallel's gradient buckets for `grad_bytes` (1 MB first, then 25 MB)."""
    if grad_bytes <= 0:
        return 0
    return 1 + math.ceil(max(grad_bytes - _BUCKET_FIRST, 0) / _BUCKET)


def _bucket_exposed(cluster, grad_bytes, bwd_time, n, stride, op="all_reduce", share=1.0):
    """Exposed seconds of DataParallel's bucketed gradient collectives after backward."""
    if n <= 1 or grad_bytes <= 0:
        return 0.0, 0.0
    sizes, left = [], grad_bytes
    first = min(_BUCKET_FIRST, left)
    sizes.append(first)
    left -= first
    while left > 0:
        sizes.append(min(_BUCKET, left))
        left -= sizes[-1]
    ov = cluster.comm_overlap
    t, done, total = 0.0, 0.0, 0.0
    for s in sizes:
        done += s
        ready = bwd_time * done / grad_bytes  # buckets fill as backward proceeds
        dur = collective_time(cluster, op, s, n, stride) * share
        total += dur
        start = max(ready, t) if ov > 0 else max(bwd_time, t)
        t = start + dur
    exposed = max(0.0, t - bwd_time)
    if 0 < ov < 1:  # partial overlap: interpolate between full and none
        exposed = ov * exposed + (1 - ov) * total
    return exposed, total


def _optimizer_time(dev, n_tensors, numel, slow, opt_states):
    # Adam(W): reads p, g, m, v, writes p, m, v (7 x 4 bytes), ~12 FLOPs per element
    by = (3 + 2 * opt_states) * 4 * numel
    work = max(12 * numel / dev.rate("vector", "float32"), by / dev.mem_bandwidth)
    return (n_tensors * dev.optimizer_overhead + work) * slow


# ---------------------------------------------------------------- the estimate
def estimate(program_or_layer, strategy=None, cluster=None, *, input_spec=None, loss_fn=None,
             global_batch=None, optimizer_states: int = 2, _cache=None) -> Estimate:
    """Predict the step time (compute / communication / bubble) and peak memory per
    rank of training `program_or_layer` with `strategy` on `cluster`.

    Args:
        program_or_layer (Layer|Program): the model (see `trace_step`).
        strategy (ParallelConfig|dict|Strategy, optional): degrees and switches; a
            `fw.distributed.Strategy` is read through `ParallelConfig.from_strategy`
            conventions (its ``pipeline``/``sharding``/``recompute``/``amp`` sub-configs;
            dp = the rest). Default: one rank.
        cluster (Cluster, optional): default `Cluster.this_machine()`.
        input_spec (list): the inputs of one step with the *global* batch as dim 0
            (each replica gets ``batch / (dp * sharding)``, split into
            ``micro_batches``).
        loss_fn (callable, optional): ``loss_fn(layer, *inputs) -> scalar loss``.
        global_batch (int, optional): the global batch (default: dim 0 of the first input).
        optimizer_states (int): fp32 state tensors per parameter (Adam: 2, SGD with
            momentum: 1, SGD: 0).

    Returns:
        Estimate

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto import Cluster, ParallelConfig, estimate
            >>> mlp = fw.nn.Sequential(fw.nn.Linear(64, 256), fw.nn.ReLU(),
            ...                        fw.nn.Linear(256, 64))
            >>> e1 = estimate(mlp, ParallelConfig(), Cluster.a100_dgx(1),
            ...               input_spec=[([512, 64], "float32")])
            >>> e2 = estimate(mlp, ParallelConfig(dp=4), Cluster.a100_dgx(1),
            ...               input_spec=[([512, 64], "float32")])
            >>> e2.communication > 0 and e2.compute < e1.compute
            True
    """
    from fw.distributed.auto.cluster import Cluster

    cfg = _as_config(strategy)
    cluster = cluster if cluster is not None else Cluster.this_machine()
    dev = cluster.device
    slow = cluster.compute_slowdown(cfg.world)
    # ranks beyond the cores time-share them: MPI's shared-memory copies run on the
    # ranks' own cores, so a collective among oversubscribed ranks is slowed alike
    share = cluster.core_sharing(cfg.world)

    def collective_time(*a, **kw):
        return _collective_time(*a, **kw) * share

    notes = []

    # ---- trace at the per-replica micro-batch
    from fw.core.ir import Program

    if isinstance(program_or_layer, Program):
        step = (_cache or {}).get("program") or trace_step(program_or_layer)
        if _cache is not None:
            _cache["program"] = step
        micro = None
        if cfg.dp * cfg.sharding * cfg.micro_batches > 1:
            notes.append("a Program is priced as given: its batch is taken as one "
                         "micro-batch of one replica")
    else:
        types = _types(input_spec or [])
        if not types:
            raise ValueError("estimate: input_spec is required for a Layer")
        gb = global_batch or types[0].shape[0]
        div = cfg.dp * cfg.sharding * cfg.micro_batches
        if gb <= 0 or gb % div:
            raise ValueError(f"estimate: the global batch {gb} is not divisible by dp x "
                             f"sharding x micro_batches = {div} ({cfg.label()})")
        micro = gb // div
        key = ("layer", micro)
        step = (_cache or {}).get(key)
        if step is None:
            mt = [t.with_shape([micro] + list(t.shape[1:])) for t in types]
            step = trace_step(program_or_layer, mt, loss_fn)
            if _cache is not None:
                _cache[key] = step
    fwd, bwd = step.fwd, step.bwd

    # ---- per-op times for one micro-batch on one rank (before splits)
    rows, uncovered = [], {}
    f_times = []
    for op, c in fwd:
        t = _op_time(c, dev, cfg.amp, slow)
        f_times.append(t)
        rows.append(("fwd", op.name, c.kind if c else "none", c.flops if c else 0,
                     c.bytes if c else 0, t))
        if c is None:
            uncovered[op.name] = uncovered.get(op.name, 0) + 1
    b_total, b_over = 0.0, 0.0
    for op, c in bwd:
        t = _op_time(c, dev, cfg.amp, slow)
        b_total += t
        b_over += dev.op_overhead * slow
        rows.append(("bwd", op.name, c.kind if c else "none", c.flops if c else 0,
                     c.bytes if c else 0, t))
        if c is None:
            uncovered[op.name] = uncovered.get(op.name, 0) + 1
    flops = sum(r[3] for r in rows)

    # ---- tensor parallel
    split, pairs = _tp_pairs(fwd) if cfg.mp > 1 else (set(), [])
    if cfg.mp > 1:
        for i, j in pairs:
            n_out = fwd[i][0].results[0].type.shape[-1]
            if n_out % cfg.mp or fwd[j][0].operands[0].type.shape[-1] % cfg.mp:
                raise ValueError(f"estimate: mp={cfg.mp} does not divide the "
                                 f"{n_out}-wide column-parallel linear (op {i})")
        if not pairs:
            notes.append("mp > 1 but no column/row linear pair was found: nothing is split")
    over = dev.op_overhead * slow
    f_work = [t - over for t in f_times]
    f_work_total = sum(f_work)
    b_work = b_total - b_over

    def fwd_time(idx):
        return sum(over + (f_work[i] / cfg.mp if i in split else f_work[i]) for i in idx)

    def bwd_share(idx):  # the backward of these forward ops
        if f_work_total <= 0:
            return b_total * len(idx) / max(len(fwd), 1)
        w = sum(f_work[i] / cfg.mp if i in split else f_work[i] for i in idx)
        base = sum(f_work[i] for i in idx)
        return (b_over * len(idx) / max(len(fwd), 1) + b_work * base / f_work_total
                * (w / base if base > 0 else 1.0))

    tp_fwd_bytes = [max(fwd[j][0].results[0].type.numel(), 0)
                    * fwd[j][0].results[0].type.dtype.itemsize for _, j in pairs]
    tp_bwd_bytes = [max(fwd[i][0].operands[0].type.numel(), 0)
                    * fwd[i][0].operands[0].type.dtype.itemsize for i, _ in pairs]
    if cfg.amp:
        tp_fwd_bytes = [b / 2 for b in tp_fwd_bytes]
        tp_bwd_bytes = [b / 2 for b in tp_bwd_bytes]

    # ---- pipeline stages
    idx_all = list(range(len(fwd)))
    if cfg.pp > 1:
        if cfg.pp > len(fwd):
            raise ValueError(f"estimate: pp={cfg.pp} stages for {len(fwd)} forward ops")
        per_op = [fwd_time([i]) + bwd_share([i]) for i in idx_all]
        bounds = _partition(per_op, cfg.pp)
        cross = _crossing_bytes(fwd, bounds)
    else:
        bounds, cross = [idx_all], []

    # parameters per stage (a parameter belongs to the stage of its first use)
    pstage = {}
    for s, idx in enumerate(bounds):
        for i in idx:
            for v in fwd[i][0].operands:
                if v is not None and v.role == "param" and id(v) not in pstage:
                    pstage[id(v)] = s
    split_params = set()
    for i, j in pairs:
        for k in (i, j):
            for v in fwd[k][0].operands[1:]:
                if v is not None and v.role == "param":
                    split_params.add(id(v))

    def pnumel(v):
        n = max(v.type.numel(), 0)
        return n / cfg.mp if id(v) in split_params else n

    stage_params = [[v for v in step.params if pstage.get(id(v), 0) == s]
                    for s in range(len(bounds))]

    # ---- per-stage times of one micro-batch (TP all-reduces inside)
    mp_stride = 1
    stage_f, stage_b, stage_tp = [], [], []
    pair_stage = {}
    for s, idx in enumerate(bounds):
        for k, (i, _) in enumerate(pairs):
            if i in idx:
                pair_stage[k] = s
    for s, idx in enumerate(bounds):
        stage_f.append(fwd_time(idx))
        stage_b.append(bwd_share(idx))
        tp = 0.0
        for k in range(len(pairs)):
            if pair_stage.get(k, 0) == s:
                tp += collective_time(cluster, "all_reduce", tp_fwd_bytes[k], cfg.mp, mp_stride)
                tp += collective_time(cluster, "all_reduce", tp_bwd_bytes[k], cfg.mp, mp_stride)
                if cfg.recompute:
                    tp += collective_time(cluster, "all_reduce", tp_fwd_bytes[k], cfg.mp,
                                          mp_stride)
        stage_tp.append(tp)
    # fw's ZeRO stage 3 keeps only its slices between uses: backward runs each
    # layer's forward again on re-gathered parameters (sharding/_zero.py), as recompute
    zero3 = cfg.sharding > 1 and cfg.sharding_stage == 3
    rc = [f if (cfg.recompute or zero3) else 0.0 for f in stage_f]
    stage_slot = [stage_f[s] + stage_b[s] + rc[s] for s in range(len(bounds))]

    m, p = cfg.micro_batches, cfg.pp
    comm = {}
    if p > 1:
        pp_stride = cfg.mp * cfg.sharding
        p2p = [collective_time(cluster, "send_recv", b / (2 if cfg.amp else 1), 2, pp_stride)
               for b in cross]
        slot = max(stage_slot[s] + stage_tp[s] for s in range(p))
        compute_part = m * max(stage_slot)
        tp_part = m * max(stage_tp)
        bubble = (p - 1) * slot
        # with a communication engine beside compute (comm_overlap > 0) the sends of
        # consecutive micro-batches hide under compute except along the fill/drain
        # path; MPI on the CPU cores (comm_overlap 0) blocks for every micro-batch
        comm["pp_p2p"] = 2 * sum(p2p) * (1 if cluster.comm_overlap > 0 else m)
        # fw's PipelineParallel broadcasts the step's loss from the last stage
        comm["pp_loss_broadcast"] = collective_time(cluster, "broadcast", 8, p, pp_stride)
        worst = max(range(p), key=lambda s: stage_slot[s] + stage_tp[s])
    else:
        compute_part = m * stage_slot[0]
        tp_part = m * stage_tp[0]
        bubble = 0.0
        worst = 0
    if tp_part:
        comm["tp_all_reduce"] = tp_part

    # ---- data parallel / ZeRO
    grad_bytes_dtype = 4
    local_params = stage_params[worst]
    numel_local = sum(pnumel(v) for v in local_params)
    grad_bytes = numel_local * grad_bytes_dtype
    dp_stride = cfg.mp * (cfg.pp if cfg.sharding == 1 else 1)
    # gradients are complete only after the last micro-batch's backward; fw's
    # PipelineParallel all-reduces them after the whole schedule (no overlap)
    bwd_crit = 0.0 if p > 1 else stage_b[worst]
    s = cfg.sharding
    opt_numel, opt_tensors = numel_local, len(local_params)
    zero_dp = None
    if s > 1:
        opt_numel = numel_local / s
        opt_tensors = max(len(local_params) // s, 1)
        pbytes = numel_local * 4
        # stages 1 and 2 reduce gradients through fw's DataParallel (its buckets hold
        # one owner's parameters each at stage 2, reduced to that owner): on a
        # calibrated machine, its measured cost (`Cluster.dp_sync_cost`), stage 2
        # plus what its reduces cost beyond all-reduces
        zero_dp = cluster.dp_sync_cost(cfg.world, grad_bytes, len(local_params))
        ex_ar, tot = _bucket_exposed(cluster, grad_bytes, bwd_crit, s, dp_stride, share=share)
        if cfg.sharding_stage == 1:
            comm["zero_grad_all_reduce"] = ex_ar if zero_dp is None else zero_dp
            comm["zero_param_broadcast"] = s * collective_time(cluster, "broadcast", pbytes / s,
                                                               s, dp_stride)
        elif cfg.sharding_stage == 2:
            ex, tot = _bucket_exposed(cluster, grad_bytes, bwd_crit, s, dp_stride, op="reduce",
                                       share=share)
            comm["zero_grad_reduce"] = ex if zero_dp is None else zero_dp + max(ex - ex_ar, 0.0)
            comm["zero_param_broadcast"] = s * collective_time(cluster, "broadcast", pbytes / s,
                                                               s, dp_stride)
        else:
            # gathered per layer before its forward and again before its backward
            comm["zero3_param_all_gather"] = 2 * sum(
                collective_time(cluster, "all_gather", pnumel(v) * 4, s, dp_stride)
                for v in local_params)
            comm["zero3_grad_reduce_scatter"] = sum(
                collective_time(cluster, "reduce_scatter", pnumel(v) * 4, s, dp_stride)
                for v in local_params)
    # on a calibrated machine, what fw's DataParallel adds to a step was measured as
    # a whole (bucket copies in and out, the all-reduces, the used-parameter mask,
    # the progress thread, the waits): about twice the bare all-reduce on shared
    # cores, and more when ranks outnumber the cores
    # the data-parallel group has dp ranks; when other ranks (tensor/pipeline
    # parallel) share the cores as well, its cost at dp ranks is slowed by that
    # sharing, as every collective is
    dp_cal = (cluster.dp_sync_cost(cfg.dp, grad_bytes, len(local_params)) if cfg.dp > 1
              else None)
    if dp_cal is not None and cfg.world > cfg.dp:
        dp_cal *= cluster.core_sharing(cfg.world) / cluster.core_sharing(cfg.dp)
    if dp_cal is not None:
        comm["dp_sync"] = dp_cal
    elif cfg.dp > 1:
        ex, tot = _bucket_exposed(cluster, grad_bytes, bwd_crit, cfg.dp, dp_stride,
                                       share=share)
        comm["dp_grad_all_reduce"] = ex
    opt_t = _optimizer_time(dev, opt_tensors, opt_numel, slow, optimizer_states)
    if s > 1 and cfg.sharding_stage < 3:
        # fw's stage 1/2 flatten every owner's parameters (and, stage 2, gradients)
        # into one array per collective and copy the received ones back: read +
        # write passes over them on every rank
        passes = 2 + 2 * (s - 1) / s + (4 if cfg.sharding_stage == 2 else 0)
        opt_t += passes * numel_local * 4 / dev.mem_bandwidth * slow
    # every blocking collective also waits for the slowest peer (calibrated
    # sync_wait on shared machines, scaled to the step's work between collectives by
    # Cluster.sync_cost; 0 for dedicated devices in lockstep)
    if cluster.sync_wait and cfg.world > 1:
        syncs = 0
        if cfg.mp > 1:
            per_pair = 3 if cfg.recompute else 2
            syncs += m * per_pair * sum(1 for k in range(len(pairs))
                                        if pair_stage.get(k, 0) == worst)
        if p > 1:
            syncs += 2 * len(cross) * m + 1
        if (cfg.dp > 1 and dp_cal is None) or (s > 1 and cfg.sharding_stage < 3
                                                and zero_dp is None):
            syncs += _n_buckets(grad_bytes)
        if s > 1 and cfg.sharding_stage < 3:
            syncs += s                                   # each owner's broadcast
        if s > 1 and cfg.sharding_stage == 2:
            syncs += s                     # each owner's gradient-mask all-reduce
        if s > 1 and cfg.sharding_stage == 3:            # per layer, forward + backward
            syncs += 2 * max(len(local_params) // 2, 1) + _n_buckets(grad_bytes)
        comm["sync_wait"] = cluster.sync_cost(cfg.world, syncs, compute_part)
    communication = sum(comm.values())
    # micro-batches (pipeline or gradient merge) add each one's gradients into the
    # accumulated ones: a read-modify-write pass over the local gradients
    accumulate = (m - 1) * 3 * grad_bytes / dev.mem_bandwidth * slow if m > 1 else 0.0
    compute = compute_part + opt_t + accumulate
    step_time = compute + communication + bubble

    # ---- memory (bytes per rank, the worst stage)
    p_bytes = numel_local * 4
    mem = {"parameters": p_bytes / (s if (s > 1 and cfg.sharding_stage == 3) else 1),
           "gradients": p_bytes / (s if (s > 1 and cfg.sharding_stage >= 2) else 1),
           "optimizer": optimizer_states * p_bytes / s}
    if cfg.amp:
        mem["parameters"] += p_bytes / 2  # 16-bit working copy next to the fp32 master
    stage_idx = bounds[worst]
    act = _activation_bytes([fwd[i] for i in stage_idx],
                            {k for k, i in enumerate(stage_idx) if i in split}, cfg.mp,
                            cfg.recompute)
    if cfg.amp:
        act /= 2
    in_flight = min(m, p - worst) if p > 1 else 1
    mem["activations"] = act * in_flight
    memory = sum(mem.values())
    if uncovered:
        notes.append(f"ops without a FLOP/byte formula (priced at their overhead only): "
                     f"{sorted(uncovered)}")
    return Estimate(cfg, step_time, compute, communication, bubble, memory, mem, rows,
                    uncovered, comm, flops * m / max(cfg.mp * cfg.pp, 1), opt_t, notes,
                    accumulate)


def _as_config(strategy) -> ParallelConfig:
    if strategy is None:
        return ParallelConfig()
    if isinstance(strategy, ParallelConfig):
        return strategy
    if isinstance(strategy, dict):
        return ParallelConfig(**strategy)
    to_config = getattr(strategy, "to_parallel_config", None)
    if to_config is not None:
        return to_config()
    raise TypeError(f"estimate: strategy must be a ParallelConfig, a dict of its fields or a "
                    f"fw.distributed.Strategy, got {type(strategy).__name__}")


def with_(cfg: ParallelConfig, **kw) -> ParallelConfig:
    return replace(cfg, **kw)
