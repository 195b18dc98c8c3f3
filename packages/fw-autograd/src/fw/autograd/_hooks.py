"""Tensor hooks and ``retain_grads`` (installed as ``Tensor.register_hook`` /
``Tensor.retain_grads`` through fw-core's `_autograd` hook object).

A hook on a leaf lives in the leaf's ``_hooks``; a hook on a computed tensor
lives on the node that produced it (keyed by output index), where the engine
finds it when that output's gradient is complete."""

from __future__ import annotations

import itertools
import weakref

from fw.autograd._graph import Port, extra
from fw.autograd.errors import GradientError

__all__ = ["RemovableHandle", "register_hook", "retain_grads", "register_backward_op_callback"]

_keys = itertools.count()


class RemovableHandle:
    """Returned by ``Tensor.register_hook``: ``handle.remove()`` unregisters the hook.

    Args:
        hooks (dict): the tensor's hook table (internal).
        key (int): this hook's key in it (internal).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> (x * 1.0).sum().backward()
        >>> x.grad.tolist()
        [10.0, 10.0]
        >>> handle.remove()
        True
        >>> x.clear_grad()
        >>> (x * 1.0).sum().backward()
        >>> x.grad.tolist()
        [1.0, 1.0]
    """

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks: dict, key: int):
        self._hooks = hooks
        self._key = key

    def remove(self) -> bool:
        """Unregister the hook (a second call does nothing).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> handle = x.register_hook(lambda g: g * 0)
            >>> handle.remove()
            True
            >>> (x * 3.0).sum().backward()
            >>> x.grad.tolist()
            [3.0]
        """
        return self._hooks.pop(self._key, None) is not None


def _port(t):
    n = t._node
    if type(n) is Port:
        return n.node, n.index
    return n, 0


def register_hook(t, hook):
    """Call ``hook(grad)`` when the gradient of `t` has been computed; if it returns
    a tensor, that replaces the gradient (for `t` and everything before it).

    >>> import fw
    >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> h = x.register_hook(lambda g: g * 2)
    >>> (x * 3).sum().backward()
    >>> x.grad.numpy().tolist()
    [6.0, 6.0]
    >>> h.remove()
    True
    """
    if not callable(hook):
        raise GradientError(f"register_hook expects a callable, got {type(hook).__name__}")
    if t._sg:
        raise GradientError("cannot register a hook on a tensor with stop_gradient=True: no "
                            "gradient is computed for it")
    if t._node is None:
        hooks = t._hooks
        if hooks is None:
            hooks = t._hooks = {}
    else:
        node, idx = _port(t)
        ex = extra(node)
        if ex.hooks is None:
            ex.hooks = {}
        hooks = ex.hooks.get(idx)
        if hooks is None:
            hooks = ex.hooks[idx] = {}
    key = next(_keys)
    hooks[key] = hook
    return RemovableHandle(hooks, key)


def retain_grads(t):
    """Keep the gradient of a computed (non-leaf) tensor in its ``.grad`` after
    backward. Leaves with ``stop_gradient=False`` always keep theirs.

    >>> import fw
    >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> y = x * 3
    >>> y.retain_grads()
    >>> y.sum().backward()
    >>> y.grad.numpy().tolist()
    [1.0, 1.0]
    """
    if t._sg or t._node is None:
        return
    node, idx = _port(t)
    ex = extra(node)
    if ex.retain is None:
        ex.retain = {}
    ex.retain[idx] = weakref.ref(t)


# Callbacks the eager engine calls after each backward op (see
# register_backward_op_callback); a dict so a handle can remove its entry.
between_ops: dict = {}


def register_backward_op_callback(fn):
    """Call ``fn()`` before each operator of every eager backward pass (fw's
    extension: Paddle has no such hook). It is the one point where Python runs
    between backward's native kernels, so a data-parallel wrapper can drive its
    in-flight communication there (fw.DataParallel's MPI progress,
    ``FW_DIST_PROGRESS=ops``). `fn` takes no argument, returns nothing, and must be
    cheap: it runs once per op.

    Args:
        fn (callable): the callback.

    Returns:
        RemovableHandle: ``handle.remove()`` unregisters it.

    Examples:
        >>> import fw
        >>> from fw.autograd import register_backward_op_callback
        >>> calls = []
        >>> handle = register_backward_op_callback(lambda: calls.append(1))
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> (x * 2.0).sum().backward()
        >>> len(calls) >= 2
        True
        >>> handle.remove()
        True
    """
    if not callable(fn):
        raise TypeError(f"register_backward_op_callback: fn must be callable, got "
                        f"{type(fn).__name__}")
    key = next(_keys)
    between_ops[key] = fn
    return RemovableHandle(between_ops, key)
