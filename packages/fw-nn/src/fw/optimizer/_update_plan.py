"""`UpdatePlan`: an optimizer's update as other packages may build it.

`Optimizer.update_plan()` returns one. It is the documented contract through
which fw-jit emits ``opt.step()`` into a static program (and fw-distributed
will shard it): the update op, the optimizer's live state (views into its flat
buffers, so a program that writes them in place updates the very state eager
steps and ``state_dict`` use), the gradient clipping and regularization written
with fw ops, and a generation number that changes whenever the flat state is
rebuilt. Nothing here copies state or runs an update by itself.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import UnsupportedError

__all__ = ["UpdateGroup", "UpdatePlan"]


class UpdateGroup:
    """Parameters updated alike: one flat group of the optimizer (same dtype,
    learning-rate multiplier, regularizer and op attributes).

    Attributes:
        params: the parameters (Tensors), in buffer order.
        lr_mult: multiplier of the global learning rate.
        multi_precision: the update runs on float32 master weights
            (`master_view`); the parameter is the master rounded to its dtype.
        states: names of the state (as in ``state_dict`` keys), in no given order.
        scalar_state: the group has per-parameter scalar state (beta powers);
            after a step that skipped some parameters call `resync`.
    """

    def __init__(self, opt, fg):
        self._opt = opt
        self._fg = fg
        self.params = list(fg.params)
        self.lr_mult = fg.lr_mult
        self.multi_precision = fg.master is not None
        self.states = tuple(name for name, _, _, _ in fg.specs)
        self.scalar_state = bool(fg.scalars)

    def state_view(self, i, name):
        """State `name` of parameter `i` as an array view into the optimizer's
        buffer: writing it updates the optimizer. Raises UnsupportedError when that
        state is not a view (so it cannot be updated in place)."""
        fg = self._fg
        a = fg.param_state(i, name)
        if not np.shares_memory(a, fg.state.get(name, fg.scalars.get(name))):
            raise UnsupportedError(f"{type(self._opt).__name__}: its '{name}' state is not a "
                                   f"view of its buffer, so it cannot be updated in place")
        return a

    def master_view(self, i):
        """The float32 master weights of parameter `i` (a view; multi_precision)."""
        return self._fg.master_of(i)

    def regularize(self, param, grad):
        """`grad` plus the group's regularization term of `param` (fw ops)."""
        reg = self._fg.reg
        if reg is None:
            return grad
        if reg[0] == "l2":
            return grad + reg[1] * param
        if reg[0] == "l1":
            import fw

            return grad + reg[1] * fw.sign(param)
        return reg[1](param, grad)

    def update(self, param, grad, lr, states):
        """The update op on one parameter (eager on Tensors, IR on Values).

        Args:
            param, grad: the parameter (its master weights under
                multi_precision) and its effective gradient (clipped, regularized,
                in the parameter's compute dtype).
            lr: the learning rate times `lr_mult`, a one-element float64 tensor.
            states: {state name: value} for every name of `states`.

        Returns:
            ``(new_param, {state name: new value})``.
        """
        opt = self._opt
        return opt._invoke_update(param, grad, lr, states, self._fg.specs, self._fg.attrs)

    def resync(self):
        """Re-check the scalar state after a step that skipped some parameters."""
        self._fg.resync()


class UpdatePlan:
    """What ``opt.step()`` does, for building it elsewhere (see the module doc).

    Attributes:
        op: the update op's name in fw-core's op table (family ``optimizer``).
        name: the optimizer's name (its ``name=`` or its lower-cased class name).
        groups: the `UpdateGroup` s.
        generation: `Optimizer.state_generation` when the plan was made; a plan is
            valid while the optimizer's generation is still this number.
        clip: the ``grad_clip`` strategy, or None.
        clip_traceable: `clip_grads` can build the clipping as IR (no clipping, or
            one of fw.nn's ``ClipGradByValue/ByNorm/ByGlobalNorm``, written with fw ops).
    """

    def __init__(self, opt, flat):
        self.op = opt._op
        self.name = opt._name or type(opt).__name__.lower()
        self.groups = [UpdateGroup(opt, fg) for fg in flat]
        self.generation = opt.state_generation
        self.clip = opt._grad_clip
        self.clip_traceable = self.clip is None or opt._clip_kind(self.clip) != "custom"

    def clip_grads(self, params_grads):
        """The gradients after the optimizer's clipping (fw ops, so on IR values it
        emits the clipping into the program); `params_grads` is a list of
        ``(parameter, gradient)``. Raises UnsupportedError unless
        `clip_traceable`."""
        if self.clip is None:
            return [g for _, g in params_grads]
        if not self.clip_traceable:
            raise UnsupportedError(f"gradient clipping {type(self.clip).__name__} has no "
                                   f"static form")
        return [g for _, g in self.clip(params_grads)]
