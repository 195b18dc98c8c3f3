"""Paddle 3.3's remaining ``paddle.Tensor`` members and in-place functions.

- In-place variants that change what an in-place op normally cannot: ``cast_`` (the
  dtype) and ``transpose_`` / ``resize_`` / ``set_`` (the shape, or the storage). They
  give the tensor a new array (`Tensor._replace_data`, which bumps its version) and,
  when the result carries a gradient, rebase the tensor onto it (as `assign_inplace`
  does for same-shape writes).
- Random fills: ``cauchy_``, ``geometric_``, ``random_`` (fw's generator; ``fw.seed``).
- ``fill_diagonal_``, ``fill_diagonal_tensor(_)``, ``copy_``, ``top_p_sampling`` and the
  methods that forward to existing functions (``histogramdd``, ``stft``, ``istft``).
- Descriptive members: ``data``, ``device``, ``get_device``, ``grad_``, ``grad_fn``,
  ``inplace_version``, ``layout``, ``type``, ``value``/``get_tensor``, the distributed
  attributes of a non-distributed tensor (``is_dist``, ``placements``, ``process_mesh``,
  ``num_shard``), and the sparse / SelectedRows queries of a dense tensor (Paddle's
  answers: ``sparse_dim() == 0``, ``dense_dim() == ndim``; ``indices()`` & co. raise
  because a dense tensor has none — fw.sparse's tensors have their own).

Semantics were checked side by side with Paddle 3.3.1 (``tests/test_tensor_methods.py``
holds the values). Where Paddle's own code is not what its docstring promises
(``cauchy_`` draws ``tan(pi * (normal - 0.5))``) fw follows the documented distribution;
docs/paddle_differences.md lists it.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import dtypes as _dt
from fw.core.dispatch import assign_inplace, grad_state
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError
from fw.core.ops import _api
from fw.core.ops._api import public
from fw.core.tensor import Tensor as _Tensor
from fw.core.tensor import to_tensor as _to_tensor
from fw.core.tensor import version_of as _version_of


def _f(name):
    return _api.FUNCTIONS[name]


def _is_value(x) -> bool:
    return not isinstance(x, _Tensor)


def _rebind(op_name, x, out):
    """x takes `out`'s array (any shape/dtype) and its autograd history."""
    if _is_value(x) or _is_value(out):  # building a program: values are immutable
        return assign_inplace(op_name, x, out)
    needs_grad = not out._sg
    if needs_grad and grad_state.enabled and x._node is None and not x._sg:
        raise InvalidArgumentError(
            f"{op_name}: x is a leaf tensor that requires grad (stop_gradient=False); an "
            f"in-place op on it would lose its gradient. Use the out-of-place op, or do it "
            f"under fw.no_grad()")
    x._replace_data(out._data)
    if needs_grad and grad_state.rebase is not None:
        grad_state.rebase(x, out)
    elif not needs_grad and x._node is not None and grad_state.enabled:
        x._node = None
        x._sg = True
    return x


@public(method=True)
def cast_(x, dtype):
    """Cast x to `dtype` in place (x's dtype changes; Paddle's ``paddle.cast_``).

    Args:
        x (Tensor): the tensor.
        dtype (str | fw.dtype): the new dtype.

    Returns:
        Tensor: x itself, now of `dtype`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([1.5, 2.0])
            >>> y = x.cast_("int32")
            >>> y is x, x.dtype, x.tolist()
            (True, fw.int32, [1, 2])
    """
    return _rebind("cast_", x, _f("cast")(x, dtype))


@public(method=True)
def transpose_(x, perm, name=None):
    """Permute the axes of x in place (x's shape changes).

    Args:
        x (Tensor): the tensor.
        perm (list[int]): the new order of the axes.
        name (str, optional): unused.

    Returns:
        Tensor: x itself, with shape ``[x.shape[i] for i in perm]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([[1.0, 2.0, 3.0]])
            >>> x.transpose_([1, 0]) is x, x.shape
            (True, [3, 1])
    """
    return _rebind("transpose_", x, _f("transpose")(x, perm))


@public(method=True)
def resize_(x, shape, fill_zero=False, name=None):
    """Resize x in place to `shape`, keeping its elements in row-major order: a
    smaller size keeps the first elements, a larger one appends zeros.

    Args:
        x (Tensor): the tensor.
        shape (list[int] | tuple[int]): the new shape.
        fill_zero (bool, optional): Paddle leaves the new elements uninitialised unless
            True; fw always zeroes them (no uninitialised memory is exposed).
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0, 3.0, 4.0])
            >>> x.resize_([2, 3], fill_zero=True).tolist()
            [[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]]
    """
    if not isinstance(shape, (list, tuple)):
        raise InvalidTypeError(f"resize_: shape must be a list or tuple, got "
                               f"{type(shape).__name__}")
    shape = [int(s) for s in shape]
    if any(s < 0 for s in shape):
        raise InvalidArgumentError(f"resize_: shape {shape} has a negative size")
    new, old = math.prod(shape), math.prod(x.shape)
    flat = _f("flatten")(x)
    if new > old:
        flat = _f("concat")([flat, _f("zeros")([new - old], dtype=x.dtype)])
    elif new < old:
        flat = flat[:new]
    return _rebind("resize_", x, _f("reshape")(flat, shape))


@public(method=True)
def set_(x, source=None, shape=None, stride=None, offset=0, name=None):
    """Make x a view of `source`'s storage with the given shape, stride (in elements)
    and offset (in bytes, as Paddle); x and `source` then share memory.

    Args:
        x (Tensor): the tensor to rebind.
        source (Tensor, optional): the storage; None gives x an empty ``[0]`` array.
        shape (list[int], optional): default `source`'s shape.
        stride (list[int], optional): default the contiguous strides of `shape`.
        offset (int, optional): bytes from the start of `source`'s storage (a multiple
            of the element size).
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> src = fw.to_tensor([[11.0, 22.0, 33.0], [1.0, 2.0, 3.0]])
            >>> x = fw.to_tensor([0.0])
            >>> x.set_(src, [2, 2], [1, 2], 4).tolist()
            [[22.0, 1.0], [33.0, 2.0]]
    """
    if source is None:
        return _rebind("set_", x, _f("zeros")([0], dtype=x.dtype))
    if not isinstance(source, _Tensor) or not isinstance(x, _Tensor):
        raise InvalidTypeError("set_: x and source must be eager Tensors")
    if source.dtype != x.dtype:
        raise InvalidArgumentError(f"set_: source has dtype {source.dtype} but x has "
                                   f"{x.dtype}; they must agree")
    base = source._data
    root = base
    while getattr(root, "base", None) is not None and isinstance(root.base, np.ndarray):
        root = root.base
    item = base.itemsize
    if offset % item:
        raise InvalidArgumentError(f"set_: offset {offset} is not a multiple of the element "
                                   f"size {item} bytes")
    shape = list(base.shape) if shape is None else [int(s) for s in shape]
    if stride is None:
        stride = ([s // item for s in base.strides] if shape == list(base.shape)
                  else [int(math.prod(shape[i + 1:])) for i in range(len(shape))])
    stride = [int(s) for s in stride]
    if len(stride) != len(shape):
        raise InvalidArgumentError(f"set_: stride {stride} and shape {shape} differ in rank")
    # the extent the view reaches must lie inside source's own memory
    start = (base.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    first = start + offset // item
    last = first + sum((n - 1) * s for n, s in zip(shape, stride) if n > 0)
    if (root.size and (first < 0 or last >= root.size)) or any(s < 0 for s in stride):
        raise InvalidArgumentError(
            f"set_: shape {shape}, stride {stride} and offset {offset} reach outside "
            f"source's storage of {root.size} elements")
    view = np.lib.stride_tricks.as_strided(
        root.reshape(-1)[first:], shape=shape, strides=[s * item for s in stride])
    x._replace_data(view)
    return x


@public(method=True)
def copy_(x, src, blocking=True):
    """Copy `src` (broadcast to x's shape, cast to x's dtype) into x, in place.

    Args:
        x (Tensor): the destination.
        src (Tensor): the values.
        blocking (bool, optional): accepted for Paddle compatibility (copies are
            synchronous here).

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.zeros([2])
            >>> x.copy_(fw.to_tensor([5.0, 6.0]), False).tolist()
            [5.0, 6.0]
    """
    if not isinstance(src, (_Tensor,)) and not _is_value(src):
        src = _to_tensor(src)
    out = _f("broadcast_to")(_f("cast")(src, x.dtype), list(x.shape))
    return assign_inplace("copy_", x, out)


@public(method=True)
def cauchy_(x, loc=0, scale=1, name=None):
    """Fill x in place with Cauchy draws ``loc + scale * tan(pi * (u - 0.5))``,
    ``u ~ U(0, 1)``.

    Args:
        x (Tensor): a float tensor.
        loc (float, optional): the location of the peak. Default 0.
        scale (float, optional): the half width at half maximum (> 0). Default 1.
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> _ = fw.seed(1)
            >>> x = fw.zeros([10000]).cauchy_(loc=1.0, scale=2.0)
            >>> abs(float(x.median()) - 1.0) < 0.1
            True
    """
    if not x.dtype.is_floating_point:
        raise InvalidArgumentError(f"cauchy_: x must be a float tensor, got {x.dtype}")
    if not float(scale) > 0:
        raise InvalidArgumentError(f"cauchy_: scale must be positive, got {scale}")
    u = _f("uniform")(list(x.shape), "float64", 0.0, 1.0)
    draw = _f("tan")((u - 0.5) * math.pi) * float(scale) + float(loc)
    return assign_inplace("cauchy_", x, _f("cast")(draw, x.dtype))


@public(method=True)
def geometric_(x, probs, name=None):
    """Fill x in place with ``log(u) / log1p(-probs)``, ``u ~ U(tiny, 1)`` (Paddle's
    continuous form of the geometric distribution: its floor is the number of
    failures before the first success).

    Args:
        x (Tensor): a float tensor.
        probs (float | Tensor): the success probability, in (0, 1) (broadcast to x).
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> _ = fw.seed(1)
            >>> x = fw.zeros([20000]).geometric_(0.5)
            >>> round(float(x.floor().mean()), 1)  # failures before a success: (1-p)/p
            1.0
    """
    if not x.dtype.is_floating_point:
        raise InvalidArgumentError(f"geometric_: x must be a float tensor, got {x.dtype}")
    p = probs if isinstance(probs, _Tensor) else _to_tensor(float(probs), dtype=x.dtype)
    pv = np.asarray(p.numpy())
    if np.any((pv <= 0) | (pv >= 1)):
        raise InvalidArgumentError(f"geometric_: probs must lie in (0, 1), got {pv.tolist()}")
    tiny = float(np.finfo(x.dtype.np if x.dtype is not _dt.bfloat16 else np.float32).tiny)
    u = _f("uniform")(list(x.shape), x.dtype, tiny, 1.0)
    return assign_inplace("geometric_", x, _f("log")(u) / _f("log1p")(-p.astype(x.dtype)))


_MANTISSA = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}


@public(method=True)
def random_(x, from_=0, to=None, *, generator=None):
    """Fill x in place with integers drawn uniformly from ``[from_, to)``.

    Args:
        x (Tensor): the tensor.
        from_ (int, optional): the lower bound (inclusive). Default 0.
        to (int, optional): the upper bound (exclusive). None: ``[0, from_)`` when
            `from_` is given, else ``[0, 2**mantissa]`` for floats and ``[0, max)`` for
            integers (Paddle's rule).
        generator (None): reserved, as in Paddle (must be None).

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> _ = fw.seed(2)
            >>> x = fw.zeros([1000]).random_(3, 7)
            >>> sorted(set(x.tolist()))
            [3.0, 4.0, 5.0, 6.0]
    """
    if generator is not None:
        raise UnsupportedError("random_: generator is reserved in Paddle 3.3 and must be None")
    if to is None:
        if from_ == 0:
            if x.dtype.is_floating_point:
                to = 2 ** _MANTISSA[x.dtype.name]
            elif x.dtype.is_bool:
                to = 2
            else:
                to = int(np.iinfo(x.dtype.np).max)
        else:
            from_, to = 0, from_
    if from_ >= to:
        raise InvalidArgumentError(f"random_ expects 'from' to be less than 'to', but got "
                                   f"from={from_} >= to={to}")
    draw = _f("randint")(int(from_), int(to), list(x.shape), "int64")
    return assign_inplace("random_", x, _f("cast")(draw, x.dtype))


@public(method=True)
def fill_diagonal_(x, value, offset=0, wrap=False, name=None):
    """Fill the main diagonal of x (2-D, or N-D with all sizes equal) in place.

    Args:
        x (Tensor): the tensor.
        value (float): the value written.
        offset (int, optional): the diagonal's offset (2-D: > 0 above the main one).
        wrap (bool, optional): for a tall 2-D matrix, restart the diagonal every
            ``ncols + 1`` rows.
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.zeros([3, 4]).fill_diagonal_(5.0, offset=1).tolist()[0]
            [0.0, 5.0, 0.0, 0.0]
    """
    shape = list(x.shape)
    if len(shape) < 2:
        raise InvalidArgumentError(f"fill_diagonal_: x must have at least 2 dims, got {shape}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise InvalidArgumentError(f"fill_diagonal_: a tensor of more than 2 dims must have "
                                   f"all sizes equal, got {shape}")
    mask = np.zeros(shape, bool)
    if len(shape) == 2:
        rows, cols = shape
        limit = rows if wrap else min(rows, cols + max(-offset, 0))
        r = np.arange(limit)
        c = r + offset if not wrap else (r % (cols + 1)) + offset
        ok = (c >= 0) & (c < cols)
        mask[r[ok], c[ok]] = True
    else:
        i = np.arange(shape[0])
        mask[(i,) * len(shape)] = True
    m = _to_tensor(mask)
    out = _f("where")(m, _f("full")([], value, x.dtype), x)
    return assign_inplace("fill_diagonal_", x, out)


def _fill_diag_tensor(x, y, offset, dim1, dim2):
    return _f("diagonal_scatter")(x, y, offset=offset, axis1=dim1, axis2=dim2)


@public(method=True)
def fill_diagonal_tensor(x, y, offset=0, dim1=0, dim2=1, name=None):
    """Write `y` onto the diagonal of x over axes `dim1`, `dim2` (out of place).

    Args:
        x (Tensor): the tensor.
        y (Tensor): the diagonal values: x's shape without `dim1`, `dim2`, plus the
            diagonal's length.
        offset (int, optional): the diagonal's offset. Default 0.
        dim1 (int, optional): the first axis. Default 0.
        dim2 (int, optional): the second axis. Default 1.
        name (str, optional): unused.

    Returns:
        Tensor: a new tensor.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.zeros([3, 3])
            >>> x.fill_diagonal_tensor(fw.to_tensor([1.0, 2.0]), offset=1).tolist()[1]
            [0.0, 0.0, 2.0]
    """
    return _fill_diag_tensor(x, y, offset, dim1, dim2)


@public(method=True)
def fill_diagonal_tensor_(x, y, offset=0, dim1=0, dim2=1, name=None):
    """In-place `fill_diagonal_tensor`.

    Args:
        x (Tensor): the tensor written.
        y (Tensor): the diagonal values.
        offset (int, optional): the diagonal's offset.
        dim1 (int, optional): the first axis.
        dim2 (int, optional): the second axis.
        name (str, optional): unused.

    Returns:
        Tensor: x itself.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> x = fw.zeros([2, 2])
            >>> _ = x.fill_diagonal_tensor_(fw.to_tensor([7.0, 8.0]))
            >>> x.tolist()
            [[7.0, 0.0], [0.0, 8.0]]
    """
    return assign_inplace("fill_diagonal_tensor_", x, _fill_diag_tensor(x, y, offset, dim1,
                                                                        dim2))


@public(method=True)
def top_p_sampling(x, ps, threshold=None, topp_seed=None, seed=-1, k=0, mode="truncated",
                   return_top=False, name=None):
    """Nucleus (top-p) sampling: per row of probabilities, draw one id among the most
    likely ids whose cumulative probability first reaches ``ps[row]``.

    Args:
        x (Tensor): ``[batch, vocab]`` probabilities.
        ps (Tensor): ``[batch]`` (or ``[batch, 1]``) top-p thresholds.
        threshold (Tensor, optional): ``[batch]``: ids with a probability below it are
            never drawn (the most likely id always stays).
        topp_seed (Tensor, optional): ``[batch]`` int64 seeds, one per row.
        seed (int, optional): a seed for all rows; -1 uses fw's generator.
        k (int, optional): with ``return_top``, the number of top ids returned.
        mode (str, optional): 'truncated' (the nucleus above) or 'non-truncated'
            (draw from the whole row; ps ignored).
        return_top (bool, optional): also return the `k` most likely scores and ids.
        name (str, optional): unused.

    Returns:
        tuple: ``(scores [batch, 1], ids [batch, 1] int64)``, then the top-k scores
        and ids when `return_top`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> p = fw.to_tensor([[0.1, 0.6, 0.3], [0.7, 0.2, 0.1]])
            >>> scores, ids = fw.top_p_sampling(p, fw.to_tensor([0.5, 0.6]), seed=1)
            >>> ids.tolist(), scores.tolist()  # each nucleus holds one id
            ([[1], [0]], [[0.6000000238418579], [0.699999988079071]])
    """
    fn = "top_p_sampling"
    a = np.asarray(x.numpy())
    if a.ndim != 2:
        raise InvalidArgumentError(f"{fn}: x must be [batch, vocab], got {list(a.shape)}")
    if mode not in ("truncated", "non-truncated"):
        raise InvalidArgumentError(f"{fn}: mode must be 'truncated' or 'non-truncated', "
                                   f"got {mode!r}")
    b, v = a.shape
    p = np.asarray(ps.numpy() if isinstance(ps, _Tensor) else ps, np.float64).reshape(-1)
    if p.shape[0] != b:
        raise InvalidArgumentError(f"{fn}: ps must hold {b} values, got {p.shape[0]}")
    th = None if threshold is None else np.asarray(threshold.numpy(), np.float64).reshape(-1)
    seeds = None if topp_seed is None else np.asarray(topp_seed.numpy()).reshape(-1)
    order = np.argsort(-a, axis=1, kind="stable")
    srt = np.take_along_axis(a, order, 1).astype(np.float64)
    if seeds is None and seed < 0:
        u = np.asarray(_f("uniform")([b], "float64", 0.0, 1.0).numpy())
    else:
        u = np.array([np.random.default_rng(int(seeds[i] if seeds is not None else seed))
                      .random() for i in range(b)])
    ids = np.zeros((b, 1), np.int64)
    for r in range(b):
        keep = np.ones(v, bool)
        if mode == "truncated":
            # the smallest prefix whose cumulative probability reaches ps
            before = np.cumsum(srt[r]) - srt[r]
            keep &= before < p[r]
        if th is not None:
            keep &= srt[r] >= th[r]
        keep[0] = True
        w = np.where(keep, srt[r], 0.0)
        c = np.cumsum(w) / w.sum()
        j = min(int(np.searchsorted(c, u[r], side="right")), v - 1)
        ids[r, 0] = order[r, j]
    scores = np.take_along_axis(a, ids, 1)
    res = (_to_tensor(scores), _to_tensor(ids))
    if return_top:
        kk = max(int(k), 1)
        res += (_to_tensor(np.ascontiguousarray(srt[:, :kk].astype(a.dtype))),
                _to_tensor(np.ascontiguousarray(order[:, :kk].astype(np.int64))))
    return res


# ---------------------------------------------------------------- members of Tensor
def _data_get(self):
    return self


def _data_set(self, value):
    if not isinstance(value, _Tensor):
        value = _to_tensor(value)
    self._replace_data(value._data)


def _device(self) -> str:
    p = self.place
    return "cpu" if p.is_cpu_place() else f"gpu:{p.get_device_id()}"


def get_device(self) -> int:
    """The GPU index of the tensor, -1 on the CPU (Paddle's ``Tensor.get_device``).

    Returns:
        int: the device index.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.ones([1]).get_device()
            -1
    """
    p = self.place
    return -1 if p.is_cpu_place() else int(p.get_device_id())


def _grad_fn(self):
    # the autograd node that produced this tensor (None for a leaf or a constant)
    return self._node


def _inplace_version(self) -> int:
    return _version_of(self)


def _sparse_only(name, kinds="sparse COO"):
    def method(self, *args, **kwargs):
        raise InvalidTypeError(f"Tensor.{name}: this method is only effective for {kinds} "
                               f"tensors (fw.sparse); this tensor is dense")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _SPARSE_DOC.format(name=name, kinds=kinds, what=_SPARSE_WHAT[name],
                                        conv=".to_sparse_csr()" if "CSR" in kinds else "",
                                        out=_SPARSE_OUT[name])
    return method


# what each sparse accessor gives on fw.sparse's tensors, and the example's output there
_SPARSE_WHAT = {
    "indices": "Tensor: the [sparse_dim, nnz] int64 coordinates of the stored values",
    "values": "Tensor: the stored values, [nnz, *dense_shape]",
    "coalesce": "Tensor: a COO tensor with sorted, unique coordinates (duplicates summed)",
    "is_coalesced": "bool: whether the coordinates are sorted and unique",
    "crows": "Tensor: the compressed row offsets, [rows + 1]",
    "cols": "Tensor: the column index of each stored value, [nnz]",
    "nnz": "int: the number of stored values",
}
_SPARSE_OUT = {
    "indices": "s.indices().tolist()\n        [[0, 1], [1, 0]]",
    "values": "s.values().tolist()\n        [1.0, 2.0]",
    "coalesce": "s.coalesce().to_dense().tolist()\n        [[0.0, 1.0], [2.0, 0.0]]",
    "is_coalesced": "s.coalesce().is_coalesced()\n        True",
    "crows": "s.crows().tolist()\n        [0, 1, 2]",
    "cols": "s.cols().tolist()\n        [1, 0]",
    "nnz": "s.nnz()\n        2",
}
_SPARSE_DOC = """Paddle's ``Tensor.{name}`` of a {kinds} tensor. A dense tensor has
    none, so on it this raises InvalidTypeError (as Paddle does); fw.sparse's tensors
    define it.

    Returns:
        {what}.

    Examples:
        >>> import fw
        >>> s = fw.sparse.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2]){conv}
        >>> {out}
        >>> try:
        ...     fw.ones([2, 2]).{name}()
        ... except TypeError as e:
        ...     print("dense:", "only effective for" in str(e))
        dense: True
    """


def _selected_rows_only(name):
    def method(self, *args, **kwargs):
        raise InvalidTypeError(f"Tensor.{name}: this method is only effective for "
                               f"SelectedRows, which fw does not have (its sparse gradients "
                               f"are fw.sparse COO tensors)")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""Paddle's ``Tensor.{name}`` of a SelectedRows (a row-sparse
    gradient). fw has no SelectedRows (its sparse gradients are fw.sparse COO tensors),
    so this raises InvalidTypeError for every tensor.

    Args:
        *args: Paddle's arguments; unused.

    Returns:
        None: it always raises.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.ones([2]).{name}()
        ... except TypeError as e:
        ...     print("SelectedRows" in str(e))
        True
    """
    return method


def _string_only(name):
    def method(self, *args, **kwargs):
        raise UnsupportedError(f"Tensor.{name}: string tensors (Paddle's pstring vocabularies "
                               f"for its fast tokenizer) are not supported by fw")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""Paddle's ``Tensor.{name}`` of a string tensor (the vocabulary of
    its fast tokenizer). fw has no string tensors, so this raises UnsupportedError.

    Args:
        *args: Paddle's arguments; unused.

    Returns:
        None: it always raises.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.ones([2]).{name}(["a", "b"])
        ... except Exception as e:
        ...     print("string tensors" in str(e))
        True
    """
    return method


def _to_dense(self):
    """The dense form of the tensor: a dense tensor is its own (fw.sparse's tensors
    convert).

    Returns:
        Tensor: the tensor itself.

    Examples:
        >>> import fw
        >>> x = fw.ones([2])
        >>> x.to_dense() is x
        True
        >>> s = fw.sparse.sparse_coo_tensor([[0, 1]], [3.0, 4.0], [3])
        >>> s.to_dense().tolist()
        [3.0, 4.0, 0.0]
    """
    return self


def _value(self):
    """The tensor's value (Paddle's ``Tensor.value()`` / ``get_tensor()`` give the
    underlying DenseTensor); in fw that is the tensor itself.

    Returns:
        Tensor: the tensor itself.

    Examples:
        >>> import fw
        >>> x = fw.ones([2])
        >>> x.value() is x
        True
    """
    return self


def _reconstruct_from_(self, other):
    """Make this tensor share `other`'s array (Paddle's ``reconstruct_from_``): its
    shape, dtype and values become other's; writes to one show in the other.

    Args:
        other (Tensor): the tensor whose array to take.

    Returns:
        Tensor: this tensor.

    Examples:
        >>> import fw
        >>> x = fw.zeros([2])
        >>> _ = x.reconstruct_from_(fw.to_tensor([[1, 2], [3, 4]]))
        >>> x.shape, x.tolist()
        ([2, 2], [[1, 2], [3, 4]])
    """
    if not isinstance(other, _Tensor):
        raise InvalidTypeError(f"reconstruct_from_: other must be a Tensor, got "
                               f"{type(other).__name__}")
    self._replace_data(other._data)
    return self


def _set_tensor(self, other):
    """Give this tensor `other`'s array (Paddle's ``set_tensor`` of a variable); the
    same as `reconstruct_from_`.

    Args:
        other (Tensor): the tensor whose array to take.

    Returns:
        Tensor: this tensor.

    Examples:
        >>> import fw
        >>> x = fw.zeros([3])
        >>> x.set_tensor(fw.to_tensor([1.0, 2.0, 3.0])).tolist()
        [1.0, 2.0, 3.0]
    """
    return _reconstruct_from_(self, other)


def _block(self):
    # Paddle: the block of the program a static variable lives in; an eager tensor
    # belongs to none
    return None


def _static(name):
    def method(*args, **kwargs):
        import sys

        fw = sys.modules["fw"]
        return getattr(fw, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _STATIC_DOCS.get(
        name, f"``Tensor.{name}(...)`` is ``fw.{name}(...)`` (as in Paddle).")
    return staticmethod(method)


_STATIC_DOCS = {"create_parameter": """``Tensor.create_parameter(...)`` is
    ``fw.create_parameter(...)`` (as in Paddle): a new trainable Parameter.

    Args:
        shape (list[int]): the parameter's shape.
        dtype (str | fw.dtype, optional): its dtype. Default: the default dtype.
        name (str, optional): its name. Default: None (a unique one).
        attr (fw.ParamAttr, optional): initializer, learning rate, regularizer.
            Default: None.
        is_bias (bool, optional): initialize as a bias (zeros) rather than a weight.
            Default: False.
        default_initializer (fw.nn.initializer.Initializer, optional): the
            initializer when `attr` names none. Default: None.

    Returns:
        Parameter: the new parameter (``stop_gradient`` False).

    Examples:
        >>> import fw
        >>> p = fw.Tensor.create_parameter([2, 3], "float32", is_bias=True)
        >>> p.shape, p.stop_gradient, p.tolist()
        ([2, 3], False, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    """}


def create_tensor(dtype, name=None, persistable=False):
    """An empty (``[0]``) tensor of `dtype` (Paddle's ``Tensor.create_tensor``: a
    variable with no data yet; assign to it or `set_` it later).

    Args:
        dtype (str | fw.dtype): the dtype.
        name (str, optional): unused.
        persistable (bool, optional): accepted for Paddle compatibility.

    Returns:
        Tensor: shape ``[0]``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> t = fw.Tensor.create_tensor("int32")
            >>> t.shape, t.dtype
            ([0], fw.int32)
    """
    return _f("zeros")([0], dtype=dtype)


def _forward(fname, modname=None):
    def method(self, *args, **kwargs):
        if modname is None:
            return _f(fname)(self, *args, **kwargs)
        import importlib

        return getattr(importlib.import_module(modname), fname)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fname
    method.__doc__ = _FORWARD_DOCS.get(
        fname, f"``x.{fname}(...)`` is ``{modname or 'fw'}.{fname}(x, ...)``.")
    return method


# the methods forwarding to a function of another module: a short text here (the
# function's own, in its module, is the full one)
_FORWARD_DOCS = {
    "histogramdd": """``x.histogramdd(...)`` is ``fw.histogramdd(x, ...)``: the
    histogram of the rows of `x` ([N, D] points) over D dimensions.

    Args:
        bins (int | list[int] | list[Tensor], optional): bins per dimension, or their
            edges. Default: 10.
        ranges (list[float], optional): [low_0, high_0, low_1, ...]; default each
            dimension's min and max.
        density (bool, optional): normalize to a density. Default: False.
        weights (Tensor, optional): a weight per point, [N]. Default: None.
        name (str, optional): unused. Default: None.

    Returns:
        tuple: (hist, edges): the D-dimensional counts and the list of D edge tensors.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.5]])
        >>> hist, edges = x.histogramdd(bins=2)
        >>> hist.tolist()
        [[1.0, 0.0], [0.0, 2.0]]
        >>> edges[0].tolist()
        [0.0, 0.5, 1.0]
    """,
    "stft": """``x.stft(...)`` is ``fw.signal.stft(x, ...)``: the short-time Fourier
    transform of a signal [T] or a batch [B, T].

    Args:
        n_fft (int): the FFT size.
        hop_length (int, optional): the step between frames. Default: n_fft // 4.
        win_length (int, optional): the window length. Default: n_fft.
        window (Tensor, optional): the window, [win_length]. Default: ones.
        center (bool, optional): pad so frames are centered. Default: True.
        pad_mode (str, optional): the padding when centering. Default: 'reflect'.
        normalized (bool, optional): scale by 1/sqrt(n_fft). Default: False.
        onesided (bool, optional): keep n_fft // 2 + 1 frequencies of a real signal.
            Default: None (True for real input).
        name (str, optional): unused. Default: None.

    Returns:
        Tensor: complex, [..., freqs, frames].

    Examples:
        >>> import fw
        >>> S = fw.arange(16, dtype="float32").stft(n_fft=8, hop_length=2)
        >>> S.shape, S.dtype
        ([5, 9], fw.complex64)
    """,
    "istft": """``x.istft(...)`` is ``fw.signal.istft(x, ...)``: the inverse of `stft`
    (overlap-add of the inverse FFT of each frame).

    Args:
        n_fft (int): the FFT size.
        hop_length (int, optional): the step between frames. Default: n_fft // 4.
        win_length (int, optional): the window length. Default: n_fft.
        window (Tensor, optional): the window, [win_length]. Default: ones.
        center (bool, optional): the frames were centered. Default: True.
        normalized (bool, optional): the transform was normalized. Default: False.
        onesided (bool, optional): x holds n_fft // 2 + 1 frequencies. Default: True.
        length (int, optional): the signal length to return. Default: None.
        return_complex (bool, optional): return a complex signal. Default: False.
        name (str, optional): unused. Default: None.

    Returns:
        Tensor: the signal, [T] or [B, T].

    Examples:
        >>> import fw
        >>> x = fw.arange(16, dtype="float32")
        >>> y = x.stft(n_fft=8, hop_length=2).istft(n_fft=8, hop_length=2, length=16)
        >>> [round(v, 3) for v in y.tolist()][:4]
        [0.0, 1.0, 2.0, 3.0]
    """,
}


_M = _api.METHODS


def _prop(fget, fset=None, doc=""):
    return property(fget, fset, doc=doc)


_M.setdefault("data", _prop(_data_get, _data_set, """The tensor itself; assigning a Tensor
or array to it replaces the values in place (Paddle's ``Tensor.data``).

Returns:
    Tensor: the same tensor.

Examples:
    >>> import fw
    >>> x = fw.zeros([2])
    >>> x.data is x
    True
    >>> x.data = fw.to_tensor([1.0, 2.0])
    >>> x.tolist()
    [1.0, 2.0]
"""))
_M.setdefault("device", _prop(_device, doc="""Where the tensor lives, as a string: ``'cpu'``
or ``'gpu:N'``.

Returns:
    str: the device.

Examples:
    >>> import fw
    >>> fw.ones([2]).cpu().device
    'cpu'
"""))
_M.setdefault("get_device", get_device)
_M.setdefault("grad_", _prop(lambda self: self.grad, lambda self, v: setattr(self, "grad", v),
                             """Paddle's alias of `Tensor.grad`: the gradient accumulated by
``backward()``, None before; assignable.

Returns:
    Tensor | None: the gradient.

Examples:
    >>> import fw
    >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> x.grad_ is None
    True
    >>> (x * x).sum().backward()
    >>> x.grad_.tolist()
    [2.0, 4.0]
"""))
_M.setdefault("grad_fn", _prop(_grad_fn, doc="""The autograd node that produced the tensor;
None for leaves and for tensors computed without gradient tracking.

Returns:
    object | None: the node (its class names the op).

Examples:
    >>> import fw
    >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> x.grad_fn is None
    True
    >>> (x * 2).grad_fn is None
    False
"""))
_M.setdefault("inplace_version", _prop(_inplace_version, doc="""How many in-place writes the
tensor has seen; autograd compares it to detect a saved input modified before backward.

Returns:
    int: the counter, 0 for a fresh tensor.

Examples:
    >>> import fw
    >>> x = fw.zeros([2])
    >>> x.inplace_version
    0
    >>> _ = x.add_(fw.ones([2]))
    >>> x.inplace_version
    1
"""))
_M.setdefault("layout", _prop(lambda self: "NCHW", doc="""Paddle's DataLayout of a dense
tensor. fw keeps no layout tag on tensors, so this is always ``'NCHW'``.

Returns:
    str: ``'NCHW'``.

Examples:
    >>> import fw
    >>> fw.ones([1, 3, 2, 2]).layout
    'NCHW'
"""))
_M.setdefault("type", _prop(lambda self: "DENSE_TENSOR", doc="""Paddle's VarType name of an
eager tensor: ``'DENSE_TENSOR'``.

Returns:
    str: the type name.

Examples:
    >>> import fw
    >>> fw.ones([2]).type
    'DENSE_TENSOR'
"""))


def is_dist(self):
    """Whether the tensor is a distributed tensor (sharded over a process mesh). fw's
    tensors are never distributed; fw.distributed's sharded values are separate objects.

    Returns:
        bool: False.

    Examples:
        >>> import fw
        >>> fw.ones([2]).is_dist()
        False
    """
    return False


_M.setdefault("is_dist", is_dist)
_NOT_DIST = """None: a fw Tensor is not a distributed tensor, so it has no {what}.

Returns:
    None.

Examples:
    >>> import fw
    >>> fw.ones([2]).{name} is None
    True
"""
_M.setdefault("placements", _prop(lambda self: None, doc=_NOT_DIST.format(
    what="placements (Shard/Replicate per mesh axis)", name="placements")))
_M.setdefault("process_mesh", _prop(lambda self: None, doc=_NOT_DIST.format(
    what="process mesh", name="process_mesh")))
_M.setdefault("num_shard", _prop(lambda self: None, doc=_NOT_DIST.format(
    what="shard count", name="num_shard")))


def is_selected_rows(self):
    """Whether the tensor is a SelectedRows (Paddle's row-sparse gradient). fw has no
    SelectedRows (its sparse gradients are fw.sparse COO tensors).

    Returns:
        bool: False.

    Examples:
        >>> import fw
        >>> fw.ones([2]).is_selected_rows()
        False
    """
    return False


def get_selected_rows(self):
    """The SelectedRows value of the tensor (Paddle). fw has no SelectedRows, so there
    is none.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.ones([2]).get_selected_rows() is None
        True
    """
    return None


_M.setdefault("is_selected_rows", is_selected_rows)
_M.setdefault("get_selected_rows", get_selected_rows)
_M.setdefault("rows", _selected_rows_only("rows"))
_M.setdefault("get_map_tensor", _selected_rows_only("get_map_tensor"))
_M.setdefault("set_string_list", _string_only("set_string_list"))
_M.setdefault("set_vocab", _string_only("set_vocab"))
_M.setdefault("value", _value)
_M.setdefault("get_tensor", _value)
_M.setdefault("set_tensor", _set_tensor)
_M.setdefault("reconstruct_from_", _reconstruct_from_)
_M.setdefault("block", _prop(_block, doc="""The program block a static variable lives in
(Paddle); an eager tensor belongs to none.

Returns:
    None.

Examples:
    >>> import fw
    >>> fw.ones([2]).block is None
    True
"""))
_M.setdefault("create_parameter", _static("create_parameter"))
_M.setdefault("create_tensor", staticmethod(create_tensor))


def sparse_dim(self):
    """The number of sparse dimensions: 0 for a dense tensor (fw.sparse's tensors
    give their own count).

    Returns:
        int: 0.

    Examples:
        >>> import fw
        >>> fw.ones([2, 3]).sparse_dim()
        0
    """
    return 0


def dense_dim(self):
    """The number of dense dimensions: all of them for a dense tensor.

    Returns:
        int: ``x.ndim``.

    Examples:
        >>> import fw
        >>> fw.ones([2, 3]).dense_dim()
        2
    """
    return len(self.shape)


_M.setdefault("sparse_dim", sparse_dim)
_M.setdefault("dense_dim", dense_dim)
_M.setdefault("to_dense", _to_dense)
for _n in ("indices", "values", "coalesce", "is_coalesced"):
    _M.setdefault(_n, _sparse_only(_n))
for _n in ("crows", "cols"):
    _M.setdefault(_n, _sparse_only(_n, "sparse CSR"))
_M.setdefault("nnz", _sparse_only("nnz", "sparse COO or CSR"))
_M.setdefault("histogramdd", _forward("histogramdd"))
_M.setdefault("stft", _forward("stft", "fw.signal"))
_M.setdefault("istft", _forward("istft", "fw.signal"))


_SHAPE_TYPES = (list, tuple)


@public()
def check_shape(shape, op_name, expected_shape_type=None, expected_element_type=None,
                expected_tensor_dtype=("int32", "int64")):
    """Check a shape argument of `op_name` (Paddle's ``paddle.check_shape``): a list,
    tuple or integer tensor; list elements ints (or integer tensors). As in Paddle, the
    check runs only while a program is being built (static mode); eager code reports
    a bad shape where it is used.

    Args:
        shape (list | tuple | Tensor): the shape argument.
        op_name (str): the op named in the error.
        expected_shape_type (tuple, optional): the allowed types of `shape`; default
            list, tuple and Tensor.
        expected_element_type (tuple, optional): the allowed element types; default
            int and Tensor.
        expected_tensor_dtype (tuple[str], optional): allowed dtypes of a tensor shape
            or element. Default ('int32', 'int64').

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.check_shape([2, 3.5], "fill_constant")  # eager: not checked
            >>> from fw.core import ir
            >>> def f(x):
            ...     fw.check_shape([2, 3.5], "fill_constant")
            ...     return x
            >>> try:
            ...     _ = ir.trace(f, [ir.TensorType((2,), fw.float32)])
            ... except TypeError as e:
            ...     print(str(e).split(",")[0])
            The type of element in 'shape' in fill_constant must be int or Tensor
    """
    from fw.core.ir.core import current_builder

    if current_builder() is None:
        return None
    shape_types = expected_shape_type or (*_SHAPE_TYPES, _Tensor)
    elem_types = expected_element_type or (int, _Tensor)
    if not isinstance(shape, shape_types) and not _is_value_like(shape):
        raise TypeError(f"The type of 'shape' in {op_name} must be list, tuple or Tensor, but "
                        f"received {type(shape).__name__}.")
    if isinstance(shape, _SHAPE_TYPES):
        for e in shape:
            if isinstance(e, bool) or not isinstance(e, elem_types) and not _is_value_like(e):
                raise TypeError(f"The type of element in 'shape' in {op_name} must be int or "
                                f"Tensor, but received {type(e).__name__}.")
            if hasattr(e, "dtype") and str(e.dtype).split(".")[-1] not in expected_tensor_dtype:
                raise TypeError(f"The data type of element in 'shape' in {op_name} must be one "
                                f"of {list(expected_tensor_dtype)}, but received {e.dtype}.")
    elif hasattr(shape, "dtype") and str(shape.dtype).split(".")[-1] not in \
            expected_tensor_dtype:
        raise TypeError(f"The data type of 'shape' in {op_name} must be one of "
                        f"{list(expected_tensor_dtype)}, but received {shape.dtype}.")


def _is_value_like(x) -> bool:
    # an IR value (a symbolic tensor while a program is built)
    return type(x).__name__ == "Value" and hasattr(x, "dtype")
