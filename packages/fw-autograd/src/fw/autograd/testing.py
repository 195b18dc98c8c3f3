"""fw.autograd.testing — gradient checks for tests (fw-autograd's own, and any
package that writes VJP rules or PyLayers).

Gradient checks against central finite differences in one random direction
(the idea of JAX's ``check_vjp``): for f at x, a random tangent u and a random
cotangent v, ``<v, J u>`` from finite differences must equal ``<J^T v, u>`` from
the VJP rules. One scalar comparison tests the whole Jacobian with high
probability, at the cost of two extra forward evaluations.

Complex values follow the conjugate convention: with ``L = Re <v, f(x)>`` the
gradient is ``dL/dRe(x) + i dL/dIm(x)``, so ``Re <grad, u>`` is the directional
derivative of L along u.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.dispatch import invoke
from fw.core.ops import OPS

__all__ = ["prepare", "check_vjp", "check_second_order", "GradCase"]


def _inexact(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def _finite(a: np.ndarray) -> np.ndarray:
    """Replace NaN/Inf (samples include them for forward tests) by a finite value
    from the same array, so finite differences are meaningful."""
    bad = ~np.isfinite(a)
    if not bad.any():
        return a
    good = a[~bad]
    a = a.copy()
    base = float(np.median(good.real)) if good.size else 1.0
    # distinct values near the median: no ties (max, sort, ... are not smooth at ties)
    a[bad] = base + 0.1 * np.pi * np.arange(1, int(bad.sum()) + 1) / (1 + bad.sum())
    return a


class GradCase:
    """One call of an op with the positions of the arguments to differentiate."""

    def __init__(self, op, sample):
        self.op = OPS[op] if isinstance(op, str) else op
        self.attrs = dict(sample.attrs)
        args = [list(a) if isinstance(a, list) else a for a in sample.args]
        self.args = args
        pos = []  # (i, j): argument i (item j of a list argument) is differentiated
        for i, a in enumerate(args):
            if isinstance(a, list) and a and all(isinstance(x, np.ndarray) for x in a):
                for j, x in enumerate(a):
                    if _inexact(x):
                        a[j] = _finite(x)
                        pos.append((i, j))
            elif _inexact(a):
                args[i] = _finite(a)
                pos.append((i, None))
        if sample.grad_args is not None:
            pos = [p for p in pos if p[0] in sample.grad_args]
        self.pos = pos

    def primals(self):
        return [self.args[i] if j is None else self.args[i][j] for i, j in self.pos]

    def call(self, values, requires_grad=False):
        """Run the op with the differentiated arguments replaced by `values`
        (arrays or Tensors); returns (outputs tuple, input tensors)."""
        args = []
        for a in self.args:
            if isinstance(a, list):
                args.append([fw.to_tensor(x) if isinstance(x, np.ndarray) else x for x in a])
            elif isinstance(a, np.ndarray):
                args.append(fw.to_tensor(a))
            else:
                args.append(a)
        ins = []
        for (i, j), v in zip(self.pos, values):
            t = v if isinstance(v, fw.Tensor) else fw.to_tensor(v)
            if requires_grad:
                t.stop_gradient = False
            ins.append(t)
            if j is None:
                args[i] = t
            else:
                args[i][j] = t
        out = invoke(self.op, args, dict(self.attrs))
        return (out if isinstance(out, tuple) else (out,)), ins


def _inner(a, b) -> float:
    """Re <a, b> = Re sum(conj(a) * b)."""
    a = np.asarray(a)
    b = np.asarray(b)
    return float(np.real(np.sum(np.conj(a.astype(np.complex128)) * b.astype(np.complex128))))


def _rand_like(rng, a):
    r = rng.standard_normal(np.shape(a))
    if np.asarray(a).dtype.kind == "c":
        r = r + 1j * rng.standard_normal(np.shape(a))
    return r.astype(np.asarray(a).dtype)


def _hermitian(u):
    if u.ndim < 2 or u.shape[-1] != u.shape[-2]:
        return u
    return (u + np.conj(np.swapaxes(u, -1, -2))) / 2


def prepare(case, rng, hermitian=(), skip_outputs=()):
    """Random tangents (one per differentiated input) and cotangents (one per
    floating output), or None when the op has no floating output here.

    `hermitian`: argument indices whose tangent is made Hermitian (ops that read
    one triangle of a Hermitian input); `skip_outputs`: outputs given a zero
    cotangent (e.g. eigenvectors of complex input, which have a phase freedom)."""
    outs, _ = case.call(case.primals())
    vs = []
    for k, o in enumerate(outs):
        if not o.dtype.is_inexact or k in skip_outputs:
            vs.append(None)
        else:
            vs.append(_rand_like(rng, o.numpy()))
    if all(v is None for v in vs) or not case.pos:
        return None
    us = []
    for (i, _), p in zip(case.pos, case.primals()):
        u = _rand_like(rng, p)
        us.append(_hermitian(u) if i in hermitian else u)
    return us, vs


def _scalar_loss(outs, vs):
    """L = Re <v, out> summed over the floating outputs (as a Tensor)."""
    total = None
    for o, v in zip(outs, vs):
        if v is None or o.stop_gradient:
            continue
        term = fw.sum(fw.real(fw.multiply(o, fw.conj(fw.to_tensor(v)))) if o.dtype.is_complex
                      else fw.multiply(o, fw.to_tensor(v)))
        total = term if total is None else total + term
    return total


def _fd(fun, xs, us, eps):
    plus = fun([x + eps * u for x, u in zip(xs, us)])
    minus = fun([x - eps * u for x, u in zip(xs, us)])
    return (plus - minus) / (2 * eps)


def _precision(outs):
    """The coarsest floating precision among the outputs (bits of mantissa)."""
    bits = 52
    for o in outs:
        d = o.dtype
        if d.is_inexact:
            bits = min(bits, {"float16": 10, "bfloat16": 7, "float32": 23,
                              "complex64": 23}.get(d.name, 52))
    return bits


def _compare(name, what, ana, fun, xs, us, eps, rtol, atol):
    """Assert ana ~= the finite difference of `fun`; returns a skip reason (the point
    is not smooth there, or the value is undefined) or None."""
    num = _fd(fun, xs, us, eps)
    if not np.isfinite(num) or not np.isfinite(ana):
        if not np.isfinite(num):
            return "undefined (the finite difference is not finite)"
    num2 = _fd(fun, xs, us, eps / 4)
    scale = abs(num) + abs(ana) + sum(float(np.abs(u).sum()) for u in us) * 1e-3
    if abs(num - num2) > atol + rtol * scale:
        return "not smooth here (finite differences disagree between step sizes)"
    assert abs(ana - num) <= atol + rtol * scale, (
        f"{name}: {what} gives {ana!r}, finite differences give {num!r}")
    return None


def _loss_value(case, vs):
    def f(values):
        outs, _ = case.call(values)
        return sum(_inner(v, o.numpy()) for o, v in zip(outs, vs) if v is not None)
    return f


def check_vjp(case, us, vs, eps=1e-6, rtol=1e-5, atol=1e-7):
    """<J^T v, u> from the rules equals <v, J u> from finite differences.

    Returns None when checked, or the reason the point was skipped."""
    xs = case.primals()
    outs, ins = case.call(xs, requires_grad=True)
    bits = _precision(outs)
    if bits < 23:
        return "low-precision output"
    if bits == 23:  # a float32 output of float64 input: coarse differences
        eps, rtol, atol = max(eps, 1e-3), max(rtol, 2e-3), max(atol, 1e-4)
    loss = _scalar_loss(outs, vs)
    if loss is None:
        return "no differentiable output"
    grads = fw.grad([loss], ins, allow_unused=True)
    for g, x in zip(grads, ins):
        if g is not None:
            assert g.shape == x.shape, f"{case.op.name}: gradient shape {g.shape} != {x.shape}"
            assert g.dtype == x.dtype, f"{case.op.name}: gradient dtype {g.dtype} != {x.dtype}"
    ana = sum(_inner(g.numpy(), u) for g, u in zip(grads, us) if g is not None)
    return _compare(case.op.name, f"the VJP (attrs {case.attrs})", ana, _loss_value(case, vs),
                    xs, us, eps, rtol, atol)


def check_second_order(case, us, vs, eps=1e-5, rtol=1e-4, atol=1e-6, rng=None):
    """The VJP is itself differentiated correctly: with w random, the gradient of
    h(x) = <J(x)^T v, w> (computed with create_graph=True) matches finite
    differences of h. Returns None when checked, else the reason it was skipped."""
    rng = rng or np.random.default_rng(0)
    xs = case.primals()
    ws = [_rand_like(rng, x) for x in xs]

    def h_tensor(values):
        outs, ins = case.call(values, requires_grad=True)
        loss = _scalar_loss(outs, vs)
        if loss is None:
            return None, ins
        gs = fw.grad([loss], ins, create_graph=True, allow_unused=True)
        total = None
        for g, w in zip(gs, ws):
            if g is None or g.stop_gradient:
                continue
            wt = fw.to_tensor(w)
            term = fw.sum(fw.real(fw.multiply(fw.conj(wt), g))) if g.dtype.is_complex else \
                fw.sum(fw.multiply(wt, g))
            total = term if total is None else total + term
        return total, ins

    outs, _ = case.call(xs)
    if _precision(outs) < 52:
        return "reduced-precision output"
    h, ins = h_tensor(xs)
    if h is None:
        # the rules say the gradient does not depend on x (a linear op, a piecewise
        # constant slope): then finite differences of its value must vanish too
        def g_value(values):
            outs, ins_ = case.call(values, requires_grad=True)
            loss = _scalar_loss(outs, vs)
            gs = fw.grad([loss], ins_, allow_unused=True)
            return sum(_inner(g.numpy(), w) for g, w in zip(gs, ws) if g is not None)

        num = _fd(g_value, xs, us, eps)
        if not np.isfinite(num):
            return "undefined (the finite difference is not finite)"
        scale = sum(float(np.abs(u).sum()) for u in us) * 1e-3
        assert abs(num) <= atol + rtol * scale, (
            f"{case.op.name}: the rules give a gradient that does not depend on the input, "
            f"but finite differences of it give {num!r} (attrs {case.attrs})")
        return None
    grads = fw.grad([h], ins, allow_unused=True)
    ana = sum(_inner(g.numpy(), u) for g, u in zip(grads, us) if g is not None)

    def h_value(values):
        with fw.enable_grad():
            t, _ = h_tensor(values)
        return 0.0 if t is None else float(t.numpy())

    return _compare(case.op.name, f"the second-order VJP (attrs {case.attrs})", ana, h_value,
                    xs, us, eps, rtol, atol)


# ---------------------------------------------------------------- record-driven checks
# Ops that read one triangle of a Hermitian argument: their tangents are Hermitian.
HERMITIAN_ARGS = {"cholesky": (0,), "eigh": (0,)}
# Outputs with a phase freedom for complex input: given no cotangent (gauge-dependent).
GAUGE_OUTPUTS = {"svd": (0, 2), "eig": (1,), "eigh": (1,)}
# Outputs that are not differentiated (ctc_loss's second output is its own gradient).
CONSTANT_OUTPUTS = {"ctc_loss": (1,)}
# Samples whose gradient is, by the op's definition, not the derivative of its output:
# Paddle's ctc_loss(norm_by_times=True) divides the gradient (only) by the lengths.
NOT_A_DERIVATIVE = {"ctc_loss": lambda attrs: attrs.get("norm_by_times", False)}
# Ops whose rules raise UnsupportedError for some inputs, by design (see their rules).
PARTIAL_RULES = frozenset({"lu", "svd", "qr", "einsum"})
# Arguments checked where others have no gradient by design (the shape of the gammas).
GRAD_ARGS = {"gammainc": (1,), "gammaincc": (1,)}


def grad_dtypes(rec):
    """The dtypes to check a record's gradients in: its grad_dtypes that the op
    accepts, else its 64-bit inexact dtypes."""
    ok = [d for d in rec.grad_dtypes if d in rec.dtypes]
    if ok:
        return ok
    return [d for d in rec.dtypes if d.name in ("float64", "complex128")] or \
        list(rec.grad_dtypes)


def check_record(rec, draw, order=1):
    """Check one drawn sample of an OpRecord at gradient `order` (1 or 2).
    Returns None when checked, or the reason the sample was skipped."""
    from hypothesis import strategies as st

    from fw.core.errors import UnsupportedError

    dtype = draw(st.sampled_from(grad_dtypes(rec)), label="dtype")
    case = GradCase(rec.op, rec.sample(draw, dtype))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1), label="direction seed"))
    name = case.op.name
    if name in GRAD_ARGS:
        case.pos = [p for p in case.pos if p[0] in GRAD_ARGS[name]]
    herm = HERMITIAN_ARGS.get(name, ())
    if name == "pinv" and case.attrs.get("hermitian"):
        herm = (0,)  # the hermitian path reads one triangle
    try:
        skip = CONSTANT_OUTPUTS.get(name, ()) + (GAUGE_OUTPUTS.get(name, ())
                                                 if dtype.is_complex else ())
        dirs = prepare(case, rng, herm, skip)
    except Exception as e:  # the forward pass rejects this sample (fw-core's tests see it)
        return f"forward failed: {type(e).__name__}: {e}"
    rule = NOT_A_DERIVATIVE.get(name)
    if rule is not None and rule(case.attrs):
        return "the op's gradient is defined differently from its derivative here"
    if dirs is None:
        return "nothing to differentiate"
    us, vs = dirs
    try:
        if order == 1:
            return check_vjp(case, us, vs, eps=rec.fd_eps)
        return check_second_order(case, us, vs, eps=max(rec.fd_eps, 1e-5), rng=rng)
    except UnsupportedError as e:
        if name in PARTIAL_RULES:
            return f"unsupported by design: {e}"
        raise
