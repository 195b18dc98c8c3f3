"""fw.autograd — reverse- and forward-mode automatic differentiation on fw's op
table, eager (a tape of nodes) and on IR programs (`append_backward`).

Importing it switches gradient recording on: it installs its recorder into
fw-core's dispatch hooks and its backward into ``Tensor.backward``. ``import fw``
does not import it: fw-core's hooks start as loaders that import it on first
need (an input that requires grad reaching an op, ``Tensor.backward``,
``fw.grad``/``fw.no_grad``, …). See README.md beside this
package for the design.
"""

from __future__ import annotations

from fw.autograd import (
    _graph,
    _hooks,
    _mode,
    rules,  # noqa: F401  (registers every VJP rule)
)
from fw.autograd._backward import _tensor_backward, backward, grad
from fw.autograd._hooks import RemovableHandle, register_backward_op_callback
from fw.autograd._mode import (
    detect_anomaly,
    enable_grad,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from fw.autograd._saved_hooks import saved_tensors_hooks
from fw.autograd.errors import AnomalyError, GradientError
from fw.autograd.functional import Hessian, Jacobian, hessian, jacobian, jvp, vjp
from fw.autograd.py_layer import PyLayer, PyLayerContext
from fw.autograd.recompute import recompute
from fw.autograd.static import append_backward, gradients
from fw.core.internal import grad_state, tensor_hooks

__all__ = [
    "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "set_detect_anomaly", "detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "GradientError",
    "AnomalyError", "RemovableHandle", "vjp", "jvp", "jacobian", "hessian", "Jacobian",
    "Hessian", "PyLayer", "PyLayerContext", "Function", "saved_tensors_hooks", "recompute",
    "append_backward", "gradients",
]


# Paddle 3.3's paddle.autograd.Function is PyLayer under a second name
Function = PyLayer


def _install():
    gs = grad_state
    gs.record = _graph.record
    gs.rebase = _graph.rebase
    gs.enabled = True if _mode._off_threads[0] == 0 else _mode._PER_THREAD
    gs.available = True
    hooks = tensor_hooks
    hooks.backward = _tensor_backward
    hooks.register_hook = _hooks.register_hook
    hooks.retain_grads = _hooks.retain_grads
    hooks.grad_enabled = is_grad_enabled
    # Paddle's FLAGS_check_nan_inf turns on the NaN/Inf check: anomaly mode here
    # (and fw-core's eager per-op check of every output, kept with it)
    from fw.core.misc import register_flag, set_check_nan_inf

    def _nan_flag(on):
        set_check_nan_inf(on)
        set_detect_anomaly(bool(on))

    register_flag("FLAGS_check_nan_inf", _nan_flag)


_install()
