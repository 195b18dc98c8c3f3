"""`Tensor`: an array (NumPy on cpu, CuPy on gpu) plus autograd state.

Layout, chosen for the eager hot path: the three fields every op touches live in
``__slots__`` (``_data`` the array, ``_sg`` stop_gradient, ``_node`` the autograd
node that produced it); rarely set state (``.grad``, hooks, a name) goes to a
``__dict__`` that is only allocated when written, with class-level defaults.
Creating a tensor is therefore ``object.__new__`` plus three slot stores.

Op methods (``x.sum()``, ``x + y``, …) are not written here: `fw.core.ops._api`
attaches them from the op table. Autograd methods (``backward``,
``register_hook``) forward to whatever fw-autograd installed in `_autograd`.
"""

from __future__ import annotations

import weakref

import numpy as np

from fw.core import _grad_hooks, _memory
from fw.core import dtypes as _dt
from fw.core import place as _pl

__all__ = ["Tensor", "to_tensor", "is_tensor", "wrap", "version_of", "array_version",
           "bump_version"]

_ndarray = np.ndarray
_new = object.__new__
_generic = np.generic
_BY_NP = _dt._BY_NP


_autograd = _grad_hooks.tensor_hooks  # filled in by fw-autograd when it is attached
# `call(op_name, *inputs, **attrs)` of the op table, for the few Tensor members
# that run ops directly (`to`). The op table is built above this module, so
# `fw.core.ops._api.install` hands it down, as it attaches the op methods.
_call_op = None


class Tensor:
    """A multi-dimensional array on a device, with Paddle's autograd semantics.

    Tensors are usually made by ``fw.to_tensor`` or an op; calling the class does the same as
    ``fw.to_tensor``. ``stop_gradient`` is True unless the tensor is a parameter or computed
    from one that requires gradients (Paddle's convention; PyTorch's ``requires_grad`` is its
    negation). Most of fw's functions are also methods: ``x.sum(axis=0)`` is
    ``fw.sum(x, axis=0)``.

    Args:
        data (scalar|list|tuple|numpy.ndarray|Tensor, optional): The values (see
            fw.to_tensor); None gives an empty float32 tensor of shape [0]. Default: None.
        dtype (str|fw.dtype, optional): The dtype; None infers it from data. Default: None.
        place (str|fw.Place, optional): The device; None uses the current one. Default: None.
        stop_gradient (bool, optional): Whether autograd ignores the tensor. Default: True.

    Examples:
        >>> import fw
        >>> x = fw.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> x.shape, x.dtype, x.ndim, x.size
        ([2, 2], fw.float32, 2, 4)
        >>> x.sum(axis=0).tolist()
        [4.0, 6.0]
        >>> x.stop_gradient
        True
    """

    __slots__ = ("_data", "_sg", "_node", "__dict__", "__weakref__")

    # NumPy must hand `ndarray op Tensor` to our reflected operators.
    __array_ufunc__ = None
    __array_priority__ = 1000.0

    # defaults of state kept in __dict__ only when set
    _grad = None
    _hooks = None
    _retain = False
    _name = None
    persistable = False
    trainable = False

    def __init__(self, data=None, dtype=None, place=None, stop_gradient=True):
        t = to_tensor(np.zeros([0], np.float32) if data is None else data, dtype=dtype,
                      place=place, stop_gradient=stop_gradient)
        self._data = t._data
        self._sg = bool(stop_gradient)
        self._node = None

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> list:
        """The sizes of the dimensions, as a list of ints (Paddle's convention).

        Returns:
            list[int]: the shape.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3]).shape
            [2, 3]
        """
        return list(self._data.shape)

    @property
    def dtype(self):
        """The element type, e.g. fw.float32.

        Returns:
            fw.dtype: the dtype.

        Examples:
            >>> import fw
            >>> fw.to_tensor([1, 2]).dtype
            fw.int64
        """
        try:
            return _BY_NP[self._data.dtype]
        except KeyError:
            return _dt.from_numpy(self._data.dtype)

    @property
    def place(self):
        """The device holding the tensor.

        Returns:
            fw.Place: Place(cpu) or Place(gpu:N).

        Examples:
            >>> import fw
            >>> fw.zeros([1]).place
            Place(cpu)
        """
        return _pl.place_of(self._data)

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3, 4]).ndim
            3
        """
        return self._data.ndim

    @property
    def size(self) -> int:
        """The number of elements (Paddle's ``size`` is an int, not a method).

        Returns:
            int: the product of the shape.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3]).size
            6
        """
        return int(self._data.size)

    def dim(self) -> int:
        """The number of dimensions (the same as ``ndim``).

        Returns:
            int: the rank of the tensor.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3]).dim()
            2
        """
        return self._data.ndim

    def ndimension(self) -> int:
        """The number of dimensions (the same as ``ndim``).

        Returns:
            int: the rank of the tensor.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3, 4]).ndimension()
            3
        """
        return self._data.ndim

    def element_size(self) -> int:
        """The size of one element in bytes.

        Returns:
            int: 4 for float32, 8 for int64, ...

        Examples:
            >>> import fw
            >>> fw.zeros([2], dtype="float32").element_size()
            4
            >>> fw.zeros([2], dtype="int64").element_size()
            8
        """
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """The number of bytes the elements take.

        Returns:
            int: size * element size.

        Examples:
            >>> import fw
            >>> fw.zeros([2, 3], dtype='float32').nbytes
            24
        """
        return int(self._data.nbytes)

    @property
    def stop_gradient(self) -> bool:
        """Whether autograd ignores this tensor (True by default, as in Paddle).

        Set it to False on a leaf to collect its gradient in ``.grad``.

        Returns:
            bool: the flag (settable).

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0])
            >>> x.stop_gradient
            True
            >>> x.stop_gradient = False
            >>> x.requires_grad
            True
        """
        return self._sg

    @stop_gradient.setter
    def stop_gradient(self, value: bool):
        self._sg = bool(value)

    @property
    def requires_grad(self) -> bool:
        """PyTorch's spelling: ``not stop_gradient`` (settable).

        Returns:
            bool: whether gradients flow to this tensor.

        Examples:
            >>> import fw
            >>> fw.to_tensor([1.0], stop_gradient=False).requires_grad
            True
        """
        return not self._sg

    @requires_grad.setter
    def requires_grad(self, value: bool):
        self._sg = not value

    @property
    def is_leaf(self) -> bool:
        """Whether the tensor is a leaf of the autograd graph.

        A leaf is not computed from tensors that need gradients.

        Returns:
            bool: True for leaves.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> x.is_leaf, (x * 2).is_leaf
            (True, False)
        """
        return self._node is None

    @property
    def grad(self):
        """The gradient accumulated by backward.

        None before backward runs, and for a tensor that needs no gradient.

        Returns:
            Tensor|None: the gradient (settable).

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> x.grad is None
            True
            >>> (x * x).sum().backward()
            >>> x.grad.tolist()
            [2.0, 4.0]
        """
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):
            value = to_tensor(value)
        self._grad = value

    @property
    def name(self) -> str:
        """The tensor's name (generated on first use unless set; parameters get their layer's name).

        Returns:
            str: the name (settable).

        Examples:
            >>> import fw
            >>> x = fw.zeros([1])
            >>> x.name = 'weights'
            >>> x.name
            'weights'
        """
        n = self._name
        if n is None:
            n = _auto_name("generated_tensor")
            self._name = n
        return n

    @name.setter
    def name(self, value):
        self._name = value

    def is_dense(self) -> bool:
        """Whether the tensor is dense; always True for fw.Tensor (sparse tensors are fw.sparse's).

        Returns:
            bool: True.

        Examples:
            >>> import fw
            >>> fw.zeros([2]).is_dense()
            True
        """
        return True

    def is_sparse(self) -> bool:
        """Whether the tensor is sparse (COO or CSR); always False for a dense fw.Tensor.

        Returns:
            bool: False.

        Examples:
            >>> import fw
            >>> fw.zeros([2]).is_sparse()
            False
        """
        return False

    def is_sparse_coo(self) -> bool:
        """Whether the tensor is a sparse COO tensor; always False for a dense fw.Tensor.

        Returns:
            bool: False.

        Examples:
            >>> import fw
            >>> fw.zeros([2]).is_sparse_coo()
            False
        """
        return False

    def is_sparse_csr(self) -> bool:
        """Whether the tensor is a sparse CSR tensor; always False for a dense fw.Tensor.

        Returns:
            bool: False.

        Examples:
            >>> import fw
            >>> fw.zeros([2]).is_sparse_csr()
            False
        """
        return False

    # fw.sparse lives in fw-nn; like the facade's lazy names (fw/__init__.py), these
    # resolve it on use, so fw-core itself never imports it
    def to_sparse_coo(self, sparse_dim):
        """This tensor as a COO sparse tensor whose first `sparse_dim` axes are sparse
        (fw.sparse, from fw-nn); differentiable w.r.t. the kept entries.

        Args:
            sparse_dim (int): How many leading axes become sparse.

        Returns:
            fw.sparse.SparseCooTensor: the sparse tensor (needs fw-nn, which provides
                fw.sparse).

        Examples:
            >>> import fw
            >>> s = fw.to_tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_coo(2)
            >>> s.nnz()
            2
        """
        import importlib

        return importlib.import_module("fw.sparse.tensor").dense_to_coo(self, sparse_dim)

    def to_sparse_csr(self):
        """This 2-D or 3-D tensor as a CSR sparse tensor (fw.sparse, from fw-nn).

        Returns:
            fw.sparse.SparseCsrTensor: the sparse tensor (needs fw-nn, which provides
                fw.sparse).

        Examples:
            >>> import fw
            >>> s = fw.to_tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
            >>> s.values().tolist()
            [2.0, 3.0]
        """
        import importlib

        return importlib.import_module("fw.sparse.tensor").dense_to_csr(self)

    # ------------------------------------------------------------ conversion
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array.

        On the CPU the array shares the tensor's memory (writing to it changes the tensor); a GPU
        tensor is copied to the host.

        Returns:
            numpy.ndarray: the values, with the tensor's shape and dtype (bfloat16 as ml_dtypes'
            bfloat16).

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([[1, 2], [3, 4]])
            >>> x.numpy()
            array([[1, 2],
                   [3, 4]])
            >>> x.numpy().dtype
            dtype('int64')
        """
        a = self._data
        if type(a) is _ndarray:
            return a
        return _pl.backend_of(a).to_numpy(a)

    def item(self, *index):
        """The value of a one-element tensor (or of one element) as a Python number.

        Args:
            *index (int): Optional indices of the element to read (flat with one index, or one per
                dimension); without them the tensor must have exactly one element.

        Returns:
            int|float|bool|complex: the value.

        Examples:
            >>> import fw
            >>> fw.to_tensor([2.5]).item()
            2.5
            >>> x = fw.to_tensor([[1, 2], [3, 4]])
            >>> x.item(1, 0)
            3
            >>> x.item(3)
            4
        """
        a = self.numpy()
        if index:  # one index is flat (row-major), as NumPy's and Paddle's item(i)
            return a[index].item() if len(index) > 1 else a.reshape(-1)[index[0]].item()
        if a.size != 1:
            raise ValueError(f"Tensor.item(): only a tensor with one element can be converted "
                             f"to a Python scalar, this one has shape {list(a.shape)}")
        return a.reshape(()).item() if a.dtype != _dt.bfloat16.np else float(a.reshape(()))

    def tolist(self):
        """The values as (nested) Python lists.

        Returns:
            list|int|float|bool: nested lists of Python numbers (a number for a 0-D tensor).

        Examples:
            >>> import fw
            >>> fw.to_tensor([[1, 2], [3, 4]]).tolist()
            [[1, 2], [3, 4]]
            >>> fw.to_tensor(3.5).tolist()
            3.5
        """
        a = self.numpy()
        if a.dtype == _dt.bfloat16.np:
            a = a.astype(np.float32)
        return a.tolist()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def __dlpack__(self, stream=None, **kw):
        a = self._data
        if stream is not None or kw:
            return a.__dlpack__(stream=stream, **kw) if stream is not None else a.__dlpack__(**kw)
        return a.__dlpack__()

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        a = self._data
        if type(a) is _ndarray:
            raise AttributeError("__cuda_array_interface__ exists only for gpu tensors")
        return a.__cuda_array_interface__

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"the truth value of a tensor with {self._data.size} elements "
                             f"(shape {list(self._data.shape)}) is ambiguous; use .any() or .all()")
        return bool(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in (_dt._INT, _dt._BOOL):
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype.name}")
        return int(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-D tensor")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __format__(self, spec: str) -> str:
        if spec and self._data.size == 1:
            return format(self.item(), spec)
        return str(self) if not spec else format(str(self), spec)

    __hash__ = object.__hash__

    # ------------------------------------------------------------ copies and devices
    def detach(self) -> Tensor:
        """A tensor with the same values, cut from the autograd graph.

        The result shares this tensor's data (an in-place change shows in both) and has
        stop_gradient=True.

        Returns:
            Tensor: the detached tensor.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> y = (x * 2).detach()
            >>> y.stop_gradient, y.tolist()
            (True, [2.0, 4.0])
        """
        return wrap(self._data)

    def detach_(self) -> Tensor:
        """Cut this tensor from the autograd graph, in place.

        Returns:
            Tensor: this tensor, now with stop_gradient=True.

        Examples:
            >>> import fw
            >>> y = fw.to_tensor([1.0], stop_gradient=False) * 2
            >>> y.detach_() is y, y.stop_gradient
            (True, True)
        """
        self._node = None
        self._sg = True
        return self

    def cpu(self) -> Tensor:
        """A copy of this tensor in CPU memory (the tensor itself when it is already there).

        Returns:
            Tensor: the tensor on the CPU.

        Examples:
            >>> import fw
            >>> fw.to_tensor([1, 2]).cpu().place
            Place(cpu)
        """
        return self.to("cpu")

    def cuda(self, device_id=None, blocking=True) -> Tensor:
        """A copy of this tensor on a GPU (needs CuPy and a GPU).

        Args:
            device_id (int, optional): The GPU index; None uses the current GPU. Default: None.
            blocking (bool, optional): Accepted for Paddle; the copy is synchronous. Default: True.

        Returns:
            Tensor: the tensor on the GPU.

        Examples:
            Needs a GPU, so it is not run here::

                x = fw.to_tensor([1.0, 2.0]).cuda()
                print(x.place)   # Place(gpu:0)
        """
        return self.to("gpu" if device_id is None else f"gpu:{device_id}")

    def pin_memory(self) -> Tensor:
        """The tensor in page-locked host memory; on fw's CPU backend this is the tensor itself.

        Returns:
            Tensor: this tensor.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0])
            >>> x.pin_memory() is x
            True
        """
        return self

    def to(self, *args, **kwargs) -> Tensor:
        """Move the tensor to a device, cast it to a dtype, or both.

        Accepts ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)`` (its
        device and dtype), and the keywords ``device``, ``dtype`` and ``blocking``.

        Args:
            *args: A device (str or fw.Place), a dtype, both, or a tensor.
            **kwargs: ``device=``, ``dtype=``, ``blocking=`` (accepted, ignored).

        Returns:
            Tensor: the converted tensor (this tensor when nothing changes).

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1, 2])
            >>> x.to("float32").dtype
            fw.float32
            >>> x.to("cpu", "float64").dtype
            fw.float64
            >>> x.to(fw.zeros([1], dtype="int32")).dtype
            fw.int32
        """
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("blocking", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"Tensor.to() got unexpected keywords {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.place, a.dtype
            elif isinstance(a, (_pl.Place,)) or (isinstance(a, str) and _looks_like_device(a)):
                device = a
            elif a is not None:
                dtype = a
        out = self
        if dtype is not None and _dt.convert_dtype(dtype) is not self.dtype:
            out = _call_op("cast", out, dtype=_dt.convert_dtype(dtype))
        if device is not None:
            p = _pl.parse_place(device)
            if p != out.place:
                out = _call_op("to_device", out, place=str(p))
        return out

    # ------------------------------------------------------------ autograd
    def backward(self, grad_tensor=None, retain_graph=False):
        """Compute the gradients of this tensor with respect to the leaves that need them.

        The gradients are accumulated into each leaf's ``.grad`` (call ``clear_grad`` or the
        optimizer's ``clear_grad`` between steps). Needs the fw-autograd package.

        Args:
            grad_tensor (Tensor, optional): The gradient of the final objective with respect to this
                tensor; None means ones (for a one-element tensor, the usual loss case).
                Default: None.
            retain_graph (bool, optional): Keep the graph so that backward can run through it
                again. Default: False.

        Returns:
            None

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
            >>> y = (x * x).sum()
            >>> y.backward()
            >>> x.grad.tolist()
            [2.0, 4.0, 6.0]
        """
        if _autograd.backward is None:
            _grad_hooks.require("Tensor.backward")
        if not _memory.training_started:  # keep training's freed memory (see _memory.py)
            _memory.tune_malloc_for_training()
        _autograd.backward([self], [grad_tensor], retain_graph)

    def register_hook(self, hook):
        """Register a function called with this tensor's gradient during backward.

        The hook may return a new gradient that replaces the one passed on. Needs fw-autograd.

        Args:
            hook (callable): ``hook(grad) -> Tensor or None``.

        Returns:
            object: a handle whose ``remove()`` unregisters the hook.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> h = x.register_hook(lambda g: g * 10)
            >>> (x * 3).sum().backward()
            >>> x.grad.tolist()
            [30.0, 30.0]
            >>> h.remove()
            True
        """
        if _autograd.register_hook is None:
            _grad_hooks.require("Tensor.register_hook")
        return _autograd.register_hook(self, hook)

    def retain_grads(self):
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward.

        By default only leaves (tensors created by the user with stop_gradient=False, and
        parameters) keep their gradients. Needs fw-autograd.

        Returns:
            None

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> y = x * 2
            >>> y.retain_grads()
            >>> y.sum().backward()
            >>> y.grad.tolist()
            [1.0, 1.0]
        """
        if _autograd.retain_grads is None:
            _grad_hooks.require("Tensor.retain_grads")
        _autograd.retain_grads(self)

    def clear_grad(self, set_to_zero: bool = False):
        """Clear the accumulated gradient of this tensor.

        By default fw drops the gradient (``.grad`` becomes None, like PyTorch's
        ``zero_grad(set_to_none=True)``). Paddle 3.3.1's ``Tensor.clear_grad()`` takes no
        argument and fills the gradient with zeros instead: pass ``set_to_zero=True`` (or
        call ``clear_gradient()``) for that.

        Args:
            set_to_zero (bool, optional): Keep the gradient tensor and fill it with zeros (True), or
                drop it so that ``.grad`` becomes None (False). Default: False.

        Returns:
            None

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> (x * 2).sum().backward()
            >>> x.clear_grad()
            >>> x.grad is None
            True
        """
        g = self._grad
        if g is None:
            return
        if set_to_zero:
            g._data[...] = 0
            bump_version(g)
        else:
            self._grad = None

    def clear_gradient(self, set_to_zero: bool = True):
        """Paddle's older name of ``clear_grad``; by default the gradient is zeroed, not dropped.

        Args:
            set_to_zero (bool, optional): Fill the gradient with zeros (True) or drop it (False).
                Default: True.

        Returns:
            None

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> (x * 2).sum().backward()
            >>> x.clear_gradient()
            >>> x.grad.tolist()
            [0.0]
        """
        self.clear_grad(set_to_zero)

    def gradient(self):
        """Paddle's legacy accessor of the gradient, as a NumPy array.

        Returns:
            numpy.ndarray|None: the gradient, or None before backward.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
            >>> (x * 3).sum().backward()
            >>> x.gradient()
            array([3., 3.], dtype=float32)
        """
        return None if self._grad is None else self._grad.numpy()

    # ------------------------------------------------------------ in-place value setting
    def set_value(self, value) -> Tensor:
        """Overwrite the tensor's values in place.

        The value must have the tensor's shape; it is cast to the tensor's dtype. While a program
        is being built, the write is recorded as a state update of that program (applied after each
        run).

        Args:
            value (Tensor|numpy.ndarray|list|number): The new values.

        Returns:
            Tensor: this tensor.

        Examples:
            >>> import fw
            >>> x = fw.zeros([2])
            >>> _ = x.set_value([1.5, 2.5])
            >>> x.tolist()
            [1.5, 2.5]
        """
        from fw.core.ir.core import _state

        b = _state.builder
        if b is not None and (type(value).__name__ == "Value" or id(self) in b._state_args):
            b.record_update(self, value)
            return self
        a = self._data
        src = value._data if isinstance(value, Tensor) else value
        src = np.asarray(src) if type(a) is _ndarray else _pl.backend_of(a).xp.asarray(src)
        if tuple(src.shape) != a.shape:
            raise ValueError(f"set_value: the value's shape {list(src.shape)} differs from the "
                             f"tensor's shape {list(a.shape)}")
        a[...] = src.astype(a.dtype, copy=False)
        bump_version(self)
        return self

    def _replace_data(self, array) -> None:
        """Swap the array (used by in-place ops that change storage)."""
        self._data = array
        bump_version(self)

    # ------------------------------------------------------------ printing
    def __repr__(self) -> str:
        return _format_tensor(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        t = make_tensor(self._data.copy(), None, self._sg, type(self))
        d = getattr(self, "__dict__", None)
        if d:
            import copy as _copy

            for k, v in d.items():
                if k != "_grad":
                    t.__dict__[k] = _copy.deepcopy(v, memo)
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol):
        # In-memory transport (DataLoader workers, deepcopy). Files never use pickle.
        return (_rebuild, (type(self), self.numpy(), self._sg))


def _rebuild(cls, array, sg):
    return make_tensor(array, None, sg, cls)


def _looks_like_device(s: str) -> bool:
    s = s.lower()
    return s == "cpu" or s.startswith(("gpu", "cuda")) or ":" in s


_name_counters: dict = {}


def _auto_name(prefix: str) -> str:
    n = _name_counters.get(prefix, 0)
    _name_counters[prefix] = n + 1
    return f"{prefix}_{n}"


# ---------------------------------------------------------------- construction
def wrap(array) -> Tensor:
    """A Tensor over `array` (no copy); stop_gradient=True. A NumPy or Python scalar
    (what a kernel may return for a 0-D result) becomes a 0-D array; device arrays
    (CuPy) are kept. The one construction of a Tensor from a kernel's result: the
    eager fast paths, the dispatcher and the executor all call it."""
    if type(array) is not _ndarray and (isinstance(array, _generic)
                                        or not hasattr(array, "shape")):
        array = np.asarray(array)
    t = _new(Tensor)
    t._data = array
    t._sg = True
    t._node = None
    return t


def make_tensor(array, node=None, stop_gradient=True, cls=Tensor) -> Tensor:
    """A `cls` (Tensor or a subclass) over `array` (no copy) with autograd state:
    `node` is the autograd node (or Port) that produced it, None for a leaf. For the
    other fw packages (through `fw.core.internal`): the one way to build a tensor
    with history, or a subclass instance (fw-nn's Parameter) without its __init__."""
    t = _new(cls)
    t._data = array
    t._sg = stop_gradient
    t._node = node
    return t


def is_tensor(x) -> bool:
    """Whether x is an fw Tensor.

    Args:
        x (object): Any object.

    Returns:
        bool: True for fw.Tensor instances (and parameters).

    Examples:
        >>> import fw
        >>> fw.is_tensor(fw.zeros([1])), fw.is_tensor([1.0])
        (True, False)
    """
    return isinstance(x, Tensor)


def _is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float, complex, np.generic))


def _nested_tensors_to_numpy(data):
    if isinstance(data, Tensor):
        return data.numpy()
    if isinstance(data, (list, tuple)):
        return [_nested_tensors_to_numpy(d) for d in data]
    return data


def to_tensor(data, dtype=None, place=None, stop_gradient=True) -> Tensor:
    """Create a tensor from data (Paddle's ``paddle.to_tensor``).

    Python scalars and (nested) lists take fw's default dtypes: floats the default float dtype
    (``fw.get_default_dtype()``, float32 unless changed), ints int64, bools bool, complex numbers
    complex64. NumPy arrays keep their dtype (float64 stays float64, unlike PyTorch's
    ``torch.tensor`` default). The data is always copied; a Tensor argument gives a new tensor.

    Args:
        data (scalar|list|tuple|numpy.ndarray|Tensor): The values. Tensors inside a list are
            accepted; a PyTorch/JAX array is read through DLPack.
        dtype (str|fw.dtype|numpy.dtype, optional): The dtype of the result; None infers it as
            described above. Default: None.
        place (str|fw.Place, optional): The device, e.g. ``"cpu"`` or ``"gpu:0"``; None uses the
            current device (``fw.get_device()``). Default: None.
        stop_gradient (bool, optional): Whether autograd ignores the tensor. Set it to False for
            a leaf whose gradient you want. Default: True.

    Returns:
        Tensor: a new tensor holding a copy of data.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> x = fw.to_tensor([[1, 2], [3, 4]])
        >>> x.shape, x.dtype
        ([2, 2], fw.int64)
        >>> fw.to_tensor(1.5).dtype
        fw.float32
        >>> fw.to_tensor(np.zeros(2)).dtype
        fw.float64
        >>> w = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> w.stop_gradient
        False
        >>> fw.to_tensor([1, 2], dtype="float32").tolist()
        [1.0, 2.0]
    """
    target = None if dtype is None else _dt.convert_dtype(dtype)
    xp_place = None if place is None else _pl.parse_place(place)
    if isinstance(data, Tensor):
        arr = data._data
        if target is not None and _BY_NP.get(arr.dtype) is not target:
            arr = arr.astype(target.np)
        else:
            arr = arr.copy()
    else:
        if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray) and \
                type(data).__module__.split(".")[0] in ("torch", "jax", "jaxlib"):
            if int(data.__dlpack_device__()[0]) == 2:  # CUDA memory: a gpu tensor (a copy)
                from fw.utils.dlpack import from_dlpack

                src = from_dlpack(data)
                return to_tensor(src, dtype=dtype, place=place if place is not None
                                 else src.place, stop_gradient=stop_gradient)
            data = np.from_dlpack(data)
        if _is_scalar(data) and not isinstance(data, np.generic):
            d = target or _dt.scalar_dtype(data)
            arr = np.asarray(data, dtype=d.np)
        elif isinstance(data, np.ndarray) or isinstance(data, np.generic):
            arr = np.array(data, dtype=target.np if target else None, copy=True)
            if target is None and arr.dtype not in _BY_NP:
                arr = _coerce_foreign(arr)
        else:
            if type(data).__module__.split(".")[0] == "cupy":
                _pl.get_backend("gpu")  # a clear error when CuPy or a GPU is missing
                arr = data.astype(target.np) if target is not None else data.copy()
                t = wrap(arr)
                t._sg = bool(stop_gradient)
                return t
            data = _nested_tensors_to_numpy(data)
            arr = np.asarray(data)
            if arr.dtype == object:
                raise TypeError(f"to_tensor: cannot build a tensor from {type(data).__name__} "
                                f"with ragged or non-numeric entries")
            if target is not None:
                arr = arr.astype(target.np)
            elif arr.dtype.kind == "f":
                arr = arr.astype(_dt.get_default_dtype().np)
            elif arr.dtype.kind == "c":
                arr = arr.astype(np.complex128 if _dt.get_default_dtype() is _dt.float64
                                 else np.complex64)
            elif arr.dtype.kind in "iu" and arr.dtype != np.uint8:
                arr = arr.astype(np.int64)
            elif arr.dtype not in _BY_NP:
                arr = _coerce_foreign(arr)
    p = xp_place or _pl.current_place()
    if p.kind != "cpu" or type(arr) is not _ndarray:
        cur = _pl.place_of(arr) if not isinstance(arr, np.ndarray) else _pl.CPUPlace()
        if cur != p:
            if p.kind == "cpu":
                arr = _pl.backend_of(arr).to_numpy(arr)
            else:
                host = arr if isinstance(arr, np.ndarray) else _pl.backend_of(arr).to_numpy(arr)
                arr = _pl.get_backend(p.kind).asarray(host, p.index)
    t = wrap(arr)
    t._sg = bool(stop_gradient)
    return t


def _coerce_foreign(arr: np.ndarray) -> np.ndarray:
    k = arr.dtype.kind
    if k == "U" or k == "S" or k == "O":
        raise TypeError(f"to_tensor: NumPy dtype {arr.dtype} has no fw equivalent")
    if k == "u":  # uint16/32/64: widen to a signed type that holds them
        return arr.astype(np.int64)
    if k == "f" and arr.dtype.itemsize > 8:
        return arr.astype(np.float64)
    if k == "c" and arr.dtype.itemsize > 16:
        return arr.astype(np.complex128)
    return arr.astype(_dt.from_numpy(arr.dtype).np)


# ---------------------------------------------------------------- versions (in-place checks)
# A version per storage root, so a view and its base share one counter: writing
# through either invalidates values saved for backward from both.
_versions: dict = {}


def _root(a):
    b = a.base
    while b is not None and hasattr(b, "base") and hasattr(b, "shape"):
        a = b
        b = a.base
    return a


def _forget(key):
    _versions.pop(key, None)


def version_of(t: Tensor) -> int:
    return array_version(t._data)


def array_version(a) -> int:
    """`version_of` for the array under a tensor (what autograd saves of an output)."""
    if not _versions:  # nothing was ever modified in place (or all of it is gone)
        return 0
    if a.base is not None:  # a view: the version is its base array's
        a = _root(a)
    rec = _versions.get(id(a))
    return 0 if rec is None else rec[0]


def bump_version(t: Tensor) -> None:
    r = _root(t._data)
    key = id(r)
    rec = _versions.get(key)
    if rec is None:
        try:
            ref = weakref.ref(r, lambda _w, k=key: _forget(k))
        except TypeError:
            ref = None
        _versions[key] = [1, ref]
    else:
        rec[0] += 1


# ---------------------------------------------------------------- repr
_PRINT = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None,
                     linewidth=None):
    """Set how tensors print (the repr of fw.Tensor).

    Arguments left None keep their current value.

    Args:
        precision (int, optional): Digits after the decimal point. Default: None.
        threshold (int, optional): Above this many elements, print a summary with "...".
            Default: None.
        edgeitems (int, optional): Items shown at each end of a summarised dimension.
            Default: None.
        sci_mode (bool, optional): Force scientific notation. Default: None.
        linewidth (int, optional): Characters per line. Default: None.

    Returns:
        None

    Examples:
        >>> import fw
        >>> fw.set_printoptions(precision=2)
        >>> print(fw.to_tensor([1.23456]))
        Tensor(shape=[1], dtype=float32, place=Place(cpu), stop_gradient=True,
               [1.23])
        >>> fw.set_printoptions(precision=8)
    """
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("sci_mode", sci_mode), ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v


def _format_array(a: np.ndarray, prefix: str) -> str:
    if a.dtype == _dt.bfloat16.np:
        a = a.astype(np.float32)
    kw = dict(precision=_PRINT["precision"], threshold=_PRINT["threshold"],
              edgeitems=_PRINT["edgeitems"], max_line_width=_PRINT["linewidth"],
              separator=", ", prefix=prefix, floatmode=_floatmode(a))
    if _PRINT["sci_mode"] is not None and a.dtype.kind in "fc":
        kw["suppress_small"] = not _PRINT["sci_mode"]
    if a.ndim == 0:
        return np.array2string(a.reshape(()), **kw)
    return np.array2string(a, **kw)


def _floatmode(a) -> str:
    # Paddle prints integral floats as "1." and others with every digit of the
    # precision ("0.25000000"): NumPy's 'maxprec' and 'fixed' modes respectively.
    if a.dtype.kind not in "fc" or a.size == 0:
        return "maxprec"
    vals = a.ravel()
    if a.size > _PRINT["threshold"]:
        vals = vals[: 2 * _PRINT["edgeitems"] * 1000]
    if a.dtype.kind == "c":
        vals = np.concatenate([vals.real, vals.imag])
    fin = vals[np.isfinite(vals)]
    return "maxprec" if np.all(fin == np.round(fin)) else "fixed"


def _format_tensor(t: Tensor) -> str:
    a = t.numpy()
    head = (f"Tensor(shape={list(a.shape)}, dtype={t.dtype.name}, place={t.place!r}, "
            f"stop_gradient={t._sg},")
    pad = " " * 7
    return f"{head}\n{pad}{_format_array(a, pad)})"
