"""Backward and optimizer steps in static programs.

`append_backward`/`gradients` are fw-autograd's static backward, run with the
builder of the loss's program. `minimize(opt, loss)` is what
``optimizer.minimize(loss)`` means on a symbolic loss (fw-core's
``value_hooks.minimize``, which fw-nn's optimizers call): the backward, then the
optimizer's update ops and state updates (`fw.jit._optimizers`), and the
learning rate refreshed before each `Executor.run`.
"""

from __future__ import annotations

from fw.core.ir.core import value_hooks
from fw.core.tensor import Tensor
from fw.static._mode import builder_for, program_of

__all__ = ["append_backward", "gradients", "minimize"]


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None,
                    checkpoints=None):
    """Append the backward pass of `loss` to its program.

    Args:
        loss (Variable): a scalar of the program being built.
        parameter_list (list, optional): the parameters (or names) to differentiate;
            None for all trainable ones. Default: None.
        no_grad_set (set, optional): variables (or names) to treat as constants.
            Default: None.
        callbacks (list, optional): accepted for Paddle compatibility. Default: None.
        checkpoints (list, optional): accepted for Paddle compatibility. Default: None.

    Returns:
        list[tuple[Parameter, Variable]]: ``(parameter, its gradient)`` pairs.

    Examples:
        >>> import fw
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3])
        ...     loss = fw.static.nn.fc(x, 1).mean()
        ...     pg = fw.static.append_backward(loss)
        >>> [g.shape for _, g in pg]
        [[3, 1], [1]]
    """
    from fw.autograd import append_backward as _ab

    with builder_for(loss):
        return _ab(loss, parameter_list, no_grad_set, callbacks, checkpoints)


def gradients(targets, inputs, target_gradients=None, no_grad_set=None):
    """Append the gradients of `targets` with respect to `inputs` to their program.

    Args:
        targets (Variable|list[Variable]): the outputs to differentiate.
        inputs (Variable|list[Variable]): the variables to differentiate with respect to.
        target_gradients (Variable|list[Variable], optional): the upstream gradients of
            `targets`; None for ones. Default: None.
        no_grad_set (set, optional): variables to treat as constants. Default: None.

    Returns:
        list[Variable]: one gradient per input (None for an input `targets` do not use).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     x.stop_gradient = False
        ...     g, = fw.static.gradients([(x * x).sum()], [x])
        >>> exe = fw.static.Executor()
        >>> exe.run(prog, feed={"x": np.array([[1.0, 2.0, 3.0]], "float32")},
        ...         fetch_list=[g])[0].tolist()
        [[2.0, 4.0, 6.0]]
    """
    from fw.autograd import gradients as _g

    ts = targets if isinstance(targets, (list, tuple)) else [targets]
    ins = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    with builder_for(ts[0]):
        return _g(list(ts), list(ins), target_gradients, no_grad_set, allow_unused=True)


class _StaticStep:
    """What `fw.jit._optimizers.emit_step` needs, for a static program."""

    def __init__(self, builder, grads):
        class _T:
            pass

        self.trace = _T()
        self.trace.builder = builder
        self.grads = grads  # id(param) -> grad Value
        self.lr_tensors: list = []
        self.pre_run: list = []
        self.post_run: list = []
        self.guards: list = []

    def grad_for_step(self, p):
        return self.grads.get(id(p))


def minimize(opt, loss, startup_program=None, parameters=None, no_grad_set=None):
    """``opt.minimize(loss)`` on a symbolic loss: backward + update ops + state
    updates in the loss's program. Returns ``(None, [(param, grad)])``."""
    from fw.autograd import append_backward as _ab
    from fw.jit import _optimizers

    prog = program_of(loss)
    with builder_for(loss) as b:
        if parameters is not None:
            plist = [p if isinstance(p, Tensor) else prog.captured.get(getattr(p, "label", p))
                     for p in parameters]
        else:
            plist = None
        pairs = _ab(loss, None, no_grad_set)
        grads = {}
        out = []
        for pv, g in pairs:
            t = prog.captured.get(pv.label)
            if t is None or (plist is not None and not any(t is q for q in plist)):
                continue
            grads[id(t)] = g
            out.append((pv, g))
        if getattr(opt, "_parameter_list", None) is None:
            params = [prog.captured[pv.label] for pv, _ in out]
            if params:
                opt._add_param_group({"params": params})
        step = _StaticStep(b, grads)
        _optimizers.emit_step(opt, step)
    pre = prog.__dict__.setdefault("_fw_pre_run", [])
    pre.extend(step.pre_run)
    post = prog.__dict__.setdefault("_fw_post_run", [])
    post.extend(lambda f=f: f({}) for f in step.post_run)
    return None, out


def _minimize_hook(opt, loss, startup_program=None, parameters=None, no_grad_set=None):
    return minimize(opt, loss, startup_program, parameters, no_grad_set)


def install() -> None:
    value_hooks.minimize = _minimize_hook

