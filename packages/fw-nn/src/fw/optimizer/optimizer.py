"""`Optimizer`: the base of every optimizer (Paddle's ``paddle.optimizer.Optimizer``).

An optimizer subclass declares its update op (from fw-core's op table, family
``optimizer``) and its state; this base does the rest:

- parameters and parameter groups (``parameters=[{"params": ..., "learning_rate":
  0.1, "weight_decay": ...}, ...]``; a group's ``learning_rate`` scales the global
  rate), per-parameter multipliers (``ParamAttr(learning_rate=...)``), regularizers
  (a parameter's own, else its group's, else ``weight_decay``), gradient clipping
  (``fw.nn.ClipGradByValue/ByNorm/ByGlobalNorm``), ``multi_precision`` master weights;
- the fused eager update: parameters are packed into flat buffers per group of
  equal dtype and hyper-parameters (see `_flat.FlatGroup`) and each group is
  updated by ONE call of the op's cpu kernel writing in place (``out=``), after
  clipping and regularization done as whole-buffer NumPy operations;
- ``state_dict()``/``set_state_dict()`` keyed like Paddle (``"<param name>_<state>_0"``,
  ``"master_weights"``, ``"LR_Scheduler"``), round-tripping through fw.save/fw.load;
- `update_plan()`: the update as other packages build it (fw.jit's static training
  programs): the op, the live flat-buffer state, clipping and regularization as fw
  ops (`_update_plan.UpdatePlan`); `_functional_update`: the same update as op
  calls on one parameter with its own state (tests of the fused path).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.core.ir.core import Value, current_builder, value_hooks
from fw.core.ops import OPS
from fw.core.ops.optimizer import UPDATE_OPS
from fw.core.tensor import Tensor, wrap
from fw.optimizer._flat import FlatGroup
from fw.optimizer._update_plan import UpdatePlan
from fw.optimizer.lr import LRScheduler

__all__ = ["Optimizer"]

_LOW = (np.dtype(_dt.float16.np), np.dtype(_dt.bfloat16.np))
_LANES = 8  # float32 lanes of fw-core's native update loops (csrc/fused_simd.hpp: W)


def _as_float(v, what):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise InvalidArgumentError(f"{what} must hold one value, got shape {v.shape}")
        return float(v.item())
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise TypeError(f"{what} must be a float, got {type(v).__name__}")
    return float(v)


def _regularizer(wd):
    """float -> L2Decay; a regularizer stays; None/0 -> None."""
    if wd is None:
        return None
    if isinstance(wd, (int, float, np.floating)) and not isinstance(wd, bool):
        from fw.regularizer import L2Decay

        return L2Decay(float(wd)) if wd != 0 else None
    if isinstance(wd, Tensor):
        from fw.regularizer import L2Decay

        return L2Decay(float(wd.item()))
    if hasattr(wd, "kind") or callable(wd):
        return wd
    raise TypeError(f"weight_decay must be a float or a regularizer (fw.regularizer.L1Decay/"
                    f"L2Decay), got {type(wd).__name__}")


def _root(a):
    """The array owning `a`'s memory (views share their base's)."""
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    return a


def _reg_key(reg):
    if reg is None:
        return None
    kind = getattr(reg, "kind", None)
    if kind in ("l1", "l2"):
        c = float(reg.coeff)
        return None if c == 0 else (kind, c)
    return ("custom", reg)


class Optimizer:
    """Base class of fw's optimizers (`SGD`, `Adam`, ...).

    The dynamic-mode use is ``loss.backward(); opt.step(); opt.clear_grad()``. The
    parameters of a group are updated together by one fused kernel over flat buffers;
    `state_dict` / `set_state_dict` save and restore the per-parameter state (keyed by
    parameter names, as in Paddle).

    Args:
        learning_rate (float|LRScheduler, optional): the step size, or a scheduler from
            ``fw.optimizer.lr``. Default: 0.001.
        parameters (list|tuple, optional): the parameters to update (Tensors), or a list of
            parameter-group dicts ``{"params": [...], <hyper-parameter>: value}``.
            Default: None.
        weight_decay (float|WeightDecayRegularizer, optional): an L2 coefficient or an
            ``fw.regularizer`` regularizer, for parameters that have none of their own.
            Default: None.
        grad_clip (ClipGradBase, optional): ``fw.nn.ClipGradByValue``, ``ClipGradByNorm``
            or ``ClipGradByGlobalNorm``. Default: None.
        name (str, optional): unused; Paddle's name. Default: None.

    Examples:
        >>> import fw
        >>> net = fw.nn.Linear(2, 1)
        >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=[
        ...     {"params": [net.weight]},
        ...     {"params": [net.bias], "learning_rate": 0.5},   # a factor on the global rate
        ... ])
        >>> isinstance(opt, fw.optimizer.Optimizer), len(opt.get_param_groups())
        (True, 2)
    """

    _op = None  # the update op's name
    # (state name in state_dict, op input name, kind, init(hp) -> value, enabled(hp) -> bool)
    _states: tuple = ()
    _default_hp: dict = {}

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None,
                 name=None):
        if learning_rate is None:
            raise ValueError(f"{type(self).__name__}: learning_rate must not be None")
        if isinstance(learning_rate, LRScheduler):
            self._learning_rate = learning_rate
        else:
            self._learning_rate = _as_float(learning_rate,
                                            f"{type(self).__name__}: 'learning_rate'")
        if grad_clip is not None and not callable(grad_clip):
            raise TypeError(f"{type(self).__name__}: 'grad_clip' must be a gradient clipping "
                            f"strategy (fw.nn.ClipGradByGlobalNorm, ...), got "
                            f"{type(grad_clip).__name__}")
        self.regularization = _regularizer(weight_decay)
        self._grad_clip = grad_clip
        self._name = name
        self._multi_precision = getattr(self, "_multi_precision", False)
        self._default_dict = {"weight_decay": weight_decay, "grad_clip": grad_clip}
        self._default_dict.update(self._default_hp)
        self._param_groups = []
        self._parameter_list = None
        self._flat = None
        self._generation = 0  # counts (re)builds and drops of the flat groups
        self._loose = []  # parameters outside the flat groups (0-size)
        if parameters is not None:
            if isinstance(parameters, Tensor):
                raise TypeError(f"{type(self).__name__}: 'parameters' must be a list of "
                                f"Tensors or of parameter-group dicts, not a single Tensor")
            parameters = list(parameters)
            if parameters and isinstance(parameters[0], dict):
                for g in parameters:
                    self._add_param_group(dict(g))
            else:
                self._add_param_group({"params": parameters})
            self._parameter_list = [p for g in self._param_groups for p in g["params"]]
        self._warned_low = False
        # ids of the parameters a partial step (`step(parameters=...)`) updated since
        # the last whole `step()`: that step completes the round and skips them
        self._round = set()
        self._where = None  # (generation, {id(param): (flat group, index)})

    # ------------------------------------------------------------ parameter groups
    def _add_param_group(self, group):
        if "params" not in group:
            raise ValueError(f"{type(self).__name__}: a parameter group needs 'params'")
        ps = group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        seen = {id(p) for g in self._param_groups for p in g["params"]}
        for p in ps:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got "
                                f"{type(p).__name__}")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: parameter '{p.name}' appears in more "
                                 f"than one parameter group")
            seen.add(id(p))
        group["params"] = ps
        self._param_groups.append(group)
        self._parameter_list = [p for g in self._param_groups for p in g["params"]]
        self._invalidate()

    def add_param_group(self, param_group):
        """Add a parameter group: a dict with ``"params"`` and optional hyper-parameters
        (for example a layer unfrozen during fine-tuning).

        Args:
            param_group (dict): ``{"params": [...], <hyper-parameter>: value}``.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> a, b = fw.nn.Linear(2, 2), fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=a.parameters())
            >>> opt.add_param_group({"params": b.parameters(), "learning_rate": 0.5})
            >>> len(opt.get_param_groups()), len(opt.get_parameter_list())
            (2, 4)
        """
        self._add_param_group(dict(param_group))

    # The parameter ABI of the other fw packages (fw-distributed's ZeRO and fleet
    # optimizers, fw-slim's ASP ``decorate``): they read and narrow what an optimizer
    # updates through these three methods, never through its private fields. Paddle
    # keeps the same data in ``_parameter_list``/``_param_groups``, which its own
    # sharding code reaches into; fw names it instead (fw-nn README, "The other half").
    def get_parameter_list(self):
        """The parameters this optimizer updates, in order (a new list), or None
        when it was made without ``parameters`` (static-graph style, where
        ``minimize`` picks them from the program).

        Returns:
            list[Tensor] | None: the parameters of every group, group by group.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> w = fw.create_parameter([2], "float32")
                >>> opt = fw.optimizer.SGD(0.1, parameters=[w])
                >>> opt.get_parameter_list()[0] is w
                True
                >>> print(fw.optimizer.SGD(0.1).get_parameter_list())
                None
        """
        return None if self._parameter_list is None else list(self._parameter_list)

    def get_param_groups(self) -> list:
        """The parameter groups: one dict per group with ``"params"`` (a new list)
        and the group's own hyper-parameters (copies: editing them changes nothing
        until `set_param_groups`).

        Returns:
            list[dict]: the groups, in order; empty without parameters.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> a, b = fw.create_parameter([2], "float32"), fw.create_parameter([3], "float32")
                >>> opt = fw.optimizer.SGD(0.1, parameters=[{"params": [a]},
                ...                                        {"params": [b], "learning_rate": 0.5}])
                >>> [len(g["params"]) for g in opt.get_param_groups()]
                [1, 1]
                >>> opt.get_param_groups()[1]["learning_rate"]
                0.5
        """
        return [dict(g, params=list(g["params"])) for g in self._param_groups]

    def set_param_groups(self, groups) -> None:
        """Replace the parameter groups (e.g. narrow them to the parameters this rank
        owns under ZeRO sharding). Each group is checked as in `add_param_group`;
        the optimizer state of parameters that stay is kept (the fused flat buffers
        are rebuilt on the next step), that of dropped parameters is forgotten.

        Args:
            groups (list[dict]): the new groups, each with ``"params"`` and optional
                hyper-parameters (as `get_param_groups` returns them).

        Returns:
            None.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> a, b = fw.create_parameter([2], "float32"), fw.create_parameter([3], "float32")
                >>> opt = fw.optimizer.SGD(0.1, parameters=[a, b])
                >>> opt.set_param_groups([dict(g, params=g["params"][:1])
                ...                       for g in opt.get_param_groups()])
                >>> len(opt.get_parameter_list())
                1
        """
        if not isinstance(groups, (list, tuple)) or \
                not all(isinstance(g, dict) for g in groups):
            raise TypeError(f"{type(self).__name__}.set_param_groups: groups must be a list "
                            f"of dicts with 'params', got {type(groups).__name__}")
        old_groups, old_list = self._param_groups, self._parameter_list
        self._param_groups = []
        try:
            for g in groups:
                self._add_param_group(dict(g))
        except Exception:
            self._param_groups, self._parameter_list = old_groups, old_list
            raise
        self._parameter_list = [p for g in self._param_groups for p in g["params"]]
        self._invalidate()

    def _hp(self, gi) -> dict:
        hp = dict(self._default_dict)
        hp.update({k: v for k, v in self._param_groups[gi].items() if k != "params"})
        return hp

    # ------------------------------------------------------------ learning rate
    def get_lr(self) -> float:
        """The current global learning rate (the scheduler's value when one drives it).

        Returns:
            float, the learning rate.

        Examples:
            >>> import fw
            >>> sched = fw.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5)
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=sched, parameters=net.parameters())
            >>> sched.step()
            >>> opt.get_lr()
            0.05
        """
        lr = self._learning_rate
        return lr() if isinstance(lr, LRScheduler) else lr

    def set_lr(self, value):
        """Set a float learning rate (an error while a scheduler drives the rate).

        Args:
            value (float): the new learning rate.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> opt.set_lr(0.01)
            >>> opt.get_lr()
            0.01
        """
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError(f"{type(self).__name__}.set_lr: the learning rate is driven by "
                               f"an LRScheduler; use set_lr_scheduler or the scheduler")
        self._learning_rate = _as_float(value, f"{type(self).__name__}.set_lr: 'value'")

    def set_lr_scheduler(self, scheduler):
        """Let a scheduler drive the learning rate from now on.

        Args:
            scheduler (LRScheduler): a scheduler from ``fw.optimizer.lr``.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> opt.set_lr_scheduler(fw.optimizer.lr.ExponentialDecay(learning_rate=0.5, gamma=0.9))
            >>> opt.get_lr()
            0.5
        """
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"{type(self).__name__}.set_lr_scheduler: expected an "
                            f"LRScheduler, got {type(scheduler).__name__}")
        self._learning_rate = scheduler

    # ------------------------------------------------------------ per-parameter settings
    def _lr_mult(self, p, hp) -> float:
        """The parameter's multiplier of the global rate: its ParamAttr learning_rate
        times its group's ``learning_rate`` (a scale, as in Paddle)."""
        attr = getattr(p, "optimize_attr", None)
        m = float(attr.get("learning_rate", 1.0)) if attr else 1.0
        return m * _as_float(hp.get("learning_rate", 1.0), "a parameter group's learning_rate")

    def _param_reg(self, p, hp, group):
        """The regularizer of `p`: its own (ParamAttr), else its group's
        ``weight_decay``, else the optimizer's."""
        own = getattr(p, "regularizer", None)
        if own is not None:
            return own
        return _regularizer(hp.get("weight_decay"))

    def _extra_key(self, p, hp):
        """Per-parameter values an optimizer passes to its op (AdamW's lr_ratio...)."""
        return ()

    def _state_specs(self, hp):
        out = []
        for st in self._states:
            name, inp, kind, init = st[:4]
            enabled = st[4](hp) if len(st) > 4 else True
            if enabled:
                out.append((name, inp, kind, init))
        return out

    # ------------------------------------------------------------ flat groups
    def _invalidate(self):
        if self._flat is not None:
            saved = self._export_state()
            self._unpack()
            self._flat = None
            self._generation += 1
            self._carry = saved

    def _unpack(self):
        """Give every packed parameter (and adopted gradient) its own array again."""
        for fg in self._flat or ():
            for i, p in enumerate(fg.params):
                if p._data is fg.pviews[i]:
                    p._data = p._data.copy()
                g = p._grad
                if g is not None and g._data is fg.gviews[i]:
                    g._data = g._data.copy()

    def _groups(self):
        flat = self._flat
        if flat is None:
            flat = self._build()
        else:
            for fg in flat:
                if not fg.check_storage():
                    self._invalidate()
                    flat = self._build()
                    break
        return flat

    def _build(self):
        if self._parameter_list is None:
            raise ValueError(f"{type(self).__name__}: no parameters to optimize; pass "
                             f"parameters=model.parameters() (required in dynamic mode)")
        roots: dict = {}
        for p in self._parameter_list:
            roots.setdefault(id(_root(p._data)), []).append(id(p))
        shared = {i for ids in roots.values() if len(ids) > 1 for i in ids}
        buckets: dict = {}
        self._loose = []
        for gi, group in enumerate(self._param_groups):
            hp = self._hp(gi)
            for p in group["params"]:
                a = p._data
                if a.size == 0:
                    del a
                    self._loose.append(p)
                    continue
                if a.dtype.kind not in "fV" or (a.dtype.kind == "V" and a.dtype not in _LOW):
                    raise InvalidArgumentError(
                        f"{type(self).__name__}: parameter '{p.name}' has dtype "
                        f"{p.dtype.name}; only floating parameters can be optimized")
                master = bool(self._multi_precision) and a.dtype in _LOW
                if a.dtype in _LOW and not master and not self._warned_low:
                    self._warned_low = True
                    warnings.warn(f"{type(self).__name__}: updating {p.dtype.name} parameters "
                                  f"without float32 master weights loses precision; pass "
                                  f"multi_precision=True", stacklevel=4)
                reg = self._param_reg(p, hp, group)
                key = (gi, type(a), a.dtype.str, master, self._lr_mult(p, hp), _reg_key(reg),
                       bool(getattr(p, "need_clip", True)), self._extra_key(p, hp))
                buckets.setdefault(key, []).append(p)
                del a  # the flat group checks that nothing else holds the array
        flat = []
        for key, ps in buckets.items():
            gi = key[0]
            hp = self._hp(gi)
            specs = [(name, kind, (lambda fg, f=init, h=hp: f(h, fg)) if callable(init)
                      else init) for name, inp, kind, init in self._state_specs(hp)]
            fg = FlatGroup(ps, key, specs, key[3], shared)
            fg.hp = hp
            fg.gi = gi
            fg.lr_mult = key[4]
            fg.reg = key[5]
            fg.need_clip = key[6]
            fg.extra = key[7]
            fg.specs = self._state_specs(hp)
            fg.attrs = self._op_attrs(hp, fg)
            flat.append(fg)
        self._flat = flat
        self._generation += 1
        carry = getattr(self, "_carry", None)
        if carry:
            self._import_state(carry)
        self._carry = None
        return flat

    @property
    def state_generation(self) -> int:
        """A number that changes whenever the flat state is rebuilt (new parameters, a
        parameter's dtype, shape or device changed): an `UpdatePlan` made under another
        generation is stale.

        Returns:
            int, the generation.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> g = opt.state_generation
            >>> opt.add_param_group({"params": fw.nn.Linear(2, 1).parameters()})
            >>> _ = opt.update_plan()
            >>> opt.state_generation != g
            True
        """
        return self._generation

    def update_plan(self) -> UpdatePlan:
        """The update as other fw packages build it (to_static, distributed): the op, the
        state views and the clipping (``fw.optimizer._update_plan``). Packs the parameters
        into the flat buffers first if they are not yet.

        Returns:
            UpdatePlan, the description of this optimizer's update.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> plan = opt.update_plan()
            >>> type(plan).__name__
            'UpdatePlan'
        """
        return UpdatePlan(self, self._groups())

    # ------------------------------------------------------------ the op
    def _op_attrs(self, hp, fg) -> dict:
        """The update op's attributes for a flat group."""
        return {}

    def _kernel(self, fg):
        op = OPS[self._op]
        if type(fg.flat) is np.ndarray:
            return op.kernels.get("cpu") or op.reference
        from fw.core import place as _pl

        be = _pl.backend_of(fg.flat)
        kern = op.kernels.get(be.name) or op.reference
        got = _DEVICE_UPDATES.get((kern, be))  # (inspect.signature costs ~20 us a step)
        if got is None:
            got = _DEVICE_UPDATES[(kern, be)] = _device_update(kern, be)
        return got

    def _run(self, fg, kern, P, G, lr, i0, i1, o0, o1):
        """Update parameters i0..i1 (elements o0..o1 of the buffers) in one call."""
        views = {name: st[o0:o1] for name, st in fg.state.items()}
        scal = {name: sc[i0:i0 + 1] for name, sc in fg.scalars.items()}
        res = self._call_update(fg, kern, P[o0:o1], G[o0:o1], lr, views, scal,
                                self._kernel_kw(fg, i0, i1, o0))
        for name, v in res.items():
            fg.scalars[name][i0:i1] = v

    def _call_update(self, fg, kern, p, g, lr, views, scal, kw):
        """One kernel call in place on `p` and the state `views`; returns the new
        scalar state {name: value}."""
        state_in, outs = UPDATE_OPS[self._op]
        by_input = {inp: (name, kind) for name, inp, kind, _ in fg.specs}
        args = [p, g, np.array([lr], dtype=np.float64)]
        out = [p]
        scalar_out = []
        for k, inp in enumerate(state_in, 1):
            spec = by_input.get(inp)
            if spec is None:
                args.append(None)
                out.append(None)
                continue
            name, kind = spec
            if kind == "tensor":
                a = views[name]
                args.append(a)
                out.append(a)
            else:
                args.append(scal[name])
                out.append(None)
                scalar_out.append((k, name))
        res = kern(*args, **fg.attrs, **kw, out=tuple(out))
        return {name: res[k].reshape(-1)[0] for k, name in scalar_out}

    def _run_partial(self, fg, kern, P, G, lr, i0, i1, o0, o1):
        """`_run` for a partial step, bit-identical to the whole-group call: the native
        kernels compute full SIMD blocks and the masked tail with differently
        contracted (FMA) code, so each element must be computed by the variant the
        whole-group call uses — whole blocks of `_LANES` counted from the group's
        start, the group's last ``n % _LANES`` elements as the tail. Blocks the run
        covers only in part are computed on copies of the whole block and only the
        run's elements are copied back."""
        L = _LANES
        n = fg.n
        scal = {name: sc[i0:i0 + 1].copy() for name, sc in fg.scalars.items()}
        kw = self._kernel_kw(fg, i0, i1, o0)
        res = None
        a = o0
        while a < o1:
            end = o1 if o1 == n else o1 - o1 % L
            if a % L == 0 and end > a:  # whole blocks (and the group's tail): in place
                views = {name: st[a:end] for name, st in fg.state.items()}
                res = self._call_update(fg, kern, P[a:end], G[a:end], lr, views, scal, kw)
                a = end
                continue
            b0 = a - a % L
            b1 = min(b0 + L, n)
            e = min(b1, o1)
            p = P[b0:b1].copy()
            views = {name: st[b0:b1].copy() for name, st in fg.state.items()}
            res = self._call_update(fg, kern, p, G[b0:b1], lr, views, scal, kw)
            P[a:e] = p[a - b0:e - b0]
            for name, st in fg.state.items():
                st[a:e] = views[name][a - b0:e - b0]
            a = e
        for name, v in (res or {}).items():
            fg.scalars[name][i0:i1] = v

    def _kernel_kw(self, fg, i0, i1, o0):
        return {}

    # ------------------------------------------------------------ step
    def _hooked(self, name, args, kwargs=None):
        """While a program is being built, fw-jit decides what a method means
        (fw-core's ``value_hooks.optimizer_call``); NotImplemented runs it eagerly."""
        hook = value_hooks.optimizer_call
        if hook is None or current_builder() is None:
            return NotImplemented
        return hook(self, name, args, kwargs or {})

    def step(self, parameters=None):
        """Update every parameter that has a gradient (one fused update per group).

        With `parameters`, update only those (a *partial* step, fw's extension:
        ``fw.DataParallel(..., overlap_optimizer=opt)`` steps each gradient bucket as
        its all-reduce completes). Partial steps open a round; the next ``step()``
        without `parameters` completes it, updating only the parameters no partial
        step updated, so the round's result is bit-identical to one whole step
        (elementwise rules; per-parameter scalar state such as Adam's beta powers
        advances with its parameter). A parameter may be stepped once per round.
        Clipping by the global norm (``ClipGradByGlobalNorm``) or by a custom
        strategy needs every gradient before any update and is refused with
        `parameters`, as is a step while a static program is being built.

        Args:
            parameters (list[Tensor], optional): the parameters to update now; they
                must be this optimizer's. Default: None (all; completes a round).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> before = net.weight.numpy().copy()
            >>> net(fw.ones([4, 2])).sum().backward()
            >>> opt.step(parameters=[net.weight])     # the weight now, ...
            >>> bool((net.weight.numpy() != before).all())
            True
            >>> opt.step()                            # ... the bias: the round is one step
        """
        if parameters is not None:
            return self._partial_step(parameters)
        r = self._hooked("step", ())
        if r is not NotImplemented:
            return r
        flat = self._groups()
        done = self._round
        active = [fg for fg in flat if fg.gather()]
        if done:
            self._round = set()
            self._update(active, {id(fg): [id(p) not in done for p in fg.params]
                                  for fg in active})
            return
        if not active:
            return
        self._update(active)

    def _partial_step(self, parameters):
        name = f"{type(self).__name__}.step"
        if current_builder() is not None and value_hooks.optimizer_call is not None:
            raise UnsupportedError(f"{name}(parameters=...): a partial step has no static "
                                   f"form; call step() in a program being built")
        if isinstance(parameters, Tensor):
            parameters = [parameters]
        clip = self._grad_clip
        if clip is not None and self._clip_kind(clip) in ("global", "custom"):
            raise UnsupportedError(
                f"{name}(parameters=...): gradient clipping {type(clip).__name__} needs "
                f"every gradient before any update; call step() for all parameters")
        rows = any(kind == "rows" for gi in range(len(self._param_groups))
                   for _, _, kind, _ in self._state_specs(self._hp(gi)))
        if rows or type(self)._kernel_kw is not Optimizer._kernel_kw or \
                type(self).step is not Optimizer.step:
            raise UnsupportedError(f"{name}(parameters=...): {type(self).__name__}'s update "
                                   f"is not elementwise per parameter; call step()")
        flat = self._groups()
        gen, where = self._where or (None, None)
        if gen != self._generation:
            where = {id(p): (fg, i) for fg in flat for i, p in enumerate(fg.params)}
            self._where = (self._generation, where)
        loose = {id(p) for p in self._loose}
        sel: dict = {}
        groups: dict = {}
        ids = []
        for p in parameters:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: 'parameters' must hold Tensors, got "
                                f"{type(p).__name__}")
            k = id(p)
            if k in self._round:
                raise ValueError(
                    f"{name}: parameter '{p.name}' was already updated by a partial step "
                    f"of this round; call step() (no arguments) to complete the round "
                    f"before stepping it again")
            got = where.get(k)
            if got is None:
                if k in loose:
                    continue  # 0-size: nothing to update
                raise ValueError(f"{name}: parameter '{p.name}' (shape {list(p.shape)}) is "
                                 f"not one of this optimizer's parameters")
            fg, i = got
            mask = sel.get(id(fg))
            if mask is None:
                mask = sel[id(fg)] = [False] * len(fg.params)
                groups[id(fg)] = fg
            mask[i] = True
            ids.append(k)
        active = [fg for fg in flat if id(fg) in groups and fg.gather()]
        self._update(active, sel)
        self._round.update(ids)

    def _update(self, active, select=None):
        """Update the groups `active`; `select` ({id(group): a bool per parameter})
        restricts a group to some of its parameters (partial steps and the step
        completing their round)."""
        lr = self.get_lr()
        clip = self._grad_clip
        gscale = None
        if clip is not None:
            gscale = self._global_scale(clip, active)
        for fg in active:
            mask = None if select is None else select.get(id(fg))
            if mask is not None and all(mask):
                mask = None
            if mask is not None and not any(mask):
                continue
            if not fg.all_packed:
                fg.sync_in()
            G = self._effective_grad(fg, clip if fg.need_clip else None, gscale)
            P = fg.master if fg.master is not None else fg.flat
            kern = self._kernel(fg)
            runs = fg.runs(mask)
            glr = lr * fg.lr_mult
            run = self._run if mask is None else self._run_partial
            for i0, i1, o0, o1 in runs:
                run(fg, kern, P, G, glr, i0, i1, o0, o1)
                if fg.master is not None:
                    np.copyto(fg.flat[o0:o1], fg.master[o0:o1], casting="unsafe")
            if fg.scalars and (mask is not None or not (len(runs) == 1 and fg.all_present)):
                fg.resync()
            fg.sync_out()

    # ------------------------------------------------------------ clipping, regularization
    def _clip_kind(self, clip):
        try:
            from fw.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
        except ImportError:  # pragma: no cover - fw.nn always ships them
            return "custom"
        if type(clip) is ClipGradByValue:
            return "value"
        if type(clip) is ClipGradByNorm:
            return "norm"
        if type(clip) is ClipGradByGlobalNorm:
            return "global"
        return "custom"

    def _global_scale(self, clip, active):
        if self._clip_kind(clip) != "global":
            return None
        clipped = [fg for fg in active if fg.need_clip]
        if not clipped:
            return None  # _update hands the clip only to clipped groups: nothing reads it
        sq = 0.0
        for fg in clipped:
            g = fg.gflat
            if g.dtype in _LOW:
                g = g.astype(np.float32)
            sq += float(np.dot(g, g))
        norm = math.sqrt(sq)
        c = clip.clip_norm
        if getattr(clip, "auto_skip_clip", False) and norm <= c:
            return 1.0
        return c / max(norm, c)

    def _effective_grad(self, fg, clip, gscale):
        """The gradient the kernel sees: clipped, regularized, and cast to the master
        dtype. Computed in a workspace: the parameters' .grad stay untouched."""
        g = fg.gflat
        kind = None if clip is None else self._clip_kind(clip)
        if kind == "global" and gscale == 1.0:
            kind = None
        reg = fg.reg
        if kind is None and reg is None and fg.master is None:
            return g
        w = fg.workspace()
        if kind == "value":
            np.copyto(w, g, casting="unsafe")
            np.clip(w, clip.min, clip.max, out=w)
        elif kind == "global":
            np.multiply(g, w.dtype.type(gscale), out=w, casting="unsafe")
        elif kind == "norm":
            np.copyto(w, g, casting="unsafe")
            acc = w if w.dtype.itemsize >= 4 else w.astype(np.float32)
            sq = np.add.reduceat(acc * acc, fg.seg_starts)
            norms = np.sqrt(sq.astype(np.float64))
            c = clip.clip_norm
            scales = c / np.maximum(norms, c)
            w *= np.repeat(scales.astype(w.dtype), fg.sizes)
        elif kind == "custom":
            self._custom_clip(fg, clip, w)
        else:
            np.copyto(w, g, casting="unsafe")
        if reg is not None:
            P = fg.master if fg.master is not None else fg.flat
            if reg[0] == "l2":
                w += reg[1] * P
            elif reg[0] == "l1":
                w += reg[1] * np.sign(P)
            else:
                self._custom_reg(fg, reg[1], w)
        return w

    def _custom_clip(self, fg, clip, w):
        pairs = [(p, wrap(fg.gviews[i]) if fg.present[i] else None)
                 for i, p in enumerate(fg.params)]
        out = clip(pairs)
        for i, (_, g) in enumerate(out):
            o, s = fg.offsets[i], fg.sizes[i]
            if g is None:
                w[o:o + s] = 0
            else:
                np.copyto(w[o:o + s], g.numpy().reshape(-1), casting="unsafe")

    def _custom_reg(self, fg, reg, w):
        for i, p in enumerate(fg.params):
            if not fg.present[i]:
                continue
            o, s = fg.offsets[i], fg.sizes[i]
            g = wrap(w[o:o + s].reshape(fg.shapes[i]).copy())
            r = reg(p, g)
            np.copyto(w[o:o + s], r.numpy().reshape(-1), casting="unsafe")

    # ------------------------------------------------------------ gradients
    def clear_grad(self, set_to_zero=True):
        """Clear the gradients of the parameters.

        Args:
            set_to_zero (bool, optional): True zeroes the gradients in place; False drops
                them (``param.grad`` becomes None). Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> net(fw.ones([1, 2])).sum().backward()
            >>> opt.clear_grad()
            >>> net.weight.grad.tolist()
            [[0.0], [0.0]]
            >>> opt.clear_grad(set_to_zero=False)
            >>> net.weight.grad is None
            True
        """
        r = self._hooked("clear_grad", (set_to_zero,))
        if r is not NotImplemented:
            return r
        if self._parameter_list is None:
            return
        if set_to_zero and self._flat is not None:
            for fg in self._flat:
                fg.zero_grads()
            for p in self._loose:
                p.clear_gradient(True)
            return
        for p in self._parameter_list:
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def _unscale_grads(self, inv_scale) -> bool:
        """Multiply every gradient by `inv_scale` in place (GradScaler.unscale_);
        returns True when any gradient holds inf or NaN."""
        if self._round:
            raise RuntimeError(
                f"{type(self).__name__}: gradients cannot be unscaled (GradScaler) after "
                f"partial steps (step(parameters=...), DataParallel's overlap_optimizer) "
                f"already applied some of them: loss scaling needs every gradient checked "
                f"before any update")
        found = False
        for fg in self._groups():
            if not fg.gather():
                continue
            g = fg.gflat
            if inv_scale != 1.0:
                np.multiply(g, g.dtype.type(inv_scale), out=g, casting="unsafe")
            if not found:
                found = not bool(np.isfinite(g).all())
            fg.write_back_grads()
        return found

    # ------------------------------------------------------------ minimize
    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Apply the gradients already computed by ``loss.backward()``.

        As in Paddle's dynamic mode, `minimize` does not run the backward pass itself.

        Args:
            loss (Tensor): the loss whose gradients were computed.
            startup_program (Program, optional): unused in dynamic mode. Default: None.
            parameters (list, optional): restrict the update to these parameters. Default: None.
            no_grad_set (set, optional): parameters (or their names) to leave unchanged.
                Default: None.

        Returns:
            tuple, ``(None, params_grads)``: the (parameter, gradient) pairs used.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> loss = net(fw.ones([4, 2])).mean()
            >>> loss.backward()
            >>> _, params_grads = opt.minimize(loss)
            >>> len(params_grads)
            2
        """
        r = self._hooked("minimize", (loss, startup_program, parameters, no_grad_set))
        if r is not NotImplemented:
            return r
        if isinstance(loss, Value):
            if value_hooks.minimize is not None:  # fw.static: backward + update ops
                return value_hooks.minimize(self, loss, startup_program, parameters,
                                            no_grad_set)
            raise UnsupportedError(
                f"{type(self).__name__}.minimize on a static program is provided by fw-jit "
                f"(fw.static): pip install fw-jit; in dynamic mode call loss.backward() "
                f"then minimize/step")
        exclude = set()
        for x in no_grad_set or ():
            exclude.add(x if isinstance(x, str) else getattr(x, "name", x))
        if parameters is None and not exclude:
            self.step()
            pl = self._parameter_list or []
            return None, [(p, p.grad) for p in pl if p.grad is not None]
        chosen = list(parameters) if parameters is not None else list(self._parameter_list)
        keep = {id(p) for p in chosen if p.name not in exclude}
        hidden = []
        for p in self._parameter_list or ():
            if id(p) not in keep and p._grad is not None:
                hidden.append((p, p._grad))
                p._grad = None
        try:
            self.step()
        finally:
            for p, g in hidden:
                p._grad = g
        return None, [(p, p.grad) for p in chosen if p.grad is not None and id(p) in keep]

    # ------------------------------------------------------------ state
    def _pnames(self):
        return {id(p): p.name for p in self._parameter_list or ()}

    def state_dict(self) -> dict:
        """The optimizer's state: each parameter's accumulators as
        ``"<param name>_<state>_0"`` tensors, ``"master_weights"`` (with multi_precision) and
        ``"LR_Scheduler"`` (when a scheduler drives the rate). ``fw.save`` writes it.

        Returns:
            dict, state name -> Tensor (or a nested dict).

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
            >>> net(fw.ones([1, 2])).sum().backward()
            >>> opt.step()
            >>> prefix = net.bias.name + "_"
            >>> sorted(k[len(prefix):] for k in opt.state_dict() if k.startswith(prefix))
            ['beta1_pow_acc_0', 'beta2_pow_acc_0', 'moment1_0', 'moment2_0']
        """
        out = {}
        if self._flat is not None:
            masters = {}
            for fg in self._flat:
                for i, p in enumerate(fg.params):
                    for name, _, kind, _ in fg.specs:
                        v = fg.param_state(i, name)
                        if kind == "rows":
                            v = v.copy()
                        out[f"{p.name}_{name}_0"] = wrap(v)
                    if fg.master is not None:
                        masters[p.name] = wrap(fg.master_of(i))
            if masters:
                out["master_weights"] = masters
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        """Load a state saved by `state_dict` (also after ``fw.save``/``fw.load``).

        Entries of parameters this optimizer does not have are ignored, missing ones keep
        their initial values: the keys are parameter names, which match in a new process
        that builds the same model in the same order.

        Args:
            state_dict (dict): what `state_dict` returned.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
            >>> net(fw.ones([1, 2])).sum().backward()
            >>> opt.step()
            >>> state = opt.state_dict()
            >>> twin = fw.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
            >>> twin.set_state_dict(state)
            >>> key = net.bias.name + "_moment1_0"
            >>> bool((twin.state_dict()[key] == state[key]).all())
            True
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.set_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
        sched = state_dict.get("LR_Scheduler")
        if sched is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(sched)
        if self._parameter_list is None:
            return
        flat = self._groups()
        masters = state_dict.get("master_weights") or {}
        for fg in flat:
            for i, p in enumerate(fg.params):
                for name, _, _, _ in fg.specs:
                    key = f"{p.name}_{name}_0"
                    if key in state_dict:
                        fg.set_param_state(i, name, state_dict[key])
                if fg.master is not None and p.name in masters:
                    m = masters[p.name]
                    m = m.numpy() if isinstance(m, Tensor) else np.asarray(m)
                    o, s = fg.offsets[i], fg.sizes[i]
                    np.copyto(fg.master[o:o + s], m.reshape(-1), casting="unsafe")

    load_state_dict = set_state_dict

    def _export_state(self):
        """{id(param): {state: copy}} (+ "__master__") for rebuilding the groups."""
        out = {}
        for fg in self._flat or ():
            for i, p in enumerate(fg.params):
                d = {name: np.array(fg.param_state(i, name), copy=True)
                     for name, _, _, _ in fg.specs}
                if fg.master is not None:
                    d["__master__"] = fg.master_of(i).copy()
                out[id(p)] = d
        return out

    def _import_state(self, saved):
        for fg in self._flat:
            for i, p in enumerate(fg.params):
                d = saved.get(id(p))
                if not d:
                    continue
                for name, _, _, _ in fg.specs:
                    if name in d:
                        fg.set_param_state(i, name, d[name])
                m = d.get("__master__")
                if fg.master is not None and m is not None and m.shape == fg.shapes[i] and \
                        np.array_equal(m.astype(fg.dtype), fg.pviews[i]):
                    # the old master still rounds to the parameter: keep its precision
                    o, s = fg.offsets[i], fg.sizes[i]
                    np.copyto(fg.master[o:o + s], m.reshape(-1))

    # ------------------------------------------------------------ functional form
    def _init_state(self, param, hp=None):
        """The initial state of one parameter: {state name: NumPy array} (scalars as
        one-element arrays) — what fw.jit stores as persistable variables."""
        hp = self._hp(0) if hp is None else hp
        a = param._data if isinstance(param, Tensor) else np.zeros(param.type.shape,
                                                                   param.type.dtype.np)
        dt = np.dtype(np.float32) if a.dtype in _LOW else a.dtype
        out = {}

        class _G:  # what an init function may ask of a group
            n = int(np.prod(a.shape)) if a.shape else 1

        for name, _, kind, init in self._state_specs(hp):
            v = init(hp, _G) if callable(init) else init
            if kind == "tensor":
                out[name] = np.full(a.shape, v, dtype=dt)
            elif kind == "rows":
                out[name] = np.zeros((v,) + tuple(a.shape), dtype=dt)
            elif kind == "count":
                out[name] = np.full([1], v, dtype=np.int64)
            else:
                out[name] = np.full([1], v, dtype=np.float32 if dt in _LOW else dt)
        return out

    def _functional_update(self, param, grad, state, lr, hp=None):
        """One parameter's update as calls of the update op (through
        `fw.core.dispatch.invoke`, so it builds IR on symbolic values).

        Args:
            param, grad: Tensors (or IR Values); `grad` already clipped/regularized.
            state: {state name: Tensor/Value} as `_init_state` gives.
            lr: the effective learning rate (float, Tensor or Value).
            hp: the hyper-parameters (the first group's by default).

        Returns:
            ``(new_param, {state name: new value})``.
        """
        hp = self._hp(0) if hp is None else hp

        class _FG:
            pass

        fg = _FG()
        fg.extra = self._extra_key(param, hp) if isinstance(param, Tensor) else ()
        fg.reg = None
        if not isinstance(lr, (Tensor, Value)):
            lr = np.array([lr], dtype=np.float32)
        return self._invoke_update(param, grad, lr, state, self._state_specs(hp),
                                   self._op_attrs(hp, fg))

    def _invoke_update(self, param, grad, lr, state, specs, attrs):
        """Call the update op (through `invoke`: eager on Tensors, IR on Values) with
        the state inputs named by `specs`; returns ``(new_param, {state: new})``."""
        by_input = {inp: name for name, inp, _, _ in specs}
        state_in, _outs = UPDATE_OPS[self._op]
        args = [param, grad, lr] + [state.get(by_input[i]) if i in by_input else None
                                    for i in state_in]
        op = OPS[self._op]
        full = dict(op.attrs)
        full.update(attrs)
        res = invoke(op, args, full)
        res = res if isinstance(res, tuple) else (res,)
        new_state = {}
        for k, inp in enumerate(state_in, 1):
            if inp in by_input:
                new_state[by_input[inp]] = res[k]
        return res[0], new_state

    def __repr__(self) -> str:
        return f"{type(self).__name__}(learning_rate={self._learning_rate!r})"


_DEVICE_UPDATES: dict = {}  # (kernel, backend) -> its flat-buffer wrapper


def _device_update(kern, be):
    """An update kernel for flat buffers on a device: the cpu kernels write through
    ``out=``, a device's (or the reference) return new arrays, copied into the
    buffers here. The small host inputs (the learning rate, per-parameter scalar state
    such as beta powers) go to the device, and outputs with no buffer (that scalar
    state) come back to the host, where the optimizer keeps them."""

    import inspect

    if "out" in inspect.signature(kern).parameters:
        # a device kernel that updates in place and takes the host scalars (learning
        # rate, beta powers) as they are: no copy to the device, no read back
        def run_inplace(*args, out=(), **kw):
            res = kern(*args, out=tuple(out), **kw)
            res = res if isinstance(res, tuple) else (res,)
            return tuple(r if r is None or type(r) is np.ndarray or
                         (k < len(out) and out[k] is not None) else be.to_numpy(r)
                         for k, r in enumerate(res))

        return run_inplace

    def run(*args, out=(), **kw):
        idx = be.device_index(args[0])
        args = [be.asarray(a, idx) if type(a) is np.ndarray else a for a in args]
        res = kern(*args, **kw)
        res = res if isinstance(res, tuple) else (res,)
        back = []
        for o, r in zip(list(out) + [None] * (len(res) - len(out)), res):
            if o is not None:
                np.copyto(o, r, casting="unsafe")
                back.append(o)
            else:
                back.append(be.to_numpy(r) if r is not None else None)
        return tuple(back)

    return run
