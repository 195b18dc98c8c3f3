"""Structured channel pruning that really shrinks the layers.

``ChannelPruner(model, inputs, criterion)`` traces the model with fw.jit (eval
mode), finds its channel groups on the program (`fw.slim.channel_graph`), scores
each group's channels with a criterion (`fw.slim.criteria`: L1, L2, FPGM) and, on
`prune`, replaces every member tensor by the kept rows: the result is the same
Layer classes with smaller weights (Conv ``out``/``in`` channels and ``groups`` of
depthwise convs, BatchNorm features, Linear ``in``/``out`` features), a normal
model that trains, `fw.jit.save` saves and fw.inference serves.

The API follows PaddleSlim's dygraph pruners (``L1NormFilterPruner(model,
inputs)``, ``prune_vars(ratios)``, ``sensitive(eval_func)``), with ratios keyed by
group, layer or parameter name. The pruned model equals the original with the
pruned channels zeroed in every member of their groups (tested per criterion and
dependency pattern). `sensitive` measures each group's accuracy drop per ratio by
exactly that zeroing (no model copies), and `ratios_by_sensitivity` turns a drop
budget into per-group ratios (PaddleSlim's ``get_ratios_by_loss``).
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

import fw
import fw.nn as nn
from fw.slim.channel_graph import channel_groups
from fw.slim.criteria import get_criterion

__all__ = ["ChannelPruner", "L1NormFilterPruner", "L2NormFilterPruner", "FPGMFilterPruner",
           "ratios_by_sensitivity"]

_CONVS = (nn.Conv1D, nn.Conv2D, nn.Conv3D)
_NORMS = (nn.BatchNorm, nn.BatchNorm1D, nn.BatchNorm2D, nn.BatchNorm3D, nn.SyncBatchNorm)
_RESIZABLE = _CONVS + _NORMS + (nn.Linear,)
_PARAM_ATTRS = ("optimize_attr", "regularizer", "need_clip", "do_model_average")


def _input_specs(inputs) -> list:
    """PaddleSlim passes ``inputs=[1, 3, 224, 224]`` (one shape); also accepted: a
    list of shapes, InputSpecs or tensors. The batch dim is traced as dynamic."""
    from fw.jit import InputSpec

    if isinstance(inputs, (InputSpec, fw.Tensor)):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"ChannelPruner: 'inputs' must be a shape list, or a list of shapes/"
                        f"InputSpecs/Tensors, got {type(inputs).__name__}")
    if all(isinstance(d, (int, np.integer)) for d in inputs):
        inputs = [list(inputs)]
    specs = []
    for x in inputs:
        if isinstance(x, InputSpec):
            specs.append(x)
        elif isinstance(x, fw.Tensor):
            specs.append(InputSpec([-1] + list(x.shape[1:]), x.dtype))
        elif isinstance(x, (list, tuple)) and all(isinstance(d, (int, np.integer)) for d in x):
            specs.append(InputSpec([-1] + [int(d) for d in x[1:]], "float32"))
        else:
            raise TypeError(f"ChannelPruner: bad entry {x!r} in 'inputs' (a shape, an "
                            f"InputSpec or a Tensor)")
    return specs


def trace_program(model, inputs):
    """The model's forward in eval mode as a `fw.core.ir.Program` (fw.jit);
    the layers' training flags are restored afterwards."""
    from fw.jit import StaticFunction, to_static

    specs = _input_specs(inputs)
    flags = [(layer, layer.training) for _, layer in model.named_sublayers(include_self=True)]
    model.eval()
    fwd = model.forward
    if isinstance(fwd, StaticFunction):  # already converted: trace the eager forward afresh
        fwd = fwd.dygraph_function
    try:
        return to_static(fwd, input_spec=specs).concrete_program.main_program
    finally:
        for layer, flag in flags:
            layer.training = flag


def _holders(model) -> dict:
    """id(tensor) -> (layer qualname, layer, attribute) for every parameter/buffer."""
    out = {}
    for lname, layer in model.named_sublayers(include_self=True):
        for attr, t in list(layer.named_parameters(include_sublayers=False)) + \
                list(layer.named_buffers(include_sublayers=False)):
            if t is not None:
                out.setdefault(id(t), (lname, layer, attr))
    return out


def _replace(layer, attr, old, arr) -> None:
    t = fw.to_tensor(np.ascontiguousarray(arr, dtype=old.numpy().dtype), place=old.place)
    if isinstance(old, nn.Parameter):
        new = nn.Parameter(t, requires_grad=not old.stop_gradient, name=old.name)
        for k in _PARAM_ATTRS:
            if k in old.__dict__:
                setattr(new, k, old.__dict__[k])
    else:
        new = t
        new.name = old.name
        new.stop_gradient = old.stop_gradient
    setattr(layer, attr, new)


def _resync(layer) -> None:
    """Make a resized layer's recorded sizes match its new weights."""
    if isinstance(layer, _CONVS):
        w = layer.weight
        if layer._groups != 1 and layer._groups == layer._out_channels and w.shape[1] == 1:
            layer._groups = int(w.shape[0])  # depthwise: one group per channel
        # (a grouped conv keeps its groups: each lost the same number of filters)
        layer._out_channels = int(w.shape[0])
        layer._in_channels = int(w.shape[1]) * layer._groups
    elif isinstance(layer, _NORMS):
        ref = layer._mean if layer._mean is not None else layer.weight
        layer._num_features = int(ref.shape[0])
    elif isinstance(layer, nn.Linear):
        layer._in_features = int(layer.weight.shape[0])
        layer._out_features = int(layer.weight.shape[1])


def _drop_programs(model) -> None:
    """Forget the programs that `fw.jit.to_static` cached for the model's layers:
    they captured the tensors that pruning replaced (the next call traces again)."""
    from fw.jit import StaticFunction

    for _, layer in model.named_sublayers(include_self=True):
        fwd = layer.__dict__.get("forward")
        if isinstance(fwd, StaticFunction):
            fwd.program_cache.clear()


class ChannelPruner:
    """Structured channel pruning of `model` (a `fw.nn.Layer`).

    Args:
        model: the layer to prune, in place.
        inputs: the input shape (``[1, 3, 224, 224]``), or a list of shapes,
            InputSpecs or example tensors (the batch dim is traced as dynamic).
        criterion: ``"l1"``, ``"l2"``, ``"fpgm"`` or ``fn(filters) -> scores``.
        prune_linear: also offer the output features of Linear layers, e.g. a
            transformer's feed-forward width (never the model's outputs). Default:
            conv channels only.
        round_to: keep a multiple of this many channels per group when the group
            has at least that many (vector-friendly sizes for oneDNN's blocked
            layouts, e.g. 8).

    Attributes:
        groups: the `ChannelGroup`s (``prunable``, ``reasons`` when fixed).

    Examples:
        >>> import fw, fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
        >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
        >>> _ = pruner.prune(0.5)
        >>> net[0].weight.shape, net[2].weight.shape
        ([4, 1, 3, 3], [4, 4, 3, 3])
    """

    def __init__(self, model, inputs, criterion="l1", prune_linear=False, round_to=1):
        if not isinstance(model, nn.Layer):
            raise TypeError(f"ChannelPruner: 'model' must be a fw.nn.Layer, got "
                            f"{type(model).__name__}")
        if int(round_to) < 1:
            raise ValueError(f"ChannelPruner: 'round_to' must be >= 1, got {round_to}")
        self.model = model
        self.inputs = inputs
        self.criterion = get_criterion(criterion)
        self.prune_linear = bool(prune_linear)
        self.round_to = int(round_to)
        self._analyse()

    # ------------------------------------------------------------ analysis
    def _analyse(self) -> None:
        program = trace_program(self.model, self.inputs)
        holders = _holders(self.model)
        self._where = {}  # label -> (layer qualname, layer, attr, tensor)
        for label, t in program.captured.items():
            h = holders.get(id(t))
            if h is not None:
                self._where[label] = (*h, t)
        self.groups = channel_groups(program)
        for g in self.groups:
            for m in g.members:
                h = self._where.get(m.label)
                if h is None:
                    g.reasons.append(f"{m.label!r} is not a parameter or buffer of the model")
                    continue
                m.param = f"{h[0]}.{h[2]}" if h[0] else h[2]
                if not isinstance(h[1], _RESIZABLE):
                    g.reasons.append(f"{m.param!r} belongs to {type(h[1]).__name__}, which "
                                     f"fw.slim cannot resize (Conv, BatchNorm, Linear)")
            if g.kind == "linear" and not self.prune_linear and not g.reasons:
                g.reasons.append("Linear output features (prune_linear=False)")
            prod = g.producers
            if prod and prod[0].param:
                g.name = prod[0].param
            elif g.kind == "input":
                g.name = "input"

    def prunable_groups(self) -> list:
        """The groups that can be pruned (the others list their ``reasons``).

        Returns:
            list[ChannelGroup]: the groups.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> [g.name for g in pruner.prunable_groups()]
            ['0.weight']
        """
        return [g for g in self.groups if g.prunable]

    def _tensor(self, label):
        return self._where[label][3]

    def scores(self, group) -> np.ndarray:
        """The criterion's score of each channel of `group` (low = pruned first).

        Args:
            group (ChannelGroup): a group of this pruner.

        Returns:
            numpy.ndarray: one score per channel.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> pruner.scores(pruner.group("0.weight")).shape
            (8,)
        """
        mats = []
        for m in group.producers:
            a = np.asarray(self._tensor(m.label).numpy(), np.float64)
            mats.append(np.moveaxis(a, m.axis, 0).reshape(group.channels, -1))
        s = np.asarray(self.criterion(np.concatenate(mats, axis=1)), np.float64)
        if s.shape != (group.channels,):
            raise ValueError(f"ChannelPruner: the criterion returned shape {list(s.shape)} for "
                             f"group {group.name!r}, expected [{group.channels}]")
        return s

    def _count(self, group, ratio) -> int:
        c = group.channels
        keep = c - int(round(float(ratio) * c))
        if c >= self.round_to > 1:
            keep = max(self.round_to, int(round(keep / self.round_to)) * self.round_to)
        return min(max(keep, 1), c)

    def _resolve(self, ratios) -> dict:
        """ratios (a float for every prunable group, or {name: ratio}) -> {group: ratio}."""
        if isinstance(ratios, (int, float)):
            return {id(g): (g, float(ratios)) for g in self.prunable_groups()}
        if not isinstance(ratios, dict):
            raise TypeError(f"ChannelPruner.prune: 'ratios' must be a float or a dict of "
                            f"name -> ratio, got {type(ratios).__name__}")
        out = {}
        for key, r in ratios.items():
            g = self.group(key)
            if not g.prunable:
                raise ValueError(f"ChannelPruner.prune: group {g.name!r} (from {key!r}) cannot "
                                 f"be pruned: {'; '.join(g.reasons) or 'no producer'}")
            prev = out.get(id(g))
            if prev is not None and prev[1] != float(r):
                raise ValueError(f"ChannelPruner.prune: two ratios ({prev[1]}, {r}) for group "
                                 f"{g.name!r} (one key names a layer/parameter in it)")
            out[id(g)] = (g, float(r))
        return out

    def group(self, name):
        """The group that `name` (group name, layer name, or a parameter's structured
        or unique name) belongs to; KeyError naming the prunable groups otherwise.

        Args:
            name (str): the name.

        Returns:
            ChannelGroup: the group.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> g = pruner.group("0")           # the first conv layer
            >>> g.name, g.channels, g.prunable
            ('0.weight', 8, True)
        """
        for g in self.groups:
            if g.name == name:
                return g
        for g in self.groups:  # a layer/parameter on the producing side of the group
            for m in g.members:
                p = m.param or ""
                if (name in (m.label, p) or p.rsplit(".", 1)[0] == name) and \
                        m.role in ("out", "bias", "norm", "dw"):
                    return g
        for g in self.groups:  # an input-side mention, as a last resort
            if any(name in (m.label, m.param) for m in g.members):
                return g
        known = [g.name for g in self.prunable_groups()]
        raise KeyError(f"ChannelPruner: no channel group for {name!r}; prunable groups: "
                       f"{known}")

    def plan(self, ratios) -> dict:
        """The channels `ratios` would prune, without changing the model.

        Args:
            ratios (float|dict): one ratio in [0, 1) for every prunable group, or
                ``{group, layer or parameter name: ratio}``.

        Returns:
            dict: group name -> sorted pruned channel indices.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> plan = pruner.plan(0.5)
            >>> list(plan), len(plan["0.weight"])
            (['0.weight'], 4)
        """
        out = {}
        for g, r in self._resolve(ratios).values():
            if not 0.0 <= r < 1.0:
                raise ValueError(f"ChannelPruner: ratio for {g.name!r} must be in [0, 1), got "
                                 f"{r}")
            n_keep = self._count(g, r)
            scores = self.scores(g)
            if g.blocks > 1:  # a grouped conv's outputs: the same count from each group
                per = g.channels // g.blocks
                keep = min(max(int(round(n_keep / g.blocks)), 1), per)
                out[g.name] = np.sort(np.concatenate([
                    b * per + np.argsort(scores[b * per:(b + 1) * per], kind="stable")[
                        :per - keep] for b in range(g.blocks)]).astype(np.int64))
                continue
            order = np.argsort(scores, kind="stable")
            out[g.name] = np.sort(order[:g.channels - n_keep])
        return out

    # ------------------------------------------------------------ pruning
    def prune(self, ratios) -> dict:
        """Prune in place; the groups are analysed again afterwards (the pruner can
        prune further).

        The pruned layers hold new Parameter objects: create the optimizer for the
        fine-tune after pruning (one made before still holds the old ones).

        Args:
            ratios (float|dict): one ratio in [0, 1) for every prunable group, or
                ``{group, layer or parameter name: ratio}``.

        Returns:
            dict: group name -> the pruned channel indices.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> _ = pruner.prune(0.5)
            >>> net[0].weight.shape, net[2].weight.shape
            ([4, 1, 3, 3], [4, 4, 3, 3])
        """
        plan = self.plan(ratios)
        by_name = {g.name: g for g in self.groups}
        # the rows to drop per (tensor, axis), from every group at once: after a
        # concat one axis holds several groups at their offsets
        drop: dict = {}
        for name, pruned in plan.items():
            for m in by_name[name].members:
                drop.setdefault(m.label, {}).setdefault(m.axis, set()).update(
                    m.rows(pruned).tolist())
        arrays: dict = {}
        for label, axes in drop.items():
            a = self._tensor(label).numpy()
            for axis, rows in axes.items():
                a = np.take(a, np.setdiff1d(np.arange(a.shape[axis]), sorted(rows)), axis=axis)
            arrays[label] = a
        touched = {}
        for label, a in arrays.items():
            lname, layer, attr, old = self._where[label]
            _replace(layer, attr, old, a)
            touched[id(layer)] = layer
        for layer in touched.values():
            _resync(layer)
        _drop_programs(self.model)
        self._analyse()
        return plan

    def prune_vars(self, ratios, axis=0) -> dict:
        """PaddleSlim's name for `prune` (``axis=0``: filters, the only one here).

        Args:
            ratios (float|dict): one ratio in [0, 1) for every prunable group, or
                ``{group, layer or parameter name: ratio}``.
            axis (int, optional): must be 0. Default: 0.

        Returns:
            dict: group name -> the pruned channel indices.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> _ = pruner.prune_vars({"0.weight": 0.25})
            >>> net[0].weight.shape
            [6, 1, 3, 3]
        """
        if axis != 0:
            raise ValueError(f"ChannelPruner.prune_vars: only axis=0 (output channels) is "
                             f"supported, got {axis}")
        return self.prune(ratios)

    @contextlib.contextmanager
    def zeroed(self, plan):
        """Zero the channels of `plan` in every member tensor for the duration of the
        block: the model then computes what the pruned model would (used by
        `sensitive`); the values are restored afterwards.

        Args:
            plan (dict): ``{group name: channel indices}``.

        Returns:
            contextmanager: the context.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> with pruner.zeroed({"0.weight": [0, 1]}):
            ...     float(net[0].weight[0:2].abs().sum())
            0.0
            >>> float(net[0].weight[0:2].abs().sum()) > 0
            True
        """
        by_name = {g.name: g for g in self.groups}
        saved = {}
        try:
            for name, idx in plan.items():
                g = by_name[name] if name in by_name else self.group(name)
                idx = np.asarray(idx, np.int64)
                for m in g.members:
                    t = self._tensor(m.label)
                    if m.label not in saved:
                        saved[m.label] = t.numpy().copy()
                    a = t.numpy().copy()
                    sl = [slice(None)] * a.ndim
                    sl[m.axis] = m.rows(idx)
                    a[tuple(sl)] = 0
                    t.set_value(a)
            yield
        finally:
            for label, a in saved.items():
                self._tensor(label).set_value(a)

    def sensitive(self, eval_func, ratios=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
                  groups=None, skip=()) -> dict:
        """Each group's relative metric drop per pruning ratio.

        Args:
            eval_func: ``eval_func(model) -> float``, higher is better (accuracy).
            ratios: the ratios to try per group.
            groups: names of the groups to measure (default: every prunable one).
            skip: names to leave out.

        Returns:
            ``{group name: {ratio: (base - metric) / |base|}}`` (PaddleSlim's
            "loss"); one group at a time, by zeroing (see `zeroed`).

        Examples:
            >>> import fw, fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8])
            >>> x = fw.randn([2, 1, 8, 8])
            >>> ref = net(x)
            >>> def evaluate(model):          # higher is better
            ...     return -float(((model(x) - ref) ** 2).mean())
            >>> sens = pruner.sensitive(evaluate, ratios=(0.25, 0.5))
            >>> list(sens), sorted(sens["0.weight"])
            (['0.weight'], [0.25, 0.5])
        """
        base = float(eval_func(self.model))
        denom = abs(base) if base != 0 else 1.0
        names = [g.name for g in self.prunable_groups()] if groups is None else \
            [self.group(n).name for n in groups]
        skipped = {self.group(n).name for n in skip}
        out = {}
        for name in names:
            if name in skipped:
                continue
            out[name] = {}
            for r in ratios:
                plan = self.plan({name: r})
                with self.zeroed(plan):
                    score = float(eval_func(self.model))
                out[name][float(r)] = (base - score) / denom
        return out

    def status(self) -> str:
        """One line per group: name, channels, prunable or why not.

        Returns:
            str: the lines.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Conv2D(1, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
            >>> pruner = fw.slim.ChannelPruner(net, [1, 1, 8, 8], criterion="l1")
            >>> print(pruner.status())
            input: 1 channels, 1 tensors, fixed: model input
            0.weight: 8 channels, 3 tensors, prunable
            2.weight: 4 channels, 2 tensors, fixed: reaches the model output
        """
        lines = []
        for g in self.groups:
            state = "prunable" if g.prunable else "fixed: " + "; ".join(g.reasons)
            lines.append(f"{g.name}: {g.channels} channels, {len(g.members)} tensors, {state}")
        return "\n".join(lines)


def ratios_by_sensitivity(sensitivities: dict, max_drop: float) -> dict:
    """Per group, the largest ratio whose measured drop stays within `max_drop`
    (linear interpolation between the measured ratios; PaddleSlim's
    ``get_ratios_by_loss``). Groups whose smallest ratio already drops more are
    left out.

    Args:
        sensitivities (dict): ``{group: {ratio: drop}}`` from `ChannelPruner.sensitive`.
        max_drop (float): the largest acceptable relative drop.

    Returns:
        dict: group name -> ratio.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> fw.slim.ratios_by_sensitivity({"conv": {0.1: 0.0, 0.2: 0.01, 0.3: 0.05}}, 0.03)
        {'conv': 0.25}
    """
    out = {}
    for name, curve in sensitivities.items():
        pts = sorted((float(r), float(d)) for r, d in curve.items())
        best, prev = None, (0.0, 0.0)
        for r, d in pts:
            if d > max_drop:
                r0, d0 = prev
                if d != d0 and prev is not None:
                    best = r0 + (max_drop - d0) * (r - r0) / (d - d0)
                break
            best, prev = r, (r, d)
        if best is not None and best > 0 and math.isfinite(best):
            out[name] = best
    return out


class L1NormFilterPruner(ChannelPruner):
    """Structured filter pruning scored by the L1 norm of each filter (PaddleSlim's name): a
    `ChannelPruner` with ``criterion="l1"``.

    The filters with the lowest scores are removed, with every layer that shares their
    channels pruned alike, so the model stays consistent and gets smaller.

    Args:
        model (Layer): the layer to prune, in place.
        inputs (list|InputSpec|Tensor): the input shape (``[1, 3, 224, 224]``), or a list
            of shapes, InputSpecs or example tensors.
        **kw: `ChannelPruner`'s other arguments (``prune_linear``, ``round_to``).

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(3, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
        >>> pruner = fw.slim.L1NormFilterPruner(net, [1, 3, 8, 8])
        >>> _ = pruner.prune_vars({"0.weight": 0.5}, axis=0)
        >>> net[0].weight.shape, net[2].weight.shape
        ([4, 3, 3, 3], [4, 4, 3, 3])
    """

    def __init__(self, model, inputs, **kw):
        super().__init__(model, inputs, criterion="l1", **kw)


class L2NormFilterPruner(ChannelPruner):
    """Structured filter pruning scored by the L2 norm of each filter (PaddleSlim's name): a
    `ChannelPruner` with ``criterion="l2"``.

    The filters with the lowest scores are removed, with every layer that shares their
    channels pruned alike, so the model stays consistent and gets smaller.

    Args:
        model (Layer): the layer to prune, in place.
        inputs (list|InputSpec|Tensor): the input shape (``[1, 3, 224, 224]``), or a list
            of shapes, InputSpecs or example tensors.
        **kw: `ChannelPruner`'s other arguments (``prune_linear``, ``round_to``).

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(3, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
        >>> pruner = fw.slim.L2NormFilterPruner(net, [1, 3, 8, 8])
        >>> _ = pruner.prune_vars({"0.weight": 0.5}, axis=0)
        >>> net[0].weight.shape, net[2].weight.shape
        ([4, 3, 3, 3], [4, 4, 3, 3])
    """

    def __init__(self, model, inputs, **kw):
        super().__init__(model, inputs, criterion="l2", **kw)


class FPGMFilterPruner(ChannelPruner):
    """Structured filter pruning scored by FPGM, the distance to the
    geometric median of the layer's filters (He et al. 2019), (PaddleSlim's name): a
    `ChannelPruner` with ``criterion="fpgm"``.

    The filters with the lowest scores are removed, with every layer that shares their
    channels pruned alike, so the model stays consistent and gets smaller.

    Args:
        model (Layer): the layer to prune, in place.
        inputs (list|InputSpec|Tensor): the input shape (``[1, 3, 224, 224]``), or a list
            of shapes, InputSpecs or example tensors.
        **kw: `ChannelPruner`'s other arguments (``prune_linear``, ``round_to``).

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Conv2D(3, 8, 3), fw.nn.ReLU(), fw.nn.Conv2D(8, 4, 3))
        >>> pruner = fw.slim.FPGMFilterPruner(net, [1, 3, 8, 8])
        >>> _ = pruner.prune_vars({"0.weight": 0.5}, axis=0)
        >>> net[0].weight.shape, net[2].weight.shape
        ([4, 3, 3, 3], [4, 4, 3, 3])
    """

    def __init__(self, model, inputs, **kw):
        super().__init__(model, inputs, criterion="fpgm", **kw)
