"""Paddle 3.3 functions and Tensor methods that are compositions of existing ops.

The dtype-cast methods (``x.float()``, ``x.long()``, …), ``zero_``, ``addmm``, ``atleast_*d``,
``as_complex``/``as_real``, ``from_numpy`` and the other names here add no op to the table: each
is a few calls of public functions (looked up in ``FUNCTIONS`` at call time, as they are built
after this module is imported), so gradients, IR building and devices come from those ops.
Semantics were checked against Paddle 3.3.1 (``tests/fixtures/paddle_parity_values.json``,
written by ``ci/gen_paddle_parity_fixture.py``).
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import assign_inplace
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops import _api
from fw.core.ops._api import public
from fw.core.tensor import to_tensor as _to_tensor


def _f(name):
    return _api.FUNCTIONS[name]


# --- dtype casts: Tensor.float() … (Paddle 3.3: x.float() is x.astype("float32"), etc.) -------

_CASTS = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "int": "int32", "long": "int64", "short": "int16", "char": "int8", "byte": "uint8",
    "bool": "bool", "cfloat": "complex64", "cdouble": "complex128",
    "float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8",
    "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "complex64": "complex64", "complex128": "complex128",
}


def _make_cast(mname: str, dtype: str):
    def cast_method(self):
        return _f("cast")(self, dtype)

    cast_method.__name__ = cast_method.__qualname__ = mname
    cast_method.__doc__ = f"""Cast to {dtype}: ``x.{mname}()`` is ``x.astype("{dtype}")``.

    Returns:
        Tensor, with dtype {dtype} and x's shape.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> str(fw.to_tensor([1, 0]).{mname}().dtype).endswith("{dtype}")
            True
    """
    return cast_method


for _m, _d in _CASTS.items():
    _api.METHODS[_m] = _make_cast(_m, _d)


@public(method=True)
def type_as(x, other):
    """Cast ``x`` to the dtype of ``other``.

    Args:
        x (Tensor): the input.
        other (Tensor): the tensor whose dtype is taken.

    Returns:
        Tensor, x cast to other.dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1, 2]).type_as(fw.to_tensor([0.5])).dtype == fw.float32
            True
    """
    return _f("cast")(x, other.dtype)


# --- in-place fills ------------------------------------------------------------------------------

@public(method=True)
def zero_(x):
    """Fill ``x`` with zeros, in place.

    Args:
        x (Tensor): the tensor to fill.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0, 2.0]).zero_().tolist()
            [0.0, 0.0]
    """
    return assign_inplace("zero_", x, _f("zeros_like")(x))


# --- new_* constructors (same dtype and place as self unless given) ----------------------------

def _shape_arg(fname, size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return [int(s) for s in size]


@public(method=True)
def new_zeros(x, *size, dtype=None):
    """A zero tensor of shape ``size`` with x's dtype (or ``dtype``).

    Args:
        x (Tensor): the tensor whose dtype is used.
        *size (int|list[int]): the shape.
        dtype (str|fw.dtype, optional): the dtype; default x.dtype.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0]).new_zeros([2, 3]).shape
            [2, 3]
    """
    return _f("zeros")(_shape_arg("new_zeros", size), dtype=dtype or x.dtype)


@public(method=True)
def new_ones(x, *size, dtype=None):
    """A tensor of ones of shape ``size`` with x's dtype (or ``dtype``).

    Args:
        x (Tensor): the tensor whose dtype is used.
        *size (int|list[int]): the shape.
        dtype (str|fw.dtype, optional): the dtype; default x.dtype.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1]).new_ones(2).tolist()
            [1, 1]
    """
    return _f("ones")(_shape_arg("new_ones", size), dtype=dtype or x.dtype)


@public(method=True)
def new_full(x, size, fill_value, dtype=None):
    """A tensor of shape ``size`` filled with ``fill_value``, with x's dtype (or ``dtype``).

    Args:
        x (Tensor): the tensor whose dtype is used.
        size (list[int]): the shape.
        fill_value (scalar): the value.
        dtype (str|fw.dtype, optional): the dtype; default x.dtype.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0]).new_full([2], 7.0).tolist()
            [7.0, 7.0]
    """
    return _f("full")(_shape_arg("new_full", (size,)), fill_value, dtype=dtype or x.dtype)


@public(method=True)
def new_empty(x, *size, dtype=None):
    """An uninitialised tensor of shape ``size`` with x's dtype (or ``dtype``); fw fills it
    with zeros.

    Args:
        x (Tensor): the tensor whose dtype is used.
        *size (int|list[int]): the shape.
        dtype (str|fw.dtype, optional): the dtype; default x.dtype.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0]).new_empty(3).shape
            [3]
    """
    return _f("empty")(_shape_arg("new_empty", size), dtype=dtype or x.dtype)


# --- linear algebra compositions ---------------------------------------------------------------

@public(method=True)
def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):
    """``beta * input + alpha * (x @ y)`` (Paddle's argument order: input, x, y).

    Args:
        input (Tensor): added, broadcast to the product's shape.
        x (Tensor): [M, K] matrix.
        y (Tensor): [K, N] matrix.
        beta (float, optional): scale of input. Default 1.0.
        alpha (float, optional): scale of the product. Default 1.0.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor, [M, N].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a = fw.ones([2, 2])
            >>> fw.addmm(a, a, a, beta=0.5, alpha=2.0).tolist()
            [[4.5, 4.5], [4.5, 4.5]]
    """
    if len(x.shape) != 2 or len(y.shape) != 2:
        raise InvalidArgumentError(
            f"addmm: x and y must be 2-D, got x shape {list(x.shape)} and y shape "
            f"{list(y.shape)}")
    if x.shape[1] != y.shape[0]:
        raise InvalidArgumentError(
            f"addmm: x's columns must equal y's rows, got x shape {list(x.shape)} and y shape "
            f"{list(y.shape)}")
    return _f("add")(_f("scale")(input, beta), _f("scale")(_f("matmul")(x, y), alpha))


@public(method=True)
def addmm_(input, x, y, beta=1.0, alpha=1.0, name=None):
    """In-place ``addmm``: writes ``beta * input + alpha * (x @ y)`` into input.

    Args:
        input (Tensor): the target, with the product's shape.
        x (Tensor): [M, K] matrix.
        y (Tensor): [K, N] matrix.
        beta (float, optional): Default 1.0.
        alpha (float, optional): Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor, input itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a = fw.ones([2, 2])
            >>> a.addmm_(a, a).tolist()
            [[3.0, 3.0], [3.0, 3.0]]
    """
    return assign_inplace("addmm_", input, addmm(input, x, y, beta, alpha))


@public(method=True)
def add_n(inputs, name=None):
    """Sum of a list of tensors of the same shape and dtype.

    Args:
        inputs (Tensor|list[Tensor]): the tensors.
        name (str, optional): unused.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.add_n([fw.ones([2]), fw.ones([2]), fw.ones([2])]).tolist()
            [3.0, 3.0]
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if not inputs:
        raise InvalidArgumentError("add_n: inputs must hold at least one tensor, got none")
    shape = list(inputs[0].shape)
    for i, t in enumerate(inputs[1:], 1):
        if list(t.shape) != shape:
            raise InvalidArgumentError(
                f"add_n: every input must have the same shape; inputs[0] has {shape}, "
                f"inputs[{i}] has {list(t.shape)}")
    out = inputs[0]
    for t in inputs[1:]:
        out = _f("add")(out, t)
    return out if len(inputs) > 1 else _f("assign")(out)


# --- complex views ------------------------------------------------------------------------------

@public(method=True, aliases=("view_as_complex",), method_aliases=("view_as_complex",))
def as_complex(x, name=None):
    """Read a real tensor whose last dimension is 2 as complex (real, imag) pairs.

    Args:
        x (Tensor): float32/float64 tensor with last dimension 2.
        name (str, optional): unused.

    Returns:
        Tensor, complex64/complex128, with the last dimension dropped.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.as_complex(fw.to_tensor([[1.0, 2.0]])).shape
            [1]
    """
    if not x.shape or x.shape[-1] != 2:
        raise InvalidArgumentError(
            f"as_complex: the last dimension of x must be 2, got shape {list(x.shape)}")
    if x.dtype not in (_dt.float32, _dt.float64):
        raise InvalidTypeError(f"as_complex: x must be float32 or float64, got {x.dtype}")
    re, im = _f("unbind")(x, axis=-1)
    return _f("complex")(re, im)


@public(method=True, aliases=("view_as_real",), method_aliases=("view_as_real",))
def as_real(x, name=None):
    """Split a complex tensor into a real one with a last dimension of 2 (real, imag).

    Args:
        x (Tensor): complex64/complex128 tensor.
        name (str, optional): unused.

    Returns:
        Tensor, float32/float64, shape x.shape + [2].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.as_real(fw.as_complex(fw.to_tensor([[1.0, 2.0]]))).tolist()
            [[1.0, 2.0]]
    """
    if x.dtype not in (_dt.complex64, _dt.complex128):
        raise InvalidTypeError(f"as_real: x must be complex64 or complex128, got {x.dtype}")
    return _f("stack")([_f("real")(x), _f("imag")(x)], axis=-1)


# --- atleast_Nd ---------------------------------------------------------------------------------

def _atleast(fname, n, inputs):
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    outs = []
    for t in inputs:
        if not hasattr(t, "shape"):
            t = _to_tensor(t)
        shape = list(t.shape)
        if len(shape) < n:
            # numpy/Paddle place: 0-D -> [1]*n; 1-D [k] -> [1, k] / [1, k, 1]; 2-D -> [.., 1]
            if len(shape) == 0:
                new = [1] * n
            elif len(shape) == 1:
                new = [1, shape[0]] + ([1] if n == 3 else [])
            else:
                new = shape + [1]
            t = _f("reshape")(t, new)
        outs.append(t)
    return outs[0] if len(outs) == 1 else outs


def _atleast_doc(n):
    return f"""View each input with at least {n} dimensions (NumPy's rule for where new axes go).

    Args:
        *inputs (Tensor|list[Tensor]): tensors or numbers.

    Returns:
        Tensor for one input, else list[Tensor].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> len(fw.atleast_{n}d(fw.to_tensor(1.0)).shape)
            {n}
    """


def atleast_1d(*inputs, name=None):
    return _atleast("atleast_1d", 1, inputs)


def atleast_2d(*inputs, name=None):
    return _atleast("atleast_2d", 2, inputs)


def atleast_3d(*inputs, name=None):
    return _atleast("atleast_3d", 3, inputs)


for _n, _fn in ((1, atleast_1d), (2, atleast_2d), (3, atleast_3d)):
    _fn.__doc__ = _atleast_doc(_n)
    public(method=True)(_fn)


# --- NumPy interop ------------------------------------------------------------------------------

@public()
def from_numpy(ndarray):
    """A tensor from a NumPy array, keeping its dtype and shape.

    Args:
        ndarray (numpy.ndarray): the array.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw, numpy as np
            >>> fw.from_numpy(np.arange(3, dtype="int32")).dtype == fw.int32
            True
    """
    if not isinstance(ndarray, np.ndarray):
        raise InvalidTypeError(
            f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    return _to_tensor(ndarray)


# --- Paddle 3.3 name aliases of existing functions ----------------------------------------------

_SAME_AS = {
    # Paddle 3.3 name -> the fw function it is (per Paddle 3.3.1's module listing)
    "concatenate": "concat", "greater": "greater_than", "less": "less_than",
    "ger": "outer", "reverse": "flip", "less_": "less_than_",
}


_METHOD_TOO = ("greater", "less", "less_", "reverse")  # the ones paddle.Tensor has too
_api.SECOND_NAMES.update({new: (old, new in _METHOD_TOO) for new, old in _SAME_AS.items()})


# --- FloatTensor, LongTensor, …: Paddle 3.3 makes each a callable class whose construction
# returns a plain Tensor of its dtype (paddle/tensor/creation.py, dtype_tensor_factory) --------

_TENSOR_TYPES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
    "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64", "BoolTensor": "bool",
}


def _tensor_type(name: str, dtype: str) -> type:
    def __new__(cls, *args, **kwargs):
        if not args:
            return _f("empty")([0], dtype=dtype)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return _to_tensor(list(args[0]), dtype=dtype)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return _f("empty")(list(args), dtype=dtype)
        if len(args) == 1 and hasattr(args[0], "shape"):
            return _to_tensor(args[0], dtype=dtype)
        raise InvalidTypeError(
            f"{name}: expected a list/tuple of values, a tensor/array or integer sizes, got "
            f"{', '.join(type(a).__name__ for a in args)}")

    doc = f"""``{name}(data)`` is a {dtype} tensor of ``data``; ``{name}(d0, d1, …)`` an
    uninitialised (zero-filled in fw) {dtype} tensor of that shape; ``{name}()`` an empty one.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.{name}([1, 0]).shape
            [2]
    """
    return type(name, (), {"__new__": __new__, "__doc__": doc, "__module__": "fw"})


TENSOR_TYPES = {n: _tensor_type(n, d) for n, d in _TENSOR_TYPES.items()}
