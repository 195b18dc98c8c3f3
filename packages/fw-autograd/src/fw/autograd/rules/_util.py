"""Helpers for writing VJP rules. Everything here is built from fw ops, so it
works on Tensors and on IR Values alike.

Complex convention (as PyTorch and Paddle): for a real loss L of a complex z the
gradient is ``dL/dRe(z) + i dL/dIm(z)``; a rule for a holomorphic f therefore
multiplies the incoming gradient by ``conj(f'(z))``.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd import _mode
from fw.autograd._backward import grad as _grad
from fw.autograd._engine import run_backward
from fw.autograd._graph import Port
from fw.autograd._registry import vjp
from fw.autograd._shapes import reshape_to
from fw.core.internal import make_tensor
from fw.core.ir.core import Value
from fw.core.ir.types import DYN
from fw.core.tensor import Tensor

__all__ = ["conj", "is_complex", "is_float", "is_tensor_like", "keepdim_shape", "expand_as_input",
           "zeros_like", "norm_axes", "static_shape", "real_dtype", "reshape_to", "reshape_like",
           "flatten_lead", "numel", "gather_transpose", "composite", "vjp_of", "mT", "mH",
           "eye_like", "diag_embed", "diagonal"]


def is_tensor_like(a) -> bool:
    """A Tensor or an IR Value (as opposed to a Python number or None)."""
    return isinstance(a, (Tensor, Value))


def is_complex(t) -> bool:
    return t.dtype.is_complex


def is_float(t) -> bool:
    return t.dtype.is_inexact


def conj(t):
    """conj(t) for complex t; t itself otherwise (no op emitted)."""
    if type(t) is Tensor:  # the hot case, without the dtype property
        return t if t._data.dtype.kind != "c" else fw.conj(t)
    if type(t) is float:
        return t
    d = getattr(t, "dtype", None)
    if d is None:
        return t.conjugate() if isinstance(t, complex) else t
    if isinstance(d, np.dtype):  # a NumPy argument
        return np.conj(t) if d.kind == "c" else t
    if not d.is_complex:
        return t
    return fw.conj(t)


def norm_axes(axis, ndim: int) -> list:
    """Reduction axes as a sorted list of non-negative ints (None: all axes)."""
    if axis is None or ndim == 0:  # a 0-D tensor "reduced" over axis 0 is itself
        return list(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return sorted({a % ndim for a in axis})


def keepdim_shape(shape, axes) -> list:
    """`shape` with every reduced axis set to 1."""
    return [1 if i in axes else d for i, d in enumerate(shape)]


def static_shape(shape) -> bool:
    return DYN not in shape


def zeros_like(t):
    """Zeros with t's shape and dtype."""
    return fw.zeros_like(t)


def expand_as_input(g, ctx, i, axes=None, keepdim=True):
    """Broadcast the gradient of a reduction back to the shape of input `i`.

    `axes` are the reduced axes; when the reduction dropped them (keepdim=False)
    they are first re-inserted as size-1 dims."""
    shape = ctx.shape(i)
    if axes is not None and not keepdim and len(axes):
        g = reshape_to(g, keepdim_shape(shape, axes)) if static_shape(shape) else \
            fw.unsqueeze(g, list(axes))
    if static_shape(shape):
        return fw.broadcast_to(g, shape)
    return fw.expand_as(g, ctx.inputs[i])


def real_dtype(dtype):
    from fw.core import dtypes as _dt

    return {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(dtype, dtype)


# ---------------------------------------------------------------- composite rules
def composite(*names):
    """Register the VJP of ops `names` as the VJP of a re-expression of the op with
    other differentiable fw ops: the decorated ``fn(*inputs, **attrs)`` recomputes
    the op's result(s), and its own graph is differentiated.

    For ops whose direct rule would be long (quantiles, norms, statistics); the
    price is recomputing the forward pass during backward. Higher orders work as
    for any rule (the recomputation is recorded when create_graph=True).

    The rule keeps the op's inputs (the re-expression reads them). ``fn`` is always
    called with every input and every canonical attribute of the op, so its
    parameters take no defaults (one would never be read; checked by
    tests/test_rule_layout.py). The same holds for a function given to `vjp_of`.
    """

    def deco(fn):
        def rule(ctx, g):
            return vjp_of(fn, ctx, g)

        rule.__name__ = f"_{fn.__name__}_composite_vjp"
        # the rule belongs to the module that declared it (rules/<op family>.py)
        rule.__module__ = fn.__module__
        rule.__qualname__ = rule.__name__
        vjp(*names, inputs=True)(rule)
        return fn

    return deco


def vjp_of(fn, ctx, g):
    """The gradients of ``fn(*ctx.inputs, **ctx.attrs)`` for output gradient(s) `g`,
    laid out as a rule's return value."""
    ins = list(ctx.inputs)
    op = ctx.op
    v = op.variadic
    # the tensor inputs to differentiate: (i, j) positions
    pos = []
    for i, a in enumerate(ins):
        if i == v:
            for j, x in enumerate(a):
                if is_tensor_like(x) and ctx.needs(i, j):
                    pos.append((i, j))
        elif is_tensor_like(a) and ctx.needs(i):
            pos.append((i, None))
    n_in = len(op.inputs)
    res = [([None] * len(ins[i]) if i == v else None) for i in range(n_in)]
    if not pos:
        return tuple(res) if n_in > 1 else res[0]
    gl = list(g) if isinstance(g, tuple) else [g]
    if all(gi is None or (static_shape(gi.shape) and numel(gi.shape) == 0) for gi in gl):
        # every output is empty: nothing flows back (and the re-expression need not cope
        # with zero-size shapes)
        for i, j in pos:
            x = ins[i] if j is None else ins[i][j]
            if j is None:
                res[i] = fw.zeros_like(x)
            else:
                res[i][j] = fw.zeros_like(x)
        return tuple(res) if n_in > 1 else res[0]
    gs = list(g) if isinstance(g, tuple) else [g]
    symbolic = any(type(x) is Value for x in gs) or any(
        type(ins[i] if j is None else ins[i][j]) is Value for i, j in pos)
    # one tensor in several slots: each slot's gradient must be its own, so the
    # re-expression reads a copy per slot where it would otherwise read the tensor itself
    uses = {}
    for a in ins:
        for x in (a if isinstance(a, list) else [a]):
            if is_tensor_like(x):
                uses[id(x)] = uses.get(id(x), 0) + 1
    if symbolic:
        work = [list(a) if i == v else a for i, a in enumerate(ins)]
        xs = []
        for i, j in pos:
            x = ins[i] if j is None else ins[i][j]
            if uses[id(x)] > 1:
                x = fw.assign(x)
                if j is None:
                    work[i] = x
                else:
                    work[i][j] = x
            xs.append(x)
        outs = fn(*work, **ctx.attrs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        # not filtered by stop_gradient: program inputs keep stop_gradient=True (as
        # paddle.static.data) and are differentiated anyway when asked for
        pairs = [(o, gi) for o, gi in zip(outs, gs)
                 if gi is not None and type(o) is Value and o.type.dtype.is_inexact]
        grads = _grad([o for o, _ in pairs], xs, [gi for _, gi in pairs], allow_unused=True) \
            if pairs else [None] * len(xs)
    else:
        create_graph = _mode.is_grad_enabled()
        work = [list(a) if i == v else a for i, a in enumerate(ins)]
        xs = []
        frontier = set()
        for i, j in pos:
            x = ins[i] if j is None else ins[i][j]
            if create_graph:
                t = x  # keep its history: the gradient is differentiable through it
                n = x._node
                if n is not None:
                    frontier.add(n.node if type(n) is Port else n)
                if x._sg:
                    t = make_tensor(x._data, stop_gradient=False)
                elif uses[id(x)] > 1:
                    t = fw.assign(x)  # recorded (grad mode is on): keeps x's history
            else:
                t = make_tensor(x._data, stop_gradient=False)
            xs.append(t)
            if j is None:
                work[i] = t
            else:
                work[i][j] = t
        with _mode.enable_grad():
            outs = fn(*work, **ctx.attrs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        pairs = [(o, gi) for o, gi in zip(outs, gs)
                 if gi is not None and isinstance(o, Tensor) and not o._sg]
        if pairs:
            # with create_graph the recomputed graph is part of the result's history
            grads = run_backward([o for o, _ in pairs], [gi for _, gi in pairs],
                                 retain_graph=create_graph, create_graph=create_graph,
                                 inputs=xs, allow_unused=True, frontier=frontier)
        else:
            grads = [None] * len(xs)
    for (i, j), gr, x in zip(pos, grads, [ins[i] if j is None else ins[i][j] for i, j in pos]):
        if gr is None:
            gr = fw.zeros_like(x)
        if j is None:
            res[i] = gr
        else:
            res[i][j] = gr
    return tuple(res) if n_in > 1 else res[0]


# ---------------------------------------------------------------- shapes
def reshape_like(t, ctx, i):
    """`t` reshaped to the shape of input `i` (one dynamic dim at most on IR)."""
    shape = ctx.shape(i)
    if static_shape(shape) or sum(1 for d in shape if d == DYN) == 1:
        return reshape_to(t, shape)
    from fw.core.errors import UnsupportedError

    raise UnsupportedError(f"{ctx.op.name}: its gradient needs a reshape to {list(shape)}, "
                           f"which has more than one dynamic dimension")


def numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def flatten_lead(t):
    """[..., d] -> [prod(...), d] (static shapes; zero sizes allowed)."""
    shape = list(t.shape)
    return reshape_to(t, [numel(shape[:-1]), shape[-1]])


def gather_transpose(g, ctx, i, forward):
    """The gradient of an op that only moves or copies the elements of input `i`
    (pad, tile, roll, take, x[key], ...): `forward` applied to the element indices
    ``arange(numel).reshape(shape)`` says which input element each output element
    came from (-1: none, e.g. padding), and the gradient is summed back there."""
    shape = ctx.shape(i)
    if not static_shape(shape):
        from fw.core.errors import UnsupportedError

        raise UnsupportedError(f"{ctx.op.name}: the gradient needs the static shape of its "
                               f"input, got {list(shape)}")
    n = numel(shape)
    if n == 0:
        return fw.zeros(list(shape), dtype=g.dtype)
    ids = fw.reshape(fw.arange(n, dtype="int64"), list(shape))
    idx = fw.reshape(forward(ids), [-1])
    gf = fw.reshape(g, [-1])
    ok = idx >= 0
    gf = fw.where(ok, gf, zeros_like(gf))
    idx = fw.where(ok, idx, fw.zeros_like(idx))
    out = fw.index_add(fw.zeros([n], dtype=g.dtype), idx, 0, gf)
    return reshape_to(out, shape)


# ---------------------------------------------------------------- matrices (linalg, decomp, solve)
def mT(x):
    return fw.swapaxes(x, -1, -2)


def mH(x):
    return conj(fw.swapaxes(x, -1, -2))


def eye_like(n, like):
    return fw.eye(n, dtype=like.dtype)


def diag_embed(v):
    """[..., n] -> [..., n, n] with v on the diagonal."""
    return fw.diag_embed(v)


def diagonal(m):
    return fw.diagonal(m, axis1=-2, axis2=-1)
