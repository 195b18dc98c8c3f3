"""The slots fw-autograd fills in, and attaching fw-autograd on first use.

fw-core must run without fw-autograd (a serving process never loads it) and must
not pay for it on import, yet a user who sets ``stop_gradient=False`` expects
gradients without importing anything. So fw-core holds the hooks autograd
provides, initialised to small loaders: the first call imports ``fw.autograd``
(which installs the real hooks here on import, see its ``_install``) and replays
itself. The eager hot path never sees the difference: it calls
``grad_state.record`` only when an input requires grad, exactly as before.

When fw-autograd is not installed, the first attach turns grad recording off
for good (`grad_state.enabled = False`), which is what fw-core did before it
loaded autograd lazily; `require` raises the pip hint for explicit autograd
calls such as ``Tensor.backward``.

This module is a leaf (it imports nothing of fw), so `tensor`, `dispatch` and
`ops._api` can all use it without importing each other.
"""

from __future__ import annotations

import importlib

__all__ = ["grad_state", "tensor_hooks", "attach", "require"]


class _GradState:
    """fw-autograd fills this in: `enabled` is grad mode, `record` builds a node,
    `rebase(x, out)` moves `out`'s place in the graph onto `x` after an in-place op,
    `available` says fw-autograd is attached."""

    __slots__ = ("enabled", "record", "rebase", "available")

    def __init__(self):
        # grad mode is on by default; `record` attaches autograd when first needed
        self.enabled = True
        self.record = _record_after_attach
        self.rebase = _rebase_after_attach
        self.available = False


class _TensorHooks:
    """The autograd methods of Tensor (``backward``, ``register_hook``,
    ``retain_grads``), filled in by fw-autograd when it is attached."""

    backward = None
    register_hook = None
    retain_grads = None
    grad_enabled = None


_missing = [False]  # fw-autograd was looked for and is not installed


def attach() -> bool:
    """Attach fw-autograd (import it once); whether it is attached."""
    if grad_state.available:
        return True
    if _missing[0]:
        return False
    try:
        importlib.import_module("fw.autograd")
    except ModuleNotFoundError as e:
        if e.name != "fw.autograd":
            raise  # fw-autograd is there but something it needs is not
        _missing[0] = True
        grad_state.enabled = False
        grad_state.record = None
        grad_state.rebase = None
        return False
    # still False while fw.autograd is being imported (an op it runs at import time)
    return grad_state.available


def require(what: str) -> None:
    """Attach fw-autograd for `what` (e.g. ``"Tensor.backward"``) or raise the pip hint."""
    if not attach():
        raise ModuleNotFoundError(f"{what} needs automatic differentiation, which is provided "
                                  f"by the fw-autograd package: pip install fw-autograd",
                                  name="fw.autograd")


def _record_after_attach(op, args, attrs, outs):
    if attach():
        grad_state.record(op, args, attrs, outs)


def _rebase_after_attach(x, out):
    if attach():
        grad_state.rebase(x, out)


grad_state = _GradState()
tensor_hooks = _TensorHooks()
