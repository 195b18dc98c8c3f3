"""`saved_tensors_hooks`: let the user decide how tensors saved for backward are stored
(Paddle's ``paddle.autograd.saved_tensors_hooks``, PyTorch's
``torch.autograd.graph.saved_tensors_hooks``) — offload them to host memory, compress
them, or log them.

Inside the context, every tensor saved for the backward pass goes through
``pack_hook(tensor)`` when it is saved, and the stored object goes through
``unpack_hook(obj)`` (which must return a Tensor of the same shape and dtype) when the
backward pass reads it. That covers the inputs an op's VJP rule reads and the tensors
a `PyLayer` saves with ``ctx.save_for_backward``. Tensors are packed when saved, so
the hooks in force at the forward call are the ones used, whatever is in force at
backward. The array an op keeps of its own output (for the rules that read their
output, e.g. ``exp``, ``tanh``) is fw's storage, not a saved tensor, and is not passed
to the hooks.

Because the hooks own what they store, fw cannot tell whether a packed tensor was
modified in place afterwards: the in-place modification check is skipped for packed
inputs.
"""

from __future__ import annotations

import threading

from fw.autograd.errors import GradientError
from fw.core.tensor import Tensor

__all__ = ["saved_tensors_hooks"]

_tls = threading.local()
# how many saved_tensors_hooks contexts are open in any thread: the recorder's hot path
# reads this one list item and looks for this thread's hooks only when it is non-zero
ACTIVE = [0]


def current():
    """The innermost (pack, unpack) pair of this thread, or None."""
    st = getattr(_tls, "stack", None)
    return st[-1] if st else None


class saved_tensors_hooks:  # noqa: N801 (Paddle's name)
    """A context manager that routes the tensors saved for backward through
    ``pack_hook`` and ``unpack_hook``.

    Args:
        pack_hook (Callable[[Tensor], Any]): called with each tensor saved for backward;
            returns what to store.
        unpack_hook (Callable[[Any], Tensor]): called with the stored object when the
            backward pass needs the tensor; returns it.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> def pack(t):
            ...     return t.numpy()          # keep a host copy
            >>> def unpack(a):
            ...     return fw.to_tensor(a)
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> with fw.autograd.saved_tensors_hooks(pack, unpack):
            ...     y = (x * x).sum()
            >>> y.backward()
            >>> x.grad.tolist()
            [2.0, 4.0]
    """

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callable")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        st = getattr(_tls, "stack", None)
        if st is None:
            st = _tls.stack = []
        st.append((self.pack_hook, self.unpack_hook))
        ACTIVE[0] += 1
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        ACTIVE[0] -= 1
        return False


class Packed:
    """A saved tensor as the pack hook stored it, with the unpack hook to recover it."""

    __slots__ = ("obj", "unpack", "shape", "dtype")

    def __init__(self, t, hooks):
        self.obj = hooks[0](t)
        self.unpack = hooks[1]
        self.shape = list(t.shape)
        self.dtype = t.dtype

    def get(self):
        t = self.unpack(self.obj)
        if not isinstance(t, Tensor):
            raise GradientError(f"saved_tensors_hooks: unpack_hook returned a "
                                f"{type(t).__name__}; it must return a Tensor")
        if list(t.shape) != self.shape or t.dtype != self.dtype:
            raise GradientError(f"saved_tensors_hooks: unpack_hook returned a tensor of shape "
                                f"{list(t.shape)} and dtype {t.dtype.name}; the saved tensor "
                                f"had shape {self.shape} and dtype {self.dtype.name}")
        return t


class PackedArgs(list):
    """An op node's saved inputs with the Tensors replaced by `Packed` (unpacked once,
    on the first read)."""

    __slots__ = ("_cache",)

    def unpacked(self):
        c = getattr(self, "_cache", None)
        if c is None:
            c = [_unpack(a) for a in self]
            self._cache = c
        return c


def _unpack(a):
    if type(a) is Packed:
        return a.get()
    if type(a) is list:
        return [x.get() if type(x) is Packed else x for x in a]
    return a


def pack_args(args, hooks):
    """`args` with each Tensor (also inside a list) replaced by its `Packed` form."""
    out = PackedArgs()
    for a in args:
        if isinstance(a, Tensor):
            out.append(Packed(a, hooks))
        elif type(a) is list:
            out.append([Packed(x, hooks) if isinstance(x, Tensor) else x for x in a])
        else:
            out.append(a)
    return out
