"""Functional transforms built on `grad`: `vjp`, `jvp`, `jacobian`, `hessian`.

Forward mode (`jvp`) uses the double-VJP (transposition) trick: the VJP
``u -> J^T u`` is linear in ``u`` and is computed with ``create_graph=True``,
so differentiating ``<J^T u, v>`` with respect to ``u`` gives ``J v``. It
needs nothing beyond the VJP rules (every rule is linear in its incoming
gradient and written with fw ops), at the cost of one extra backward pass.

`jacobian` and `hessian` follow Paddle 3 (``paddle.autograd.jacobian``): they
return lazily evaluated `Jacobian` objects; indexing one computes only the rows
the index needs (one backward pass per row, with a one-hot cotangent) and
caches them. Rows are computed with ``create_graph=True``, so a Jacobian can
itself be differentiated (that is how `hessian` works).
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd._backward import grad
from fw.autograd._mode import enable_grad
from fw.autograd.errors import GradientError
from fw.core.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "Jacobian", "Hessian"]


def _as_seq(xs, what):
    if isinstance(xs, Tensor):
        return [xs], True
    if isinstance(xs, (list, tuple)) and all(isinstance(x, Tensor) for x in xs):
        return list(xs), False
    raise GradientError(f"{what} must be a Tensor or a sequence of Tensors, got "
                        f"{type(xs).__name__}")


def _fresh_leaves(xs):
    """Detached copies of `xs` that require grad: the transform differentiates
    its own graph and leaves the caller's untouched."""
    out = []
    for x in xs:
        t = x.detach()
        t.stop_gradient = False
        out.append(t)
    return out


def _call(func, xs, single):
    with enable_grad():
        ys = func(xs[0]) if single else func(*xs)
    ys_l, ys_single = _as_seq(ys, "the function's result")
    return ys, ys_l, ys_single


def _zeros_for_none(gs, xs):
    return [fw.zeros_like(x) if g is None else g for g, x in zip(gs, xs)]


def _check_v(v, refs, what):
    vs, _ = _as_seq(v, what)
    if len(vs) != len(refs):
        raise GradientError(f"{what} has {len(vs)} tensors, expected {len(refs)}")
    for i, (a, b) in enumerate(zip(vs, refs)):
        if a.shape != b.shape:
            raise GradientError(f"{what}[{i}] has shape {a.shape}, expected {b.shape}")
    return vs


def vjp(func, xs, v=None):
    """Vector-Jacobian product of `func` at `xs` (``paddle.incubate.autograd.vjp``).

    Args:
        func: a function of the tensors `xs` returning a Tensor or a sequence.
        xs: a Tensor or a sequence of Tensors.
        v: the cotangent, shaped like func's result (default: ones).

    Returns:
        ``(func_out, vjp_result)``; vjp_result is shaped like `xs`.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> _, g = fw.autograd.vjp(lambda t: t * t, x)
        >>> g.numpy().tolist()
        [2.0, 4.0]
    """
    xs_l, single = _as_seq(xs, "xs")
    xs_d = _fresh_leaves(xs_l)
    ys, ys_l, _ = _call(func, xs_d, single)
    vs = [None] * len(ys_l) if v is None else _check_v(v, ys_l, "v")
    diff = [i for i, y in enumerate(ys_l) if not y.stop_gradient]
    if diff:
        gs = grad([ys_l[i] for i in diff], xs_d, [vs[i] for i in diff], allow_unused=True)
    else:
        gs = [None] * len(xs_d)
    gs = _zeros_for_none(gs, xs_d)
    return _detach_all(ys), (gs[0] if single else gs)


def _detach_all(ys):
    if isinstance(ys, Tensor):
        return ys.detach()
    return type(ys)(y.detach() for y in ys)


def jvp(func, xs, v=None):
    """Jacobian-vector product of `func` at `xs` (``paddle.incubate.autograd.jvp``),
    i.e. forward-mode differentiation (see the module docstring for how).

    Args:
        func: a function of the tensors `xs` returning a Tensor or a sequence.
        xs: a Tensor or a sequence of Tensors.
        v: the tangent, shaped like `xs` (default: ones).

    Returns:
        ``(func_out, jvp_result)``; jvp_result is shaped like func's result.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0])
        >>> _, t = fw.autograd.jvp(lambda a: a * a, x, fw.to_tensor([1.0, 0.0]))
        >>> t.numpy().tolist()
        [2.0, 0.0]
    """
    xs_l, single = _as_seq(xs, "xs")
    xs_d = _fresh_leaves(xs_l)
    vs = [fw.ones_like(x) for x in xs_d] if v is None else _check_v(v, xs_d, "v")
    ys, ys_l, ys_single = _call(func, xs_d, single)
    diff = [i for i, y in enumerate(ys_l) if not y.stop_gradient]
    out = [None] * len(ys_l)
    if diff:
        with enable_grad():
            us = []
            for i in diff:
                u = fw.zeros_like(ys_l[i]).detach()
                u.stop_gradient = False
                us.append(u)
            gs = grad([ys_l[i] for i in diff], xs_d, us, create_graph=True, allow_unused=True)
        pairs = [(g, v_) for g, v_ in zip(gs, vs) if g is not None and not g.stop_gradient]
        if pairs:
            jv = grad([g for g, _ in pairs], us, [v_ for _, v_ in pairs], allow_unused=True)
            for i, t in zip(diff, jv):
                out[i] = t
    out = _zeros_for_none(out, ys_l)
    return _detach_all(ys), ([o.detach() for o in out][0] if ys_single else
                             [o.detach() for o in out])


# ---------------------------------------------------------------- Jacobian / Hessian
class _Rows:
    """Rows of d ys / d xs for one output tensor `y` and all `xs`, computed on demand
    (one backward per row, with a one-hot cotangent) and cached."""

    def __init__(self, y, xs, batched: bool):
        self.y = y
        self.xs = xs
        self.batched = batched
        if batched:
            if y.ndim not in (1, 2):
                raise GradientError(f"jacobian with batch_axis=0 supports a 1-D or 2-D ys, got "
                                    f"shape {y.shape}")
            self.B = y.shape[0]
            self.M = 1 if y.ndim == 1 else y.shape[1]
        else:
            self.M = max(1, int(np.prod(y.shape))) if y.ndim else 1
        self.cache: dict = {}

    def row(self, r: int) -> list:
        """[d y_flat[r] / d x_j, flattened] for every j (with the batch dim if batched)."""
        got = self.cache.get(r)
        if got is not None:
            return got
        y = self.y
        e = np.zeros(y.shape, dtype=y._data.dtype)
        if self.batched:
            if y.ndim == 1:
                e[:] = 1
            else:
                e[:, r] = 1
        else:
            e.reshape(-1)[r] = 1
        if y.stop_gradient:
            gs = [None] * len(self.xs)
        else:
            gs = grad([y], self.xs, [fw.to_tensor(e)], retain_graph=True, create_graph=True,
                      allow_unused=True)
        out = []
        for g, x in zip(gs, self.xs):
            if g is None:
                g = fw.zeros_like(x)
            out.append(fw.reshape(g, [self.B, -1] if self.batched else [-1]))
        self.cache[r] = out
        return out


def _part(shape, batched):
    """The Jacobian's dims contributed by a tensor (0-D: none, 1-D: its size,
    more: flattened)."""
    if batched:
        shape = shape[1:]
    if len(shape) == 0:
        return []
    return [int(np.prod(shape))]


class Jacobian:
    """A lazily evaluated Jacobian ``d ys / d xs`` (``paddle.autograd.jacobian``).

    Shape: ``[M, N]`` (``[B, M, N]`` with a batch axis), where M and N are the
    sizes of ys and xs; a 0-D ys or xs contributes no dimension. Index it like a
    tensor (``J[:]``, ``J[0]``, ``J[:, 1:3]``) to evaluate the rows the index
    needs; evaluated rows are cached.

    Args:
        rows (_Rows): the row evaluator (made by `jacobian`; not built by users).
        j (int): the index of the input this Jacobian is taken against.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        >>> J = fw.autograd.jacobian(x * x, x)
        >>> J.shape
        [3, 3]
        >>> J[1].tolist()
        [0.0, 4.0, 0.0]
        >>> J[:, 2].tolist()
        [0.0, 0.0, 6.0]
    """

    def __init__(self, rows: _Rows, j: int):
        self._rows = rows
        self._j = j
        b = rows.batched
        x = rows.xs[j]
        self._ypart = _part(rows.y.shape, b)
        self._xpart = _part(x.shape, b)
        self._shape = ([rows.B] if b else []) + self._ypart + self._xpart

    @property
    def shape(self) -> list:
        """The Jacobian's shape: ``[M, N]``, or ``[B, M, N]`` with a batch axis.

        Returns:
            list[int].

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
            >>> J = fw.autograd.jacobian(x * x, x)
            >>> J.shape
            [3, 3]
        """
        return list(self._shape)

    def __repr__(self) -> str:
        return f"Jacobian(shape={self._shape})"

    def _full_rows(self, rows_idx) -> Tensor:
        parts = [self._rows.row(r)[self._j] for r in rows_idx]
        return fw.stack(parts, axis=1 if self._rows.batched else 0)

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if any(i is Ellipsis for i in index):
            raise GradientError("Jacobian indexing does not support '...' (as in Paddle)")
        b = self._rows.batched
        row_axis = 1 if b else 0
        M = self._rows.M
        if not self._ypart:  # no row dimension: a single row
            t = self._full_rows([0])
            t = fw.squeeze(t, row_axis)
            return t[index] if index != (slice(None),) else t
        rsel = index[row_axis] if len(index) > row_axis else slice(None)
        if isinstance(rsel, Tensor):
            rsel = rsel.numpy()
        want = np.arange(M)[rsel]
        scalar_row = np.ndim(want) == 0
        t = self._full_rows([int(r) for r in np.atleast_1d(want)])
        if scalar_row:
            t = fw.squeeze(t, row_axis)
            rest = index[:row_axis] + index[row_axis + 1:]
        else:
            rest = index[:row_axis] + (slice(None),) + index[row_axis + 1:]
        if all(isinstance(i, slice) and i == slice(None) for i in rest):
            return t
        return t[rest]

    def numpy(self):
        """Evaluate every row and return the whole Jacobian as a NumPy array.

        Returns:
            numpy.ndarray, of shape `shape`.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
            >>> J = fw.autograd.jacobian(x * x, x)
            >>> J.numpy().tolist()
            [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]]
        """
        return self[:].numpy()


class Hessian(Jacobian):
    """A lazily evaluated Hessian (a `Jacobian` of the gradient).

    Args:
        rows (_Rows): the row evaluator (made by `hessian`; not built by users).
        j (int): the index of the input this Hessian is taken against.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> H = fw.autograd.hessian((x ** 3).sum(), x)
        >>> H.shape, H[:].tolist()
        ([2, 2], [[6.0, 0.0], [0.0, 12.0]])
    """

    def __repr__(self) -> str:
        return f"Hessian(shape={self._shape})"


def _prepare(ys, xs):
    xs_l, xs_single = _as_seq(xs, "xs")
    if callable(ys) and not isinstance(ys, Tensor):
        xs_l = [x if not x.stop_gradient else _fresh_leaves([x])[0] for x in xs_l]
        with enable_grad():
            ys = ys(xs_l[0]) if xs_single else ys(*xs_l)
    ys_l, ys_single = _as_seq(ys, "ys")
    return ys_l, ys_single, xs_l, xs_single


def _batch(batch_axis):
    if batch_axis is None:
        return False
    if batch_axis == 0:
        return True
    raise GradientError(f"batch_axis must be None or 0 (as in Paddle), got {batch_axis!r}")


def jacobian(ys, xs, batch_axis=None):
    """The Jacobian of `ys` with respect to `xs` (``paddle.autograd.jacobian``).

    Args:
        ys: a Tensor or a sequence of Tensors computed from `xs` — or a function,
            which is called on `xs`.
        xs: a Tensor or a sequence of Tensors (stop_gradient=False).
        batch_axis: None, or 0 when axis 0 of ys and xs is a batch axis (then
            ys [B, M] / xs [B, N] give a [B, M, N] Jacobian; samples must be
            independent of each other).

    Returns:
        A `Jacobian` for a single ys and xs; a tuple of them when one is a
        sequence; a tuple of tuples (ys-major) when both are.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> J = fw.autograd.jacobian(x * x, x)
        >>> J[:].numpy().tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    batched = _batch(batch_axis)
    ys_l, ys_single, xs_l, xs_single = _prepare(ys, xs)
    table = []
    for y in ys_l:
        rows = _Rows(y, xs_l, batched)
        table.append(tuple(Jacobian(rows, j) for j in range(len(xs_l))))
    if ys_single and xs_single:
        return table[0][0]
    if ys_single:
        return table[0]
    if xs_single:
        return tuple(r[0] for r in table)
    return tuple(table)


def hessian(ys, xs, batch_axis=None):
    """The Hessian of a scalar `ys` with respect to `xs` (``paddle.autograd.hessian``).

    Args:
        ys: a 0-D (or one-element) Tensor — [B] or [B, 1] with batch_axis=0 —
            computed from `xs`, or a function called on `xs`.
        xs: a Tensor or a sequence of Tensors.
        batch_axis: None or 0.

    Returns:
        A `Hessian` ([N, N], or [B, N, N]) for a single xs; for a sequence of
        xs a tuple of tuples ``H[i][j] = d2 ys / dx_i dx_j``.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> H = fw.autograd.hessian((x * x * x).sum(), x)
        >>> H[:].numpy().tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    batched = _batch(batch_axis)
    ys_l, _, xs_l, xs_single = _prepare(ys, xs)
    if len(ys_l) != 1:
        raise GradientError("hessian: ys must be a single Tensor")
    y = ys_l[0]
    if batched:
        if not (y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1)):
            raise GradientError(f"hessian with batch_axis=0 needs ys of shape [B] or [B, 1], "
                                f"got {y.shape}")
    elif y.size != 1:
        raise GradientError(f"hessian needs a scalar ys (one element), got shape {y.shape}")
    gs = grad([y], xs_l, create_graph=True, allow_unused=True)
    gs = _zeros_for_none(gs, xs_l)
    table = []
    for g in gs:
        rows = _Rows(g if not batched else fw.reshape(g, [g.shape[0], -1]), xs_l, batched)
        row = []
        for j in range(len(xs_l)):
            h = Hessian(rows, j)
            row.append(h)
        table.append(tuple(row))
    if xs_single:
        return table[0][0]
    return tuple(table)
