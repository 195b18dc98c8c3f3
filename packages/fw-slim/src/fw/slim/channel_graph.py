"""Channel dependency groups, found on the model's traced program.

Why a program and not the layer order: which tensors must lose the same channels
is a property of the data flow (a residual ``add`` ties the channels of every
branch that meets there; a ``flatten`` turns channel ``c`` of a conv into rows
``c*H*W .. (c+1)*H*W-1`` of the next Linear's weight). The layer list says none of
that. So the model is traced by fw.jit into fw's IR and this module walks the
program's ops once, in order, tracking for every value *which channel space* its
channel axis belongs to (a union-find over spaces).

A channel space (after merging, a `ChannelGroup`) holds:

- its **producers**: the parameters that create the channels (a conv's weight
  along axis 0, a Linear's weight along axis 1) -- the criterion scores channels
  on them;
- its **members**: every parameter/buffer slice that must shrink with it (the
  producers, their biases, BatchNorm's weight/bias/mean/variance, a depthwise
  conv's filters, the next conv's weight along axis 1, the next Linear's weight
  rows -- ``block`` rows per channel after a flatten);
- whether it is **fixed** (may not be pruned) and why: it is the model's input or
  output, it meets an op this module does not know how channels pass through
  (reshape, concat, softmax over channels, a grouped conv, ...), or a parameter in
  it belongs to a layer class fw.slim cannot resize.

An op that is not in the rules below *fixes* the spaces of its operands: a wrong
guess would change the model's values, a fixed group only prunes less.

Rules (op names of fw-core's table):

- ``conv`` (groups 1): input space += weight axis 1; a new space with producer
  weight axis 0 (+ bias). Depthwise (groups == in == out channels): the output
  stays in the input space, with the weight axis 0 and bias as members. Other
  groupings (ResNeXt's grouped convs, a depthwise channel multiplier): a new output
  space in ``groups`` equal blocks, each pruned by the same count (the conv stays
  grouped, with fewer filters per group); the input space is fixed (it would have to
  lose the same positions in every group).
- ``batch_norm``: mean, variance, weight, bias join the input's space.
- ``linear``: the input's last-axis space += weight axis 0 (``block`` rows per
  channel after a flatten); a new space (kind ``linear``) with producer weight
  axis 1 (+ bias).
- channel-wise ops (activations, pooling, dropout, interpolation, elementwise
  unary ops): the result keeps the operand's space.
- broadcasting binary elementwise ops (``add``, ``subtract``, ``multiply``, ...):
  the operands' spaces are merged (the residual rule); an operand that broadcasts
  over channels (size 1 there) is fine, one that has channels but no space fixes.
- ``flatten``: channel-major (the channel axis is the first flattened one) gives
  a view with ``block`` = product of the flattened dims after it; otherwise fixes.
- reductions (``mean``, ``sum``, ``max``, ...) over other axes keep the space.
- ``concat`` along the channel axis: the result carries its operands' spaces
  side by side (a `Member`'s ``offset``), so each prunes on its own and a consumer's
  weight loses the matching rows at each offset. An ``add`` on such a value fixes.
- ``reshape([0, -1])`` (a flatten written as a reshape) and ``squeeze`` of other
  axes are followed; any other reshape fixes (a size written into the model's
  code would not shrink with the channels).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

# ops whose result is the operand, value by value (per channel): pass the space on
_POINTWISE_FAMILIES = ("activation", "elementwise")
_NOT_POINTWISE = {"softmax", "log_softmax", "gumbel_softmax", "prelu", "maxout", "glu",
                  "swiglu", "rrelu", "where", "lerp", "clip"}
_POOLS = {"max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool", "lp_pool"}
_BINARY = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin"}
_REDUCE = {"sum", "mean", "max", "min", "amax", "amin", "prod"}
_CHANNELWISE_MISC = {"dropout", "alpha_dropout", "interpolate"}


@dataclass
class Member:
    """One slice of a captured tensor that belongs to a channel group: rows
    ``c*block .. (c+1)*block-1`` of `axis` are channel ``c``.

    Args:
        label (str): the captured tensor's label in the traced program.
        axis (int): the tensor axis that holds the channels.
        block (int, optional): rows per channel. Default: 1.
        role (str, optional): ``"out"`` (producer), ``"bias"``, ``"norm"``, ``"dw"``
            (depthwise filters) or ``"in"``. Default: ``"in"``.
        param (str, optional): the structured parameter name (set by the pruner).
        offset (int, optional): channels before this group's on the axis (after a
            concat). Default: 0.

    Examples:
        >>> import fw
        >>> from fw.slim import Member
        >>> Member("conv.w", 0, role="out").rows([3]).tolist()
        [3]
    """

    label: str
    axis: int
    block: int = 1
    role: str = "in"  # "out" (producer), "bias", "norm", "dw" (depthwise filters), "in"
    param: str | None = None  # the structured name (set by the pruner)
    offset: int = 0  # channels before this group's on the axis (after a concat)

    def key(self):
        """The identity of the slice: ``(label, axis, offset)``.

        Returns:
            tuple: the key.

        Examples:
            >>> import fw
            >>> from fw.slim import Member
            >>> Member("conv.w", 0).key()
            ('conv.w', 0, 0)
        """
        return (self.label, self.axis, self.offset)

    def rows(self, idx):
        """The rows of the tensor's `axis` that hold the channels `idx`.

        Args:
            idx (list[int]): channel indices.

        Returns:
            numpy.ndarray: the row indices.

        Examples:
            >>> import fw
            >>> from fw.slim import Member
            >>> Member("conv.w", 0, block=2).rows([0, 2]).tolist()
            [0, 1, 4, 5]
        """
        import numpy as np

        idx = np.asarray(idx, np.int64)
        return ((self.offset + idx)[:, None] * self.block + np.arange(self.block)).reshape(-1)


@dataclass
class ChannelGroup:
    """Channels that must be pruned together (see the module docstring).

    Args:
        name (str): the group's name (its producer's parameter).
        channels (int): the number of channels.
        kind (str): ``"conv"``, ``"linear"`` or ``"input"``.
        members (list[Member], optional): the tensor slices. Default: [].
        reasons (list[str], optional): why it cannot be pruned. Default: [].
        blocks (int, optional): a grouped conv's equal blocks. Default: 1.

    Examples:
        >>> import fw
        >>> from fw.slim import ChannelGroup, Member
        >>> g = ChannelGroup("conv.w", 8, "conv", [Member("conv.w", 0, role="out")])
        >>> g.prunable
        True
    """

    name: str
    channels: int
    kind: str  # "conv" | "linear" | "input"
    members: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    #: a grouped conv's outputs: `blocks` contiguous blocks that each lose the same
    #: number of channels (1: any channels)
    blocks: int = 1

    @property
    def producers(self) -> list:
        """The members that produce the channels (the layers' output weights).

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> [m.param for m in pruner.group("0.weight").producers]
            ['0.weight']
        """
        return [m for m in self.members if m.role == "out"]

    @property
    def prunable(self) -> bool:
        """Whether the group can be pruned: no reasons against it, and a producer.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> pruner.group("0.weight").prunable, pruner.group("2.weight").prunable
            (True, False)
        """
        return not self.reasons and bool(self.producers)

    def __repr__(self) -> str:
        state = "prunable" if self.prunable else f"fixed: {'; '.join(self.reasons)}"
        return (f"ChannelGroup({self.name!r}, channels={self.channels}, kind={self.kind}, "
                f"members={len(self.members)}, {state})")


class _Space:
    __slots__ = ("channels", "kind", "members", "reasons", "order", "blocks")

    def __init__(self, channels, kind, order):
        self.blocks = 1  # equal contiguous blocks that lose the same count (grouped conv)
        self.channels = channels
        self.kind = kind
        self.members: list = []
        self.reasons: list = []
        self.order = order


@dataclass
class _View:
    """How a value carries a space: its channel axis (from the end, so that
    broadcasting lines up) and rows per channel (> 1 after a flatten). After a
    concat along the channels the value carries several spaces side by side:
    ``segments`` lists ``(space, offset, channels)`` and ``space`` is -1."""

    space: int
    axis: int  # negative: counted from the last axis
    block: int = 1
    segments: tuple | None = None

    def parts(self):
        """``(space, offset)`` of each space the value carries."""
        if self.segments is None:
            return [(self.space, 0)]
        return [(sp, off) for sp, off, _ in self.segments]


class _Analysis:
    def __init__(self, program):
        self.program = program
        self.parent: list = []
        self.spaces: list = []
        self.views: dict = {}  # id(Value) -> _View
        self.param_uses: dict = {}  # (label, axis) -> space
        self.pinned: dict = {}  # label -> reason (used where we cannot follow it)

    # ---------------------------------------------------------- union-find
    def new(self, channels, kind="conv", reason=None) -> int:
        i = len(self.spaces)
        self.parent.append(i)
        self.spaces.append(_Space(channels, kind, i))
        if reason:
            self.spaces[i].reasons.append(reason)
        return i

    def find(self, i) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a, b, why) -> int:
        a, b = self.find(a), self.find(b)
        if a == b:
            return a
        sa, sb = self.spaces[a], self.spaces[b]
        if sa.order > sb.order:
            a, b, sa, sb = b, a, sb, sa
        self.parent[b] = a
        if sa.channels != sb.channels:
            sa.reasons.append(f"{why} joins {sa.channels} and {sb.channels} channels")
        sa.members += sb.members
        sa.reasons += sb.reasons
        if sb.blocks != sa.blocks:
            if 1 in (sa.blocks, sb.blocks):
                sa.blocks = max(sa.blocks, sb.blocks)
            else:
                sa.reasons.append(f"{why} joins channels grouped in {sa.blocks} and "
                                  f"{sb.blocks} blocks")
        if sa.kind != sb.kind and "conv" in (sa.kind, sb.kind):
            sa.kind = "conv"
        return a

    def fix(self, space, reason) -> None:
        s = self.spaces[self.find(space)]
        if reason not in s.reasons:
            s.reasons.append(reason)

    def add_member(self, space, value, axis, block=1, role="in", offset=0, total=None) -> None:
        label = value.label
        if value.role not in ("param", "const") or label is None:
            self.fix(space, f"a non-parameter operand ({value.role}) carries its channels")
            return
        axis = axis % len(value.shape)
        m = Member(label, axis, block, role, offset=offset)
        r = self.find(space)
        prev = self.param_uses.get(m.key())
        if prev is not None:  # a shared parameter: its uses prune together
            r = self.union(prev, r, f"parameter {label!r} (shared)")
            have = {(x.label, x.axis, x.role, x.offset) for x in self.spaces[r].members}
            if (label, axis, role, offset) not in have:
                self.spaces[r].members.append(m)
        else:
            self.spaces[r].members.append(m)
        self.param_uses[m.key()] = r
        want = (self.spaces[r].channels if total is None else total) * block
        if value.shape[axis] != want:
            self.fix(r, f"{label!r} has {value.shape[axis]} rows on axis {axis}, "
                        f"expected {want}")

    def add_members(self, view, value, axis, role="in", block=None) -> None:
        """`value`'s `axis` holds the channels of `view` (each space of a concat at
        its offset)."""
        blk = view.block if block is None else block
        total = None if view.segments is None else sum(c for _, _, c in view.segments)
        for sp, off in view.parts():
            self.add_member(sp, value, axis, blk, role, off, total)

    def fix_view(self, view, reason) -> None:
        for sp, _ in view.parts():
            self.fix(sp, reason)

    # ---------------------------------------------------------- views
    def view(self, value) -> _View | None:
        return self.views.get(id(value))

    def channel_view(self, value, axis, what) -> _View:
        """`value`'s view with its channels on `axis`, unflattened (a concat's
        several spaces allowed); otherwise its spaces are fixed and a new fixed
        space is returned as a view."""
        v = self.view(value)
        nd = len(value.shape)
        if v is not None and v.block == 1 and v.axis % nd == axis % nd:
            return v
        return _View(self.plain_view(value, axis, what), axis - nd if axis >= 0 else axis)

    def copy_view(self, value, v, axis, block=None) -> None:
        nd = len(value.shape)
        self.views[id(value)] = replace(v, axis=axis - nd if axis >= 0 else axis,
                                        block=v.block if block is None else block)

    def plain_view(self, value, axis, what) -> int:
        """The space of `value`'s channel axis `axis`, which must be a plain
        (unflattened) view; otherwise that space is fixed and a new fixed one
        returned."""
        v = self.view(value)
        nd = len(value.shape)
        if v is not None and v.block == 1 and v.axis % nd == axis % nd and v.segments is None:
            return v.space
        if v is not None:
            self.fix_view(v, f"{what} reads it along another axis, flattened or concatenated")
        ch = value.shape[axis] if nd else 1
        return self.new(ch, "input", f"{what} reads channels of unknown origin")

    def set_view(self, value, space, axis, block=1) -> None:
        self.views[id(value)] = _View(space, axis - len(value.shape) if axis >= 0 else axis,
                                      block)

    def fix_operands(self, op, why) -> None:
        for v in op.operands:
            if v is None:
                continue
            w = self.view(v)
            if w is not None:
                self.fix_view(w, why)
            if v.role in ("param", "const") and v.label is not None:
                self.pinned.setdefault(v.label, why)

    # ---------------------------------------------------------- rules
    def run(self) -> list:
        blk = self.program.block
        for a in blk.args:
            if a.role == "input" and len(a.shape) >= 2:
                s = self.new(a.shape[1], "input", "model input")
                self.set_view(a, s, 1)
        for op in blk.ops:
            self.visit(op)
        for v in blk.outputs:
            w = self.view(v)
            if w is not None:
                self.fix_view(w, "reaches the model output")
        return self.groups()

    def visit(self, op) -> None:
        name = op.name
        where = f"op {name!r}" + (f" ({os.path.basename(str(op.loc[0]))}:{op.loc[1]})"
                                  if op.loc else "")
        if op.blocks:
            self.fix_operands(op, f"{where} (control flow)")
            return
        rule = getattr(self, "_op_" + name, None)
        if rule is not None:
            rule(op, where)
            return
        fam = op.opdef.family
        if name in _POOLS or name in _CHANNELWISE_MISC or (
                fam in _POINTWISE_FAMILIES and name not in _NOT_POINTWISE
                and name not in _BINARY and self._is_unary(op)):
            self._passthrough(op, where)
            return
        if name in _BINARY:
            self._binary(op, where)
            return
        if name in _REDUCE:
            self._reduce(op, where)
            return
        self.fix_operands(op, where)

    @staticmethod
    def _is_unary(op) -> bool:
        tensors = [v for v in op.operands if v is not None]
        return len(tensors) == 1 and len(op.results) >= 1 and \
            list(op.results[0].shape) == list(tensors[0].shape)

    def _passthrough(self, op, where) -> None:
        x = op.operands[0]
        v = self.view(x)
        if v is None:
            self.fix_operands(op, where)
            return
        r = op.results[0]
        if len(r.shape) != len(x.shape):
            self.fix_view(v, f"{where} changes the rank")
            return
        if v.block != 1 and list(r.shape) != list(x.shape):
            self.fix_view(v, f"{where} on flattened channels")
            return
        self.views[id(r)] = replace(v)
        for extra in op.results[1:]:  # e.g. max_pool_with_index's indices: not followed
            if extra is not None and len(extra.shape) == len(r.shape):
                self.views[id(extra)] = replace(v)

    def _binary(self, op, where) -> None:
        r = op.results[0]
        nd = len(r.shape)
        spaces = []
        views = [(x, self.view(x)) for x in op.operands[:2] if x is not None]
        axes = {w.axis for _, w in views if w is not None}
        blocks = {w.block for _, w in views if w is not None}
        if not axes:
            return
        if len(axes) > 1 or len(blocks) > 1:
            self.fix_operands(op, f"{where} mixes channel axes")
            return
        if any(w is not None and w.segments is not None for _, w in views):
            self.fix_operands(op, f"{where} on concatenated channels")
            return
        (axis,) = axes
        (block,) = blocks
        for x, w in views:
            if w is not None:
                spaces.append(w.space)
                continue
            xs = list(x.shape)
            k = len(xs) + axis
            if 0 <= k < len(xs) and xs[k] != 1:  # has channels but no known space
                for _, w2 in views:
                    if w2 is not None:
                        self.fix_view(w2, f"{where}: another operand has per-channel values")
                return
        s = spaces[0]
        for t in spaces[1:]:
            s = self.union(s, t, where)
        if -axis > nd:
            self.fix(s, f"{where} broadcasts the channel axis away")
            return
        self.views[id(r)] = _View(s, axis, block)

    def _reduce(self, op, where) -> None:
        x = op.operands[0]
        v = self.view(x)
        if v is None:
            return
        nd = len(x.shape)
        ax = op.attrs.get("axis")
        keep = bool(op.attrs.get("keepdim", False))
        if ax is None or ax == [] or ax == ():
            self.fix_view(v, f"{where} reduces every axis")
            return
        axes = {a % nd for a in (ax if isinstance(ax, (list, tuple)) else [ax])}
        cax = v.axis % nd
        if cax in axes or v.block != 1:
            self.fix_view(v, f"{where} reduces over channels")
            return
        new_axis = cax if keep else cax - sum(1 for a in axes if a < cax)
        self.copy_view(op.results[0], v, new_axis)

    def _op_conv(self, op, where) -> None:
        x, w, b = (op.operands + [None, None, None])[:3]
        cl = bool(op.attrs.get("channel_last", False))
        axis = len(x.shape) - 1 if cl else 1
        groups = int(op.attrs.get("groups", 1))
        out_ch, in_per_group = w.shape[0], w.shape[1]
        v_in = self.channel_view(x, axis, where)
        r = op.results[0]
        if groups == 1:
            self.add_members(v_in, w, 1, role="in")
            s_out = self.new(out_ch, "conv")
            self.add_member(s_out, w, 0, role="out")
            if b is not None:
                self.add_member(s_out, b, 0, role="bias")
            self.set_view(r, s_out, axis)
        elif in_per_group == 1 and out_ch == groups:  # depthwise, multiplier 1
            self.add_members(v_in, w, 0, role="dw")
            if b is not None:
                self.add_members(v_in, b, 0, role="bias")
            self.copy_view(r, v_in, axis)
        else:
            # a grouped conv: its outputs prune as `groups` equal blocks (each group
            # keeps as many filters as the others); its inputs would have to lose the
            # same positions in every group, which no space here expresses: fixed
            self.fix_view(v_in, f"{where} is a grouped conv (groups={groups}) reading them")
            s_out = self.new(out_ch, "conv")
            self.spaces[s_out].blocks = groups
            self.add_member(s_out, w, 0, role="out")
            if b is not None:
                self.add_member(s_out, b, 0, role="bias")
            self.set_view(r, s_out, axis)

    def _op_batch_norm(self, op, where) -> None:
        x = op.operands[0]
        cl = bool(op.attrs.get("channel_last", False))
        axis = len(x.shape) - 1 if cl else 1
        v = self.channel_view(x, axis, where)
        for p in op.operands[1:5]:
            if p is not None:
                self.add_members(v, p, 0, role="norm")
        self.copy_view(op.results[0], v, axis)

    def _op_linear(self, op, where) -> None:
        x, w, b = (op.operands + [None, None, None])[:3]
        v = self.view(x)
        nd = len(x.shape)
        if v is None or v.axis % nd != nd - 1:
            v = _View(self.plain_view(x, nd - 1, where), -1)
        self.add_members(v, w, 0, role="in")
        s_out = self.new(w.shape[1], "linear")
        self.add_member(s_out, w, 1, role="out")
        if b is not None:
            self.add_member(s_out, b, 0, role="bias")
        self.set_view(op.results[0], s_out, len(op.results[0].shape) - 1)

    def _op_flatten(self, op, where) -> None:
        x = op.operands[0]
        v = self.view(x)
        if v is None:
            return
        nd = len(x.shape)
        start = op.attrs.get("start_axis", 0) % nd if nd else 0
        stop = op.attrs.get("stop_axis", -1) % nd if nd else 0
        cax = v.axis % nd
        r = op.results[0]
        if cax < start:
            self.copy_view(r, v, cax)
        elif cax > stop:
            self.copy_view(r, v, cax - (stop - start))
        elif cax == start and v.block == 1:
            inner = x.shape[cax + 1:stop + 1]
            if any(d < 0 for d in inner):
                self.fix_view(v, f"{where} flattens dynamic dims after the channels")
                return
            self.copy_view(r, v, start, math.prod(inner))
        else:
            self.fix_view(v, f"{where} flattens the channels channel-minor")

    def _op_reshape(self, op, where) -> None:
        """Followed only where it is a flatten that names no channel-dependent size:
        ``x.reshape([0, -1])`` (0 copies the batch dim) on ``[N, C, d...]`` with the
        channels at axis 1. A reshape that writes the size (``[-1, C*H*W]``) would
        break once the channels shrink: it fixes the group."""
        x, r = op.operands[0], op.results[0]
        v = self.view(x)
        if v is None:
            return
        xs = list(x.shape)
        target = list(op.attrs.get("shape") or [])
        batch_ok = len(target) == 2 and (target[0] == 0 or (xs and target[0] == xs[0] >= 0))
        if (batch_ok and target[1] == -1 and len(xs) >= 2 and v.axis % len(xs) == 1
                and v.block == 1 and all(d >= 0 for d in xs[2:])):
            self.copy_view(r, v, 1, math.prod(xs[2:]))
        else:
            self.fix_view(v, f"{where} reshapes the channels (only reshape([0, -1]) is "
                              f"followed)")

    def _op_concat(self, op, where) -> None:
        """Along the channel axis: the result carries each operand's spaces side by
        side (DenseNet/Inception); a consumer's weight gets one member per space at
        its offset. Along another axis, or with an operand of unknown channels, the
        operands' spaces are fixed."""
        xs = [x for x in op.operands if x is not None]
        r = op.results[0]
        nd = len(r.shape)
        ax = int(op.attrs.get("axis", 0)) % nd if nd else 0
        views = [self.view(x) for x in xs]
        ok = all(v is not None and v.block == 1 and v.axis % nd == ax for v in views)
        if not ok:
            self.fix_operands(op, f"{where} (not along known channels)")
            return
        segs, off = [], 0
        for x, v in zip(xs, views):
            if v.segments is None:
                segs.append((v.space, off, int(x.shape[ax])))
                off += int(x.shape[ax])
            else:
                for sp, o, c in v.segments:
                    segs.append((sp, off + o, c))
                off += int(x.shape[ax])
        self.views[id(r)] = _View(-1, ax - nd, 1, tuple(segs))

    def _op_squeeze(self, op, where) -> None:
        x, r = op.operands[0], op.results[0]
        v = self.view(x)
        if v is None:
            return
        nd = len(x.shape)
        ax = op.attrs.get("axis")
        axes = ({a % nd for a in (ax if isinstance(ax, (list, tuple)) else [ax])}
                if ax not in (None, [], ()) else {i for i, d in enumerate(x.shape) if d == 1})
        cax = v.axis % nd
        if cax in axes or v.block != 1:
            self.fix_view(v, f"{where} squeezes the channel axis")
            return
        self.copy_view(r, v, cax - sum(1 for a in axes if a < cax))

    # ---------------------------------------------------------- result
    def groups(self) -> list:
        roots: dict = {}
        for i in range(len(self.spaces)):
            roots.setdefault(self.find(i), None)
        out = []
        for r in sorted(roots, key=lambda i: self.spaces[i].order):
            s = self.spaces[r]
            if not s.members:
                continue
            reasons = list(s.reasons)
            for m in s.members:
                why = self.pinned.get(m.label)
                if why is not None and f"{m.label!r} is used by {why}" not in reasons:
                    reasons.append(f"{m.label!r} is used by {why}")
            prod = [m for m in s.members if m.role == "out"]
            name = prod[0].label if prod else s.members[0].label
            out.append(ChannelGroup(name, s.channels, s.kind, list(s.members), reasons,
                                    s.blocks))
        return out


def channel_groups(program) -> list:
    """The `ChannelGroup`s of a traced `fw.core.ir.Program` (labels are the
    program's parameter labels), in the order their spaces first appear.

    Args:
        program (Program): a traced program.

    Returns:
        list[ChannelGroup]: the groups.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> from fw.slim.channel_prune import trace_program
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
        >>> [g.channels for g in fw.slim.channel_groups(trace_program(net, [1, 1, 8, 8]))]
        [1, 8, 4]
    """
    return _Analysis(program).run()
