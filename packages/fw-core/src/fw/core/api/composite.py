"""Paddle 3.3 functions and Tensor methods that are compositions of existing ops.

The dtype-cast methods (``x.float()``, ``x.long()``, …), ``zero_``, ``addmm``, ``atleast_*d``,
``as_complex``/``as_real``, ``from_numpy`` and the other names here add no op to the table: each
is a few calls of public functions (looked up in ``FUNCTIONS`` at call time, as they are built
after this module is imported), so gradients, IR building and devices come from those ops.
Semantics were checked against Paddle 3.3.1 (``tests/fixtures/paddle_parity_values.json``,
written by ``ci/gen_paddle_parity_fixture.py``).
"""

from __future__ import annotations

import operator

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import assign_inplace
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops import _api
from fw.core.ops._api import public
from fw.core.ops._args import as_ints
from fw.core.ops._infer import broadcast_shapes as _infer_broadcast
from fw.core.tensor import Tensor as _Tensor
from fw.core.tensor import is_tensor as _is_tensor
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
    try:
        dims = [operator.index(s) for s in size]
    except TypeError:
        raise InvalidTypeError(f"Tensor.{fname}: 'size' must be ints or one list of ints, "
                               f"got {list(size)!r}") from None
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"Tensor.{fname}: 'size' must not be negative, got {dims}")
    return dims


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
        *inputs (Tensor|list[Tensor]): The tensors (numbers are made tensors).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|list[Tensor]: one tensor for one input, else a list.

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

            >>> import fw
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
    "div_": "divide_", "sub_": "subtract_", "mul_": "multiply_",
}


# the second names that paddle.Tensor has as methods too
_METHOD_TOO = ("greater", "less", "less_", "reverse", "div_", "sub_", "mul_")
_api.SECOND_NAMES.update({new: (old, new in _METHOD_TOO) for new, old in _SAME_AS.items()})


# --- more Paddle 3.3 names --------------------------------------------------------------------

@public(method=True)
def rank(input):
    """The number of dimensions of ``input`` as a 0-D int32 tensor.

    Args:
        input (Tensor): the tensor.

    Returns:
        Tensor, 0-D int32.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.rank(fw.ones([2, 3])).item()
            2
    """
    return _to_tensor(np.int32(len(input.shape)))


@public(method=True)
def narrow(input, dim, start, length):
    """The slice ``[start, start + length)`` of ``input`` along ``dim``.

    Args:
        input (Tensor): the tensor.
        dim (int): the axis.
        start (int|Tensor): the first index (negative counts from the end).
        length (int): how many elements.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.narrow(fw.arange(6).reshape([2, 3]), 1, 1, 2).tolist()
            [[1, 2], [4, 5]]
    """
    nd = len(input.shape)
    if not -nd <= dim < nd:
        raise InvalidArgumentError(f"narrow: dim {dim} is out of range for a {nd}-D input")
    start = int(start.item() if hasattr(start, "item") else start)
    size = input.shape[dim]
    if start < 0:
        start += size
    if not (0 <= start <= size and 0 <= length and start + length <= size):
        raise InvalidArgumentError(
            f"narrow: start {start} and length {length} exceed dimension {dim} of size {size} "
            f"(input shape {list(input.shape)})")
    return _f("slice")(input, [dim], [start], [start + length])


@public(method=True)
def index_sample(x, index):
    """For each row i, pick ``x[i, index[i, j]]``: x [N, M], index [N, K] -> [N, K].

    Args:
        x (Tensor): 2-D.
        index (Tensor): 2-D int32/int64 with x's row count.

    Returns:
        Tensor, [N, K] of x's dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            >>> fw.index_sample(x, fw.to_tensor([[2, 0], [1, 1]])).tolist()
            [[3.0, 1.0], [5.0, 5.0]]
    """
    if len(x.shape) != 2 or len(index.shape) != 2 or x.shape[0] != index.shape[0]:
        raise InvalidArgumentError(
            f"index_sample: x and index must be 2-D with the same rows, got x shape "
            f"{list(x.shape)} and index shape {list(index.shape)}")
    return _f("take_along_axis")(x, index, 1)


@public(method=True)
def baddbmm(input, x, y, beta=1.0, alpha=1.0, name=None):
    """``beta * input + alpha * bmm(x, y)`` for batches of matrices.

    Args:
        input (Tensor): [B, M, N] (or broadcastable to it).
        x (Tensor): [B, M, K].
        y (Tensor): [B, K, N].
        beta (float, optional): Default 1.0.
        alpha (float, optional): Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor, [B, M, N].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a = fw.ones([1, 2, 2])
            >>> fw.baddbmm(a, a, a, beta=2.0).tolist()
            [[[4.0, 4.0], [4.0, 4.0]]]
    """
    if len(x.shape) != 3 or len(y.shape) != 3 or x.shape[2] != y.shape[1] \
            or x.shape[0] != y.shape[0]:
        raise InvalidArgumentError(
            f"baddbmm: x [B, M, K] and y [B, K, N] expected, got x shape {list(x.shape)} and "
            f"y shape {list(y.shape)}")
    return _f("add")(_f("scale")(input, beta), _f("scale")(_f("bmm")(x, y), alpha))


@public(method=True)
def baddbmm_(input, x, y, beta=1.0, alpha=1.0, name=None):
    """In-place ``baddbmm``: writes the result into input.

    Args:
        input (Tensor): [B, M, N] target.
        x (Tensor): [B, M, K].
        y (Tensor): [B, K, N].
        beta (float, optional): Default 1.0.
        alpha (float, optional): Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor, input itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a = fw.ones([1, 2, 2])
            >>> a.baddbmm_(a, a).tolist()
            [[[3.0, 3.0], [3.0, 3.0]]]
    """
    return assign_inplace("baddbmm_", input, baddbmm(input, x, y, beta, alpha))


@public(method=True)
def block_diag(inputs, name=None):
    """A block-diagonal matrix of the given 0-, 1- or 2-D tensors.

    Args:
        inputs (list[Tensor]): the blocks (a 1-D block is one row).
        name (str, optional): unused.

    Returns:
        Tensor, 2-D, of the promoted dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.block_diag([fw.ones([1, 1]), fw.ones([2, 1])]).tolist()
            [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    """
    blocks = []
    for i, t in enumerate(inputs):
        nd = len(t.shape)
        if nd > 2:
            raise InvalidArgumentError(
                f"block_diag: inputs must be 0-, 1- or 2-D, inputs[{i}] has shape "
                f"{list(t.shape)}")
        blocks.append(_f("reshape")(t, [1, -1] if nd < 2 else list(t.shape)))
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = _dt.promote_types(dtype, b.dtype)
    out_rows, c = [], 0
    for b in blocks:
        h, w = b.shape
        parts = [_f("zeros")([h, c], dtype=dtype), _f("cast")(b, dtype),
                 _f("zeros")([h, cols - c - w], dtype=dtype)]
        out_rows.append(_f("concat")(parts, axis=1))
        c += w
    return _f("concat")(out_rows, axis=0) if rows else _f("zeros")([0, 0])


@public()
def broadcast_shapes(*shapes):
    """The shape all the given shapes broadcast to (NumPy's rule).

    Args:
        *shapes (list[int]): the shapes.

    Returns:
        list[int].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.broadcast_shapes([2, 1], [3], [1, 1, 1])
            [1, 2, 3]
    """
    # the op table's rule (fw.broadcast_shape's too): it also takes dynamic (-1) dims
    args = [as_ints(s, "broadcast_shapes", f"shapes[{i}]") for i, s in enumerate(shapes)]
    try:
        return list(_infer_broadcast(*args, names=[f"shapes[{i}]" for i in range(len(args))]))
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"broadcast_shapes: {e}") from None


@public(method=True)  # the Tensor's own hand-written tolist stays its method
def tolist(x):
    """``x.tolist()``: the tensor's values as nested Python lists.

    Args:
        x (Tensor): the tensor.

    Returns:
        list (a scalar for a 0-D tensor).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.tolist(fw.to_tensor([1, 2]))
            [1, 2]
    """
    return x.tolist()


@public(method=True, aliases=("linalg.matrix_transpose",))
def matrix_transpose(x, name=None):
    """Swap the last two dimensions.

    Args:
        x (Tensor): at least 2-D.
        name (str, optional): unused.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.matrix_transpose(fw.ones([2, 3, 4])).shape
            [2, 4, 3]
    """
    nd = len(x.shape)
    if nd < 2:
        raise InvalidArgumentError(
            f"matrix_transpose: x must be at least 2-D, got shape {list(x.shape)}")
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    return _f("transpose")(x, perm)


@public(method=True)
def polar(abs, angle, name=None):  # noqa: A002 - Paddle's argument name
    """Build complex numbers from magnitudes and angles: ``abs * (cos(angle) + 1j * sin(angle))``.

    Args:
        abs (Tensor): The magnitudes (float32 or float64).
        angle (Tensor): The angles in radians, with abs's dtype (broadcast against abs).
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: complex64 for float32 inputs, complex128 for float64.

    Examples:
        >>> import fw
        >>> z = fw.polar(fw.to_tensor([2.0, 1.0]), fw.to_tensor([0.0, 1.5707964]))
        >>> print(z.numpy().round(4))
        [ 2.+0.j -0.+1.j]
    """
    return _f("complex")(_f("multiply")(abs, _f("cos")(angle)),
                         _f("multiply")(abs, _f("sin")(angle)))


@public(method=True)
def is_contiguous(x):
    """True: fw tensors are always dense and row-major.

    Args:
        x (Tensor): The tensor.

    Returns:
        bool: always True (fw tensors are dense and row-major).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.ones([2]).is_contiguous()
            True
    """
    return True


@public(method=True)
def contiguous(x):
    """``x`` itself: fw tensors are always dense and row-major (Paddle returns x too).

    Args:
        x (Tensor): The tensor.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a = fw.ones([2])
            >>> a.contiguous() is a
            True
    """
    return x


@public(method=True)
def requires_grad_(x, requires_grad=True):
    """Set whether autograd records operations on x (``stop_gradient = not requires_grad``).

    Args:
        x (Tensor): the tensor.
        requires_grad (bool, optional): Default True.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.ones([2]).requires_grad_().stop_gradient
            False
    """
    x.stop_gradient = not requires_grad
    return x


@public(method=True)
def fill_(x, value):
    """Fill x with ``value``, in place.

    Args:
        x (Tensor): the tensor.
        value (scalar): the value.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.zeros([2]).fill_(3.0).tolist()
            [3.0, 3.0]
    """
    return assign_inplace("fill_", x, _f("full_like")(x, value))


@public(method=True)
def isin(x, test_x, assume_unique=False, invert=False, name=None):
    """Whether each element of x occurs in ``test_x``.

    Args:
        x (Tensor): the elements to test.
        test_x (Tensor): the values to look for (any shape).
        assume_unique (bool, optional): accepted for Paddle compatibility (no faster path).
        invert (bool, optional): return "not in" instead. Default False.
        name (str, optional): unused.

    Returns:
        Tensor, bool, x's shape.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.isin(fw.to_tensor([1, 2, 3]), fw.to_tensor([2, 5])).tolist()
            [False, True, False]
    """
    flat = _f("reshape")(test_x, [-1])
    hit = _f("any")(_f("equal")(_f("unsqueeze")(x, -1), flat), axis=-1)
    return _f("logical_not")(hit) if invert else hit


@public(method=True)
def vander(x, n=None, increasing=False, name=None):
    """The Vandermonde matrix of a 1-D x: column j is ``x ** (n-1-j)`` (``x ** j`` when
    ``increasing``).

    Args:
        x (Tensor): 1-D.
        n (int, optional): the number of columns; default len(x).
        increasing (bool, optional): powers increase left to right. Default False.
        name (str, optional): unused.

    Returns:
        Tensor, [len(x), n].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.vander(fw.to_tensor([1.0, 2.0])).tolist()
            [[1.0, 1.0], [2.0, 1.0]]
    """
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"vander: x must be 1-D, got shape {list(x.shape)}")
    n = x.shape[0] if n is None else int(n)
    if n < 0:
        raise InvalidArgumentError(f"vander: n must be non-negative, got {n}")
    powers = list(range(n)) if increasing else list(range(n - 1, -1, -1))
    if not powers:
        return _f("zeros")([x.shape[0], 0], dtype=x.dtype)
    cols = [_f("pow")(x, float(p)) if x.dtype.is_floating_point or x.dtype.is_complex
            else _f("pow")(x, p) for p in powers]
    return _f("stack")(cols, axis=1)


@public(method=True)
def multigammaln(x, p, name=None):
    """The multivariate log-gamma function of dimension p:
    ``p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)``, j = 0 … p-1.

    Args:
        x (Tensor): float input, every element > (p-1)/2.
        p (int): the dimension, >= 1.
        name (str, optional): unused.

    Returns:
        Tensor, x's shape and dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(fw.multigammaln(fw.to_tensor([3.0]), 2).item(), 4)
            1.5502
    """
    p = int(p)
    if p < 1:
        raise InvalidArgumentError(f"multigammaln: p must be >= 1, got {p}")
    out = _f("lgamma")(x)
    for j in range(1, p):
        out = _f("add")(out, _f("lgamma")(_f("subtract")(x, _to_tensor(j / 2, dtype=x.dtype))))
    return _f("add")(out, _to_tensor(p * (p - 1) / 4 * np.log(np.pi), dtype=x.dtype))


@public(method=True)
def multigammaln_(x, p, name=None):
    """In-place ``multigammaln``.

    Args:
        x (Tensor): float input.
        p (int): the dimension.
        name (str, optional): unused.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(fw.to_tensor([3.0]).multigammaln_(2).item(), 4)
            1.5502
    """
    return assign_inplace("multigammaln_", x, multigammaln(x, p))


@public(method=True)
def renorm(x, p, axis, max_norm):
    """Rescale each slice along ``axis`` whose p-norm exceeds ``max_norm`` to norm max_norm.

    Args:
        x (Tensor): float input.
        p (float): the norm's order.
        axis (int): the slices are x's sub-tensors at each index of this axis.
        max_norm (float): the largest norm kept.

    Returns:
        Tensor, x's shape.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.renorm(fw.to_tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
            [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    nd = len(x.shape)
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"renorm: axis {axis} is out of range for a {nd}-D x")
    axis = axis % nd
    others = [d for d in range(nd) if d != axis]
    norm = _f("pow")(_f("sum")(_f("pow")(_f("abs")(x), float(p)), axis=others, keepdim=True),
                     1.0 / float(p))
    # as PyTorch and Paddle: the factor is max_norm / (norm + 1e-7) where norm > max_norm
    factor = _f("where")(_f("greater_than")(norm, _to_tensor(max_norm, dtype=norm.dtype)),
                         _f("divide")(_to_tensor(max_norm, dtype=norm.dtype),
                                      _f("add")(norm, _to_tensor(1e-7, dtype=norm.dtype))),
                         _f("ones_like")(norm))
    return _f("multiply")(x, factor)


@public(method=True)
def renorm_(x, p, axis, max_norm):
    """In-place ``renorm``.

    Args:
        x (Tensor): float input.
        p (float): the norm's order.
        axis (int): the slicing axis.
        max_norm (float): the largest norm kept.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([[3.0, 4.0]]).renorm_(2, 0, 1.0).tolist()
            [[0.6000000238418579, 0.800000011920929]]
    """
    return assign_inplace("renorm_", x, renorm(x, p, axis, max_norm))


@public(method=True)
def scatter_add(input, dim, index, src):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim`` (PyTorch's
    scatter_add: ``out[i][index[i][j]] += src[i][j]`` for dim 1).

    Args:
        input (Tensor): the base.
        dim (int): the axis.
        index (Tensor): int indices, src's shape.
        src (Tensor): the values added.

    Returns:
        Tensor, input's shape.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.scatter_add(fw.zeros([3]), 0, fw.to_tensor([0, 0, 2]),
            ...                fw.to_tensor([1.0, 2.0, 3.0])).tolist()
            [3.0, 0.0, 3.0]
    """
    return _f("put_along_axis")(input, index, src, dim, reduce="add", broadcast=False)


@public(method=True)
def scatter_add_(input, dim, index, src):
    """In-place ``scatter_add``.

    Args:
        input (Tensor): the target.
        dim (int): the axis.
        index (Tensor): int indices.
        src (Tensor): the values added.

    Returns:
        Tensor, input itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.zeros([2]).scatter_add_(0, fw.to_tensor([1]), fw.to_tensor([5.0])).tolist()
            [0.0, 5.0]
    """
    return assign_inplace("scatter_add_", input, scatter_add(input, dim, index, src))


@public(method=True)
def softmax(input, dim=None, dtype=None, *, out=None):
    """``paddle.softmax`` (PyTorch's signature): softmax along ``dim`` (the last axis when
    None), computed in ``dtype`` when given.

    Args:
        input (Tensor): float input.
        dim (int, optional): the axis; default the last.
        dtype (str|fw.dtype, optional): cast input to it first.
        out (Tensor, optional): not supported; must be None.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.softmax(fw.zeros([2])).tolist()
            [0.5, 0.5]
    """
    if out is not None:
        raise InvalidArgumentError("softmax: out= is not supported by fw; use the return value")
    if dtype is not None:
        input = _f("cast")(input, dtype)
    return _api.call("softmax", input, axis=-1 if dim is None else int(dim))


@public(method=True)
def repeat(input, repeats, *more):
    """Tile ``input``: ``x.repeat(2, 1)`` repeats twice along axis 0 (PyTorch's
    Tensor.repeat, Paddle 3.3's method).

    Args:
        input (Tensor): the tensor.
        repeats (int|list[int]|Tensor): repetitions per axis (several ints also accepted).

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.ones([2, 3]).repeat(2, 1).shape
            [4, 3]
    """
    if more:
        repeats = [repeats, *more]
    elif isinstance(repeats, int):
        repeats = [repeats]
    return _f("tile")(input, repeats)


@public(method=True)
def split_with_sizes(x, split_sizes, dim=0):
    """Split x along ``dim`` into pieces of the given sizes.

    Args:
        x (Tensor): the tensor.
        split_sizes (list[int]): the sizes; they must sum to x.shape[dim].
        dim (int, optional): the axis. Default 0.

    Returns:
        list[Tensor].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> [t.shape for t in fw.ones([2, 3]).split_with_sizes([1, 2], 1)]
            [[2, 1], [2, 2]]
    """
    if sum(split_sizes) != x.shape[dim]:
        raise InvalidArgumentError(
            f"split_with_sizes: split_sizes {list(split_sizes)} must sum to x.shape[{dim}] = "
            f"{x.shape[dim]} (x shape {list(x.shape)})")
    return _f("split")(x, list(split_sizes), axis=dim)


@public(method=True)
def is_same_shape(x, y):
    """Whether x and y have the same shape.

    Args:
        x (Tensor): one tensor.
        y (Tensor): the other.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.ones([2]).is_same_shape(fw.zeros([2]))
            True
    """
    return list(x.shape) == list(y.shape)


@public(method=True)
def apply(x, func):
    """``func(x)`` computed without recording gradients (Paddle: for tensors that do not
    require grad).

    Args:
        x (Tensor): the tensor.
        func (callable): Tensor -> Tensor.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0]).apply(lambda t: t * 2).tolist()
            [2.0]
    """
    if not x.stop_gradient:
        raise InvalidArgumentError("apply: x requires grad (stop_gradient=False); apply "
                                   "works only on tensors that do not")
    return func(x)


@public(method=True)
def apply_(x, func):
    """In-place ``apply``: writes ``func(x)`` into x.

    Args:
        x (Tensor): the tensor (stop_gradient must be True).
        func (callable): Tensor -> Tensor of x's shape.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.to_tensor([1.0]).apply_(lambda t: t + 1).tolist()
            [2.0]
    """
    return assign_inplace("apply_", x, apply(x, func))


@public("range")  # not named range here: the module's own code uses the builtin
def range_(start=0, end=None, step=1, dtype=None, name=None):
    """Values from ``start`` to ``end`` *inclusive* by ``step`` (deprecated in Paddle 3.3 in
    favour of ``arange``, which excludes ``end``); ``range(n)`` is ``0 … n``.

    Args:
        start (float, optional): Default 0.
        end (float, optional): the last value (included); ``range(n)``: 0 … n.
        step (float, optional): Default 1.
        dtype (str|fw.dtype, optional): default the default float dtype.
        name (str, optional): unused.

    Returns:
        Tensor, 1-D.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.range(0, 3).tolist()
            [0.0, 1.0, 2.0, 3.0]
    """
    if end is None:
        start, end = 0, start
    start, end, step = (float(v.item() if hasattr(v, "item") else v) for v in (start, end, step))
    if step == 0:
        raise InvalidArgumentError("range: step must not be 0")
    count = int(np.floor((end - start) / step)) + 1
    return _f("arange")(start, start + max(count, 0) * step - step / 2, step,
                        dtype=dtype or _dt.get_default_dtype())


@public(method=True)
def gammaln_(x, name=None):
    """In-place ``gammaln`` (log |Gamma(x)|).

    Args:
        x (Tensor): float input.
        name (str, optional): unused.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> round(fw.to_tensor([3.0]).gammaln_().item(), 4)
            0.6931
    """
    return assign_inplace("gammaln_", x, _f("gammaln")(x))


@public(method=True)
def where_(condition, x=None, y=None, name=None):
    """In-place ``where``: writes ``where(condition, x, y)`` into x.

    Args:
        condition (Tensor): bool, broadcast to x's shape.
        x (Tensor): the target, taken where condition is True.
        y (Tensor|scalar): taken where it is False.
        name (str, optional): unused.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0])
            >>> fw.where_(fw.to_tensor([True, False]), x, fw.zeros([2])).tolist()
            [1.0, 0.0]
    """
    if x is None or y is None:
        raise InvalidArgumentError("where_: x and y are required (x is written in place)")
    return assign_inplace("where_", x, _f("where")(condition, x, y))


@public(method=True)
def combinations(x, r=2, with_replacement=False, name=None):
    """The length-r combinations of a 1-D tensor's elements, one per row (itertools order).

    Args:
        x (Tensor): 1-D.
        r (int, optional): the combination length. Default 2.
        with_replacement (bool, optional): allow repeated elements. Default False.
        name (str, optional): unused.

    Returns:
        Tensor, [number of combinations, r].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.combinations(fw.to_tensor([1, 2, 3])).tolist()
            [[1, 2], [1, 3], [2, 3]]
    """
    import itertools

    if len(x.shape) != 1:
        raise InvalidArgumentError(f"combinations: x must be 1-D, got shape {list(x.shape)}")
    if r < 0:
        raise InvalidArgumentError(f"combinations: r must be non-negative, got {r}")
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(gen(np.arange(x.shape[0]), r)), dtype="int64").reshape(-1, r)
    if idx.size == 0:
        return _f("zeros")([0, r] if r else [0], dtype=x.dtype)
    flat = _f("index_select")(x, _to_tensor(idx.reshape(-1)), axis=0)
    return _f("reshape")(flat, list(idx.shape))


@public(method=True)
def multiplex(inputs, index, name=None):
    """Row i of the result is row i of ``inputs[index[i]]``.

    Args:
        inputs (list[Tensor]): tensors of one shape [N, …].
        index (Tensor): [N, 1] int32/int64, values in [0, len(inputs)).
        name (str, optional): unused.

    Returns:
        Tensor, [N, …].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> a, b = fw.zeros([2, 2]), fw.ones([2, 2])
            >>> fw.multiplex([a, b], fw.to_tensor([[1], [0]])).tolist()
            [[1.0, 1.0], [0.0, 0.0]]
    """
    if not inputs:
        raise InvalidArgumentError("multiplex: inputs must hold at least one tensor")
    n = inputs[0].shape[0]
    if list(index.shape) not in ([n, 1], [n]):
        raise InvalidArgumentError(
            f"multiplex: index must be [N, 1] with N = {n} rows, got shape {list(index.shape)}")
    stacked = _f("stack")(list(inputs), axis=0)  # [K, N, ...]
    rest = list(stacked.shape[2:])
    sel = _f("reshape")(_f("cast")(index, "int64"), [1, n] + [1] * len(rest))
    sel = _f("expand")(sel, [1, n] + rest)
    return _f("squeeze")(_f("take_along_axis")(stacked, sel, 0), axis=0)


@public(method=True)  # Paddle's Tensor has it too (self is the index)
def scatter_nd(index, updates, shape, name=None):
    """A zero tensor of ``shape`` with ``updates`` added at the N-d ``index`` (duplicates add).

    Args:
        index (Tensor): [..., K] int indices into the first K axes of shape.
        updates (Tensor): index.shape[:-1] + shape[K:].
        shape (list[int]): the result's shape.
        name (str, optional): unused.

    Returns:
        Tensor, of updates' dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.scatter_nd(fw.to_tensor([[1], [1], [0]]), fw.to_tensor([1.0, 2.0, 3.0]),
            ...               [3]).tolist()
            [3.0, 3.0, 0.0]
    """
    return _f("scatter_nd_add")(_f("zeros")(list(shape), dtype=updates.dtype), index, updates)


@public(method=True)
def unfold(x, axis, size, step, name=None):
    """The sliding windows of ``size`` elements every ``step`` along ``axis``: that axis
    becomes the window count and a new last axis of length ``size`` is added.

    Args:
        x (Tensor): the tensor.
        axis (int): the axis to slide along.
        size (int): the window length.
        step (int): the stride between windows.
        name (str, optional): unused.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.arange(4).unfold(0, 2, 1).tolist()
            [[0, 1], [1, 2], [2, 3]]
    """
    nd = len(x.shape)
    if not -nd <= axis < max(nd, 1):
        raise InvalidArgumentError(f"unfold: axis {axis} is out of range for a {nd}-D x")
    axis = axis % max(nd, 1)
    length = x.shape[axis]
    if size <= 0 or step <= 0 or size > length:
        raise InvalidArgumentError(
            f"unfold: need 0 < size <= x.shape[{axis}] = {length} and step > 0, got size "
            f"{size}, step {step}")
    count = (length - size) // step + 1
    wins = [_f("slice")(x, [axis], [i * step], [i * step + size]) for i in range(count)]
    out = _f("stack")(wins, axis=axis)  # [..., count, size(at axis + 1), ...]
    return _f("moveaxis")(out, axis + 1, -1)


@public()
def rand_like(input, name=None, *, dtype=None, device=None, requires_grad=False):
    """Uniform [0, 1) values with input's shape and dtype (or ``dtype``).

    Args:
        input (Tensor): the tensor whose shape (and dtype) is used.
        name (str, optional): unused.
        dtype (str|fw.dtype, optional): default input.dtype.
        device (str|Place, optional): not supported other than None (the current device).
        requires_grad (bool, optional): sets stop_gradient = not requires_grad.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.rand_like(fw.ones([2, 3])).shape
            [2, 3]
    """
    out = _f("rand")(list(input.shape), dtype=dtype or input.dtype)
    out.stop_gradient = not requires_grad
    return out


@public()
def randn_like(x, dtype=None, name=None, *, device=None, requires_grad=False):
    """Standard normal values with x's shape and dtype (or ``dtype``).

    Args:
        x (Tensor): the tensor whose shape (and dtype) is used.
        dtype (str|fw.dtype, optional): default x.dtype.
        name (str, optional): unused.
        device (str|Place, optional): not supported other than None (the current device).
        requires_grad (bool, optional): sets stop_gradient = not requires_grad.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.randn_like(fw.ones([2])).dtype == fw.float32
            True
    """
    out = _f("randn")(list(x.shape), dtype=dtype or x.dtype)
    out.stop_gradient = not requires_grad
    return out


@public()
def log_normal(mean=1.0, std=2.0, shape=None, name=None):
    """``exp(normal(mean, std, shape))``: log-normally distributed values.

    Args:
        mean (float|Tensor, optional): mean of the underlying normal. Default 1.0.
        std (float|Tensor, optional): its standard deviation. Default 2.0.
        shape (list[int], optional): the shape (when mean and std are numbers).
        name (str, optional): unused.

    Returns:
        Tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> bool((fw.log_normal(shape=[4]) > 0).all())
            True
    """
    return _f("exp")(_f("normal")(mean, std, shape))


@public(method=True)
def log_normal_(x, mean=1.0, std=2.0, name=None):
    """Fill x, in place, with ``exp(normal(mean, std))`` draws.

    Args:
        x (Tensor): the float tensor to fill.
        mean (float, optional): mean of the underlying normal. Default 1.0.
        std (float, optional): its standard deviation. Default 2.0.
        name (str, optional): unused.

    Returns:
        Tensor, x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> bool((fw.zeros([3]).log_normal_() > 0).all())
            True
    """
    draw = _f("exp")(_f("normal")(float(mean), float(std), list(x.shape)))
    return assign_inplace("log_normal_", x, _f("cast")(draw, x.dtype))


@public()
def disable_signal_handler():
    """Paddle removes its own C++ signal handlers here; fw installs none, so there is
    nothing to remove.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.disable_signal_handler()
    """
    return None


# Paddle's Tensor also has these functions as methods
for _name in ("concat", "stack", "broadcast_tensors", "broadcast_shape", "broadcast_shapes",
              "block_diag", "slice"):
    _api.SECOND_NAMES.setdefault(_name, (_name, True))
_api.SECOND_NAMES.setdefault("slogdet", ("linalg.slogdet", True, False))  # a method only
_api.METHODS.setdefault("is_tensor", _is_tensor)


# --- memory-layout queries (fw tensors are dense, row-major, offset 0) -------------------------

def _strides(t):
    out, acc = [], 1
    for d in reversed(list(t.shape)):
        out.append(acc)
        acc *= max(int(d), 1)
    return out[::-1]


def _stride(self, dim=None):
    """Element strides of the (dense, row-major) tensor; one axis's with ``dim``.

    Args:
        dim (int, optional): One axis; None gives all of them. Default: None.

    Returns:
        list[int]|int: the number of elements to step over per index of each axis.

    Examples:
        >>> import fw
        >>> fw.zeros([2, 3, 4]).stride()
        [12, 4, 1]
        >>> fw.zeros([2, 3, 4]).stride(1)
        4
    """
    st = _strides(self)
    return st if dim is None else st[dim]


def _data_ptr(self):
    """The address of the tensor's first element (NumPy or CuPy buffer).

    Returns:
        int: the memory address.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2])
        >>> x.data_ptr() == x.numpy().ctypes.data
        True
    """
    data = self._data
    if hasattr(data, "ctypes"):
        return int(data.ctypes.data)
    return int(data.data.ptr)


_LAYOUT = {
    "itemsize": property(lambda self: int(np.dtype(self._data.dtype).itemsize), doc="""Bytes
per element.

Returns:
    int: the element size of the dtype.

Examples:
    >>> import fw
    >>> fw.zeros([3], dtype="float32").itemsize, fw.zeros([3], dtype="int64").itemsize
    (4, 8)
"""),
    "is_cuda": property(lambda self: self.place.is_gpu_place(), doc="""Whether the tensor
lives on a GPU.

Returns:
    bool: True for a GPU tensor.

Examples:
    >>> import fw
    >>> fw.ones([2]).cpu().is_cuda
    False
"""),
    "strides": property(_strides, doc="""Element strides of the tensor: fw's tensors are
dense and row-major, so the last axis steps by 1.

Returns:
    list[int]: the number of elements to step over per index of each axis.

Examples:
    >>> import fw
    >>> fw.zeros([2, 3, 4]).strides
    [12, 4, 1]
"""),
    "offset": property(lambda self: 0, doc="""Element offset of the tensor into its storage:
always 0 in fw (a view is its own array).

Returns:
    int: 0.

Examples:
    >>> import fw
    >>> fw.arange(6).reshape([2, 3])[1].offset
    0
"""),
}
def _get_strides(self):
    """Paddle's name for the element strides of the (dense, row-major) tensor.

    Returns:
        list[int]: the strides, one per axis.

    Examples:
        >>> import fw
        >>> fw.zeros([2, 3]).get_strides()
        [3, 1]
    """
    return _strides(self)


_LAYOUT_METHODS = {"stride": _stride, "get_strides": _get_strides, "data_ptr": _data_ptr}


def install_layout(cls):
    """Attach the layout queries to Tensor (called by fw.core at import)."""
    for k, v in {**_LAYOUT, **_LAYOUT_METHODS}.items():
        if k not in cls.__dict__:
            setattr(cls, k, v)


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

    doc = f"""A {dtype} tensor (PyTorch's legacy ``torch.{name}`` constructor).

    ``{name}(data)`` is a {dtype} tensor of ``data``; ``{name}(d0, d1, …)`` an
    uninitialised (zero-filled in fw) {dtype} tensor of that shape; ``{name}()`` an empty one.

    Args:
        *args (list|tuple|Tensor|int): The data (one list, tuple, tensor or array), or the
            sizes of the dimensions as ints.

    Returns:
        Tensor: a new {dtype} tensor.

    Examples:
        >>> import fw
        >>> fw.{name}([1, 0]).shape
        [2]
        >>> fw.{name}(2, 3).shape, fw.{name}(2, 3).dtype
        ([2, 3], fw.{dtype})
    """
    return type(name, (), {"__new__": __new__, "__doc__": doc, "__module__": "fw"})


TENSOR_TYPES = {n: _tensor_type(n, d) for n, d in _TENSOR_TYPES.items()}

install_layout(_Tensor)
