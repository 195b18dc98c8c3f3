"""``opt.step()`` inside a traced function: the optimizer's update as IR.

Built from fw-nn's public contract, ``opt.update_plan()`` (see fw-nn's
optimizer README): its groups hand out the optimizer's live state, views into
its flat buffers (moments, one slot per parameter for beta powers). The static
step uses that very state, so eager and static steps interleave and
``state_dict`` sees both:

- each state view is wrapped as a tensor named like the optimizer's state_dict
  key (``"linear_0.w_0_moment1_0"``) and captured by the program;
- per parameter with a gradient, the update op of the optimizer (fw-core family
  ``optimizer``: ``sgd``, ``momentum``, ``adam``, …) is emitted with the group's
  attributes, on the effective gradient (the optimizer's gradient clipping and
  regularization, written with fw ops in fw-nn);
- the new parameter and state values are recorded as state updates: the
  executor writes them into the captured views in place after each run;
- the learning rate is a one-element float64 tensor (as the eager kernels get
  it) refreshed from ``opt.get_lr()`` before each run, so schedulers work.

The program is valid while the optimizer's ``state_generation`` is the plan's
(a guard: rebuilt state — new parameters, a dtype change — traces again).
"""

from __future__ import annotations

import numpy as np

from fw.core.tensor import wrap
from fw.jit import _context
from fw.jit.errors import ConversionError

__all__ = ["emit_step", "parameters_of"]


def parameters_of(opt) -> list:
    return list(getattr(opt, "_parameter_list", None) or [])


def _views(opt, generation) -> dict:
    """The state tensors made for `opt` under its current state generation."""
    d = opt.__dict__.get("_fw_jit_views")
    if d is None or d["generation"] != generation:
        d = {"generation": generation}  # older views are of buffers no longer in use
        opt.__dict__["_fw_jit_views"] = d
    return d


def _state_tensor(views, key, array, label):
    """A persistable Tensor over a state view (cached per group, parameter, state)."""
    t = views.get(key)
    if t is None:
        t = wrap(array)
        t.name = label
        t.persistable = True
        views[key] = t
    return t


def _lr_tensor(opt, plan, mult, tt):
    """The learning-rate tensor of multiplier `mult` (refreshed before each run)."""
    views = opt.__dict__.setdefault("_fw_jit_lr", {})
    mult = float(mult)
    t = views.get(mult)
    if t is None:
        t = wrap(np.array([opt.get_lr() * mult], dtype=np.float64))
        t.name = f"{plan.name}_learning_rate_{len(views)}"
        t.persistable = True
        views[mult] = t
        _context.mark_aux(t)
    if not any(x is t for x, _ in tt.lr_tensors):
        def refresh(t=t, mult=mult):
            t._data[0] = opt.get_lr() * mult

        tt.lr_tensors.append((t, refresh))
        tt.pre_run.append(refresh)
    t._data[0] = opt.get_lr() * mult
    return t


def _clip_grads(plan, entries):
    """Effective gradients after the optimizer's clipping (fw ops, from fw-nn)."""
    if plan.clip is not None and not plan.clip_traceable:
        fn, ln = _context.user_frame(3)
        raise ConversionError(f"gradient clipping {type(plan.clip).__name__} has no static "
                              f"form", fn, ln, construct="opt.step()",
                              hint="use fw.nn.ClipGradByValue/ByNorm/ByGlobalNorm in "
                                   "to_static training, or run this step eagerly")
    return plan.clip_grads([(p, g) for p, _, _, g in entries])


def emit_step(opt, tt) -> None:
    """Emit ``opt.step()`` into the program being traced (see the module doc)."""
    b = tt.trace.builder
    plan = opt.update_plan()
    entries = []  # (param, group index, index in group, grad Value)
    for gi, grp in enumerate(plan.groups):
        for i, p in enumerate(grp.params):
            g = tt.grad_for_step(p)
            if g is not None:
                entries.append((p, gi, i, g))
    if not entries:
        return
    views = _views(opt, plan.generation)
    gs = _clip_grads(plan, entries)
    for (p, gi, i, _g), g in zip(entries, gs):
        grp = plan.groups[gi]
        master = None
        if grp.multi_precision:
            master = _state_tensor(views, (gi, i, None), grp.master_view(i),
                                   f"{p.name}_master_0")
            pv = b.current_value(master)
            g = g.astype("float32")
        else:
            pv = b.current_value(p)
        g = grp.regularize(pv, g)
        lr = b.current_value(_lr_tensor(opt, plan, grp.lr_mult, tt))
        states = {name: _state_tensor(views, (gi, i, name), grp.state_view(i, name),
                                      f"{p.name}_{name}_0")
                  for name in grp.states}
        new_p, new_states = grp.update(pv, g, lr, {name: b.current_value(t)
                                                   for name, t in states.items()})
        if master is not None:
            b.record_update(master, new_p)
            b.record_update(p, new_p.astype(p.dtype))
        else:
            b.record_update(p, new_p)
        for name, v in new_states.items():
            b.record_update(states[name], v)
    # scalar state (beta powers) of a group stays uniform when every parameter of the
    # group took this step; otherwise the optimizer must re-check it after the run
    stepped: dict = {}
    for _p, gi, _i, _g in entries:
        stepped[gi] = stepped.get(gi, 0) + 1
    groups = [grp for gi, grp in enumerate(plan.groups)
              if grp.scalar_state and stepped.get(gi, 0) != len(grp.params)]
    if groups:
        def resync(_hidden, groups=groups):
            for grp in groups:
                grp.resync()

        tt.post_run.append(resync)

    def same_state(opt=opt, generation=plan.generation):
        return opt.state_generation == generation

    tt.guards.append(same_state)
