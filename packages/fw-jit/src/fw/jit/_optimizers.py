"""``opt.step()`` inside a traced function: the optimizer's update as IR.

fw-nn's optimizers keep their state in flat buffers (`fw.optimizer._flat`):
each parameter's moments are views into one buffer per state, scalar state
(beta powers, counters) one slot per parameter. The static step uses that very
state, so eager and static steps interleave and ``state_dict`` sees both:

- each state view is wrapped as a tensor named like the optimizer's state_dict
  key (``"linear_0.w_0_moment1_0"``) and captured by the program;
- per parameter with a gradient, the update op of the optimizer (fw-core family
  ``optimizer``: ``sgd``, ``momentum``, ``adam``, …) is emitted with the group's
  attributes, on the effective gradient (gradient clipping and regularization
  written with fw ops, as the eager path does them on buffers);
- the new parameter and state values are recorded as state updates: the
  executor writes them into the captured views in place after each run;
- the learning rate is a one-element float64 tensor (as the eager kernels get
  it) refreshed from ``opt.get_lr()`` before each run, so schedulers work.

The program is valid while the optimizer keeps its flat groups (a guard: a
rebuilt group — new parameters, a dtype change — traces again).
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError
from fw.core.tensor import wrap
from fw.jit import _context
from fw.jit.errors import ConversionError

__all__ = ["emit_step", "parameters_of"]


def parameters_of(opt) -> list:
    return list(getattr(opt, "_parameter_list", None) or [])


def _views(opt) -> dict:
    d = opt.__dict__.get("_fw_jit_views")
    if d is None:
        d = {}
        opt.__dict__["_fw_jit_views"] = d
    return d


def _state_tensor(opt, fg, i, name, label):
    """A Tensor over the state view (cached per group, parameter and state)."""
    views = _views(opt)
    key = (id(fg), i, name)
    t = views.get(key)
    if t is not None and t.__dict__.get("_fw_fg") is fg:
        return t
    if name == "__master__":
        a = fg.master_of(i)
    else:
        a = fg.param_state(i, name)
        root = fg.state.get(name, fg.scalars.get(name))
        if not np.shares_memory(a, root):
            raise UnsupportedError(f"{type(opt).__name__}: its '{name}' state is not a view of "
                                   f"its buffer, so a static training step cannot update it "
                                   f"in place")
    t = wrap(a)
    t.name = label
    t.persistable = True
    t.__dict__["_fw_fg"] = fg
    views[key] = t
    return t


def _lr_tensor(opt, mult, tt):
    """The learning-rate tensor of multiplier `mult` (refreshed before each run)."""
    from fw.jit import _training

    views = _views(opt)
    key = ("lr", float(mult))
    t = views.get(key)
    if t is None:
        t = wrap(np.array([opt.get_lr() * mult], dtype=np.float64))
        t.name = f"{opt._name or type(opt).__name__.lower()}_learning_rate_{len(views)}"
        t.persistable = True
        views[key] = t
        _training.mark_aux(t)
    if not any(x is t for x, _ in tt.lr_tensors):
        def refresh(t=t, mult=mult):
            t._data[0] = opt.get_lr() * mult

        tt.lr_tensors.append((t, refresh))
        tt.pre_run.append(refresh)
    t._data[0] = opt.get_lr() * mult
    return t


def _clip_grads(opt, entries, kind, clip):
    """Effective gradients after clipping, as fw ops (mirrors the eager path)."""
    import fw

    if kind is None:
        return [g for _, _, _, g in entries]
    if kind == "value":
        return [fw.clip(g, clip.min, clip.max) if fg.need_clip else g
                for _, fg, _, g in entries]
    if kind == "norm":
        out = []
        for _, fg, _, g in entries:
            if not fg.need_clip:
                out.append(g)
                continue
            acc = g if g.dtype.itemsize >= 4 else g.astype("float32")
            norm = fw.sqrt(fw.sum(acc * acc).astype("float64"))
            c = float(clip.clip_norm)
            scale = c / fw.maximum(norm, fw.full([], c, dtype="float64"))
            out.append(g * scale.astype(g.dtype))
        return out
    if kind == "global":
        sq = None
        for _, fg, _, g in entries:
            if fg.need_clip:
                acc = g if g.dtype.itemsize >= 4 else g.astype("float32")
                s = fw.sum(acc * acc).astype("float64")
                sq = s if sq is None else sq + s
        if sq is None:
            return [g for _, _, _, g in entries]
        norm = fw.sqrt(sq)
        c = float(clip.clip_norm)
        scale = c / fw.maximum(norm, fw.full([], c, dtype="float64"))
        if getattr(clip, "auto_skip_clip", False):
            scale = fw.where(norm <= c, fw.full([], 1.0, dtype="float64"), scale)
        return [g * scale.astype(g.dtype) if fg.need_clip else g for _, fg, _, g in entries]
    fn, ln = _context.user_frame(3)
    raise ConversionError(f"gradient clipping {type(clip).__name__} has no static form",
                          fn, ln, construct="opt.step()",
                          hint="use fw.nn.ClipGradByValue/ByNorm/ByGlobalNorm in to_static "
                               "training, or run this step eagerly")


def _regularize(p_val, g, reg):
    import fw

    if reg is None:
        return g
    if reg[0] == "l2":
        return g + reg[1] * p_val
    if reg[0] == "l1":
        return g + reg[1] * fw.sign(p_val)
    return reg[1](p_val, g)


def emit_step(opt, tt) -> None:
    """Emit ``opt.step()`` into the program being traced (see the module doc)."""
    from fw.core.dispatch import invoke
    from fw.core.ops import OPS
    from fw.core.ops.optimizer import UPDATE_OPS

    b = tt.trace.builder
    flat = opt._groups()
    entries = []  # (param, flat group, index, grad Value)
    for fg in flat:
        for i, p in enumerate(fg.params):
            g = tt.grad_for_step(p)
            if g is not None:
                entries.append((p, fg, i, g))
    if not entries:
        return
    clip = opt._grad_clip
    kind = None if clip is None else opt._clip_kind(clip)
    gs = _clip_grads(opt, entries, kind, clip)
    op = OPS[opt._op]
    state_in, _outs = UPDATE_OPS[opt._op]
    for (p, fg, i, _g), g in zip(entries, gs):
        master = None
        if fg.master is not None:
            master = _state_tensor(opt, fg, i, "__master__", f"{p.name}_master_0")
            pv = b.current_value(master)
            g = g.astype("float32")
        else:
            pv = b.current_value(p)
        g = _regularize(pv, g, fg.reg)
        lr = b.current_value(_lr_tensor(opt, fg.lr_mult, tt))
        states = {}
        by_input = {}
        for name, inp, _kind, _init in fg.specs:
            t = _state_tensor(opt, fg, i, name, f"{p.name}_{name}_0")
            states[name] = t
            by_input[inp] = name
        args = [pv, g, lr] + [b.current_value(states[by_input[s]]) if s in by_input else None
                              for s in state_in]
        attrs = dict(op.attrs)
        attrs.update(fg.attrs)
        res = invoke(op, args, attrs)
        res = res if isinstance(res, tuple) else (res,)
        if master is not None:
            b.record_update(master, res[0])
            b.record_update(p, res[0].astype(p.dtype))
        else:
            b.record_update(p, res[0])
        for k, s in enumerate(state_in, 1):
            if s in by_input:
                b.record_update(states[by_input[s]], res[k])
    # scalar state (beta powers) of a group stays uniform when every parameter of the
    # group took this step; otherwise the optimizer must re-check it after the run
    stepped: dict = {}
    for _p, fg, _i, _g in entries:
        stepped[id(fg)] = stepped.get(id(fg), 0) + 1
    groups = [fg for fg in flat if fg.scalars and stepped.get(id(fg), 0) != len(fg.params)]
    if groups:
        def resync(_hidden, groups=groups):
            for fg in groups:
                fg.resync()

        tt.post_run.append(resync)

    def same_groups(opt=opt, flat=flat):
        return opt._flat is flat

    tt.guards.append(same_groups)
