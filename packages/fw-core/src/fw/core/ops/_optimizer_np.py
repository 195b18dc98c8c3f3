"""The update formulas of the optimizer ops (fw.core.ops.optimizer): their NumPy
reference kernels, the cpu kernels that update in place through ``out=``, and the
helpers both share (learning-rate scalars, compute dtypes, output slots, moments).
The ops, their infer rules and the conventions they follow are declared in
optimizer.py, whose family they keep.
"""

from __future__ import annotations

import math

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ops._xp import xp_of

_LOW = (_dt.float16.np, _dt.bfloat16.np)


_F32 = np.dtype(np.float32)


def _lr(a, arg="learning_rate") -> float:
    """A one-element input as a Python float."""
    if a.size != 1 or a.ndim > 1:
        raise InvalidArgumentError(f"'{arg}' must hold one value (shape [] or [1]), got shape "
                                   f"{list(a.shape)}")
    return float(a.item())


def _ct(state_dtype):
    """The dtype to compute in for state of `state_dtype` (float16/bfloat16 widen)."""
    return _F32 if state_dtype in _LOW else state_dtype


def _check_arrays(op, param, grad, **states):
    """The fast kernels' own shape check (they run without infer)."""
    s = param.shape
    for name, a in (("grad", grad),) + tuple(states.items()):
        if a is not None and a.shape != s:
            raise InvalidArgumentError(f"{op}: '{name}' has shape {list(a.shape)} but 'param' "
                                       f"has shape {list(s)}; they must be equal")
    if grad.dtype != param.dtype:
        raise InvalidTypeError(f"{op}: 'grad' has dtype {grad.dtype} but 'param' has dtype "
                               f"{param.dtype}; they must be equal")
    if param.dtype.kind != "f" and param.dtype not in _LOW:
        raise InvalidTypeError(f"{op}: 'param' must be a real floating tensor, got "
                               f"{param.dtype}")


def _slot(src, out, i, ct):
    """The compute-dtype array the kernel updates in place for output `i`, and the
    array to write it back into (None when they are the same)."""
    dst = None if out is None else out[i]
    if dst is None:
        return src.astype(ct, copy=True), None
    if dst.dtype == ct:
        if dst is not src:
            np.copyto(dst, src, casting="unsafe")
        return dst, None
    return src.astype(ct, copy=True), dst


def _finish(work, back, orig_dtype):
    """Write `work` into `back` (an out array) or return it in `orig_dtype`."""
    if back is not None:
        np.copyto(back, work, casting="unsafe")
        return back
    return work if work.dtype == orig_dtype else work.astype(orig_dtype)


def _pow_out(pow_, beta, out, i):
    r = _out(pow_ * beta, pow_.dtype)
    dst = None if out is None else out[i]
    if dst is None:
        return r
    np.copyto(dst, r.reshape(dst.shape), casting="unsafe")
    return dst


def _empty(dtype, like):
    return xp_of(like).empty((0,), dtype=dtype)


def _out(x, dtype):
    """A result in `dtype`, as an array (NumPy turns 0-d results into scalars)."""
    x = x.astype(dtype)
    return np.asarray(x) if isinstance(x, np.generic) else x


def _up(a, ct):
    return a if a.dtype == ct else a.astype(ct)


def _optional_ref_out(state, used, new, like, param):
    """The reference output of an optional state input (``moment2_max?``, ``mean_grad?``):
    0-size when absent, the updated value `new` when the mode `used` it, else a copy."""
    if state is None:
        return _empty(like.dtype, param)
    return _out(new if used else state.copy(), state.dtype)


def _optional_out(state, used, work, back, out, i, like, param):
    """The fast kernels' output `i` for an optional state input: 0-size when absent,
    the updated `work` (from `_slot`) when the mode used it, else the input passed
    through (into ``out[i]`` when given)."""
    if state is None:
        return _empty(like.dtype, param)
    if used:
        return _finish(work, back, state.dtype)
    dst = None if out is None else out[i]
    if dst is None:
        return state.copy()
    if dst is not state:
        np.copyto(dst, state)
    return dst


def _update_moments(g, m, v, beta1, beta2):
    """In place: m += (1-b1)(g - m); v += (1-b2)(g^2 - v) (v may be None). Returns the
    scratch buffer, the only temporary, for the caller to reuse."""
    t = np.subtract(g, m, out=np.empty_like(m))
    t *= 1.0 - beta1
    m += t
    if v is not None:
        np.multiply(g, g, out=t)
        t -= v
        t *= 1.0 - beta2
        v += t
    return t


def _update_sq_avg(g, ms, rho):
    """In place: ms += (1-rho)(g^2 - ms) (adadelta, rmsprop). Returns the scratch
    buffer."""
    t = np.multiply(g, g, out=np.empty_like(g))
    t -= ms
    t *= 1.0 - rho
    ms += t
    return t


def _sgd_ref(param, grad, learning_rate):
    ct = _ct(param.dtype)
    p = _up(param, ct) - _lr(learning_rate) * _up(grad, ct)
    return _out(p, param.dtype)


def _sgd_cpu(param, grad, learning_rate, out=None):
    _check_arrays("sgd", param, grad)
    ct = _ct(param.dtype)
    p, back = _slot(param, out, 0, ct)
    p -= _lr(learning_rate) * _up(grad, ct)
    return _finish(p, back, param.dtype)


def _mom_ref(param, grad, learning_rate, velocity, mu=0.9, use_nesterov=False,
             regularization_method="", regularization_coeff=0.0, rescale_grad=1.0):
    ct = _ct(velocity.dtype)
    p = _up(param, ct)
    g = _up(grad, ct) * rescale_grad
    if regularization_method == "l2_decay":
        g = g + regularization_coeff * p
    v = mu * _up(velocity, ct) + g
    lr = _lr(learning_rate)
    p = p - lr * (g + mu * v) if use_nesterov else p - lr * v
    return _out(p, param.dtype), _out(v, velocity.dtype)


def _mom_cpu(param, grad, learning_rate, velocity, mu=0.9, use_nesterov=False,
             regularization_method="", regularization_coeff=0.0, rescale_grad=1.0, out=None):
    _check_arrays("momentum", param, grad, velocity=velocity)
    ct = _ct(velocity.dtype)
    p, pback = _slot(param, out, 0, ct)
    v, vback = _slot(velocity, out, 1, ct)
    g = _up(grad, ct)
    if rescale_grad != 1.0:
        g = g * rescale_grad
    if regularization_method == "l2_decay" and regularization_coeff != 0.0:
        g = g + regularization_coeff * p
    v *= mu
    v += g
    lr = _lr(learning_rate)
    if use_nesterov:
        t = np.multiply(v, mu, out=np.empty_like(v))
        t += g
        t *= lr
        p -= t
    else:
        p -= lr * v
    return _finish(p, pback, param.dtype), _finish(v, vback, velocity.dtype)


def _adam_math(p, g, m, v, vmax, lr, b1p, b2p, beta1, beta2, epsilon, amsgrad):
    """Functional adam in the compute dtype: the paper's bias-corrected form."""
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    if amsgrad:
        vmax = np.maximum(vmax, v)
    vv = vmax if amsgrad else v
    mhat = m / (1 - b1p)
    vhat = vv / (1 - b2p)
    p = p - lr * mhat / (np.sqrt(vhat) + epsilon)
    return p, m, v, vmax


def _adam_ref_common(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                     moment2_max, beta1, beta2, epsilon, amsgrad, decay):
    if amsgrad and moment2_max is None:
        raise InvalidArgumentError("amsgrad=True needs the 'moment2_max' state input")
    ct = _ct(moment1.dtype)
    lr = _lr(learning_rate)
    p = _up(param, ct)
    if decay:
        lr_ratio, coeff = decay
        lr = lr * lr_ratio
        p = p * (1 - lr * coeff)
    vmax = None if moment2_max is None else _up(moment2_max, ct)
    b1p, b2p = _lr(beta1_pow, "beta1_pow"), _lr(beta2_pow, "beta2_pow")
    p, m, v, vmax2 = _adam_math(p, _up(grad, ct), _up(moment1, ct), _up(moment2, ct), vmax, lr,
                                b1p, b2p, beta1, beta2, epsilon, amsgrad)
    vout = _optional_ref_out(moment2_max, amsgrad, vmax2, moment2, param)
    return (_out(p, param.dtype), _out(m, moment1.dtype), _out(v, moment2.dtype),
            _out(beta1_pow * beta1, beta1_pow.dtype),
            _out(beta2_pow * beta2, beta2_pow.dtype), vout)


def _adam_ref(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
              moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, amsgrad=False):
    return _adam_ref_common(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                            moment2_max, beta1, beta2, epsilon, amsgrad, None)


def _adamw_ref(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
               moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, lr_ratio=1.0,
               coeff=0.01, with_decay=True, amsgrad=False):
    return _adam_ref_common(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                            moment2_max, beta1, beta2, epsilon, amsgrad,
                            (lr_ratio, coeff if with_decay else 0.0))


def _adam_cpu_common(op, param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                     moment2_max, beta1, beta2, epsilon, amsgrad, decay, out):
    _check_arrays(op, param, grad, moment1=moment1, moment2=moment2, moment2_max=moment2_max)
    if amsgrad and moment2_max is None:
        raise InvalidArgumentError(f"{op}: amsgrad=True needs the 'moment2_max' state input")
    ct = _ct(moment1.dtype)
    lr = _lr(learning_rate)
    b1p, b2p = _lr(beta1_pow, "beta1_pow"), _lr(beta2_pow, "beta2_pow")
    p, pback = _slot(param, out, 0, ct)
    m, mback = _slot(moment1, out, 1, ct)
    v, vback = _slot(moment2, out, 2, ct)
    g = _up(grad, ct)
    if decay is not None:
        lr_ratio, coeff = decay
        lr = lr * lr_ratio
        if coeff != 0.0:
            p *= 1.0 - lr * coeff
    t = _update_moments(g, m, v, beta1, beta2)
    if amsgrad:
        vm, vmback = _slot(moment2_max, out, 5, ct)
        np.maximum(vm, v, out=vm)
        den_src = vm
    else:
        vm = vmback = None
        den_src = v
    # p -= lr sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps sqrt(1-b2^t))
    c2 = math.sqrt(1.0 - b2p)
    np.sqrt(den_src, out=t)
    t += epsilon * c2
    np.divide(m, t, out=t)
    t *= lr * c2 / (1.0 - b1p)
    p -= t
    vout = _optional_out(moment2_max, amsgrad, vm, vmback, out, 5, moment2, param)
    return (_finish(p, pback, param.dtype), _finish(m, mback, moment1.dtype),
            _finish(v, vback, moment2.dtype), _pow_out(beta1_pow, beta1, out, 3),
            _pow_out(beta2_pow, beta2, out, 4), vout)


def _adam_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
              moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, amsgrad=False,
              out=None):
    return _adam_cpu_common("adam", param, grad, learning_rate, moment1, moment2, beta1_pow,
                            beta2_pow, moment2_max, beta1, beta2, epsilon, amsgrad, None, out)


def _adamw_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
               moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, lr_ratio=1.0,
               coeff=0.01, with_decay=True, amsgrad=False, out=None):
    return _adam_cpu_common("adamw", param, grad, learning_rate, moment1, moment2, beta1_pow,
                            beta2_pow, moment2_max, beta1, beta2, epsilon, amsgrad,
                            (lr_ratio, coeff if with_decay else 0.0), out)


def _adamax_ref(param, grad, learning_rate, moment, inf_norm, beta1_pow, beta1=0.9,
                beta2=0.999, epsilon=1e-8):
    ct = _ct(moment.dtype)
    g = _up(grad, ct)
    m = beta1 * _up(moment, ct) + (1 - beta1) * g
    u = np.maximum(beta2 * _up(inf_norm, ct) + epsilon, np.abs(g))
    p = _up(param, ct) - _lr(learning_rate) / (1 - _lr(beta1_pow, "beta1_pow")) * m / u
    return (_out(p, param.dtype), _out(m, moment.dtype), _out(u, inf_norm.dtype),
            _out(beta1_pow * beta1, beta1_pow.dtype))


def _adamax_cpu(param, grad, learning_rate, moment, inf_norm, beta1_pow, beta1=0.9,
                beta2=0.999, epsilon=1e-8, out=None):
    _check_arrays("adamax", param, grad, moment=moment, inf_norm=inf_norm)
    ct = _ct(moment.dtype)
    p, pback = _slot(param, out, 0, ct)
    m, mback = _slot(moment, out, 1, ct)
    u, uback = _slot(inf_norm, out, 2, ct)
    g = _up(grad, ct)
    t = _update_moments(g, m, None, beta1, beta2)
    u *= beta2
    u += epsilon
    np.abs(g, out=t)
    np.maximum(u, t, out=u)
    np.divide(m, u, out=t)
    t *= _lr(learning_rate) / (1.0 - _lr(beta1_pow, "beta1_pow"))
    p -= t
    return (_finish(p, pback, param.dtype), _finish(m, mback, moment.dtype),
            _finish(u, uback, inf_norm.dtype), _pow_out(beta1_pow, beta1, out, 3))


def _adagrad_ref(param, grad, learning_rate, moment, epsilon=1e-6):
    ct = _ct(moment.dtype)
    g = _up(grad, ct)
    G = _up(moment, ct) + g * g
    p = _up(param, ct) - _lr(learning_rate) * g / (np.sqrt(G) + epsilon)
    return _out(p, param.dtype), _out(G, moment.dtype)


def _adagrad_cpu(param, grad, learning_rate, moment, epsilon=1e-6, out=None):
    _check_arrays("adagrad", param, grad, moment=moment)
    ct = _ct(moment.dtype)
    p, pback = _slot(param, out, 0, ct)
    G, gback = _slot(moment, out, 1, ct)
    g = _up(grad, ct)
    t = np.multiply(g, g, out=np.empty_like(g))
    G += t
    np.sqrt(G, out=t)
    t += epsilon
    np.divide(g, t, out=t)
    t *= _lr(learning_rate)
    p -= t
    return _finish(p, pback, param.dtype), _finish(G, gback, moment.dtype)


def _adadelta_ref(param, grad, learning_rate, avg_squared_grad, avg_squared_update, rho=0.95,
                  epsilon=1e-6):
    ct = _ct(avg_squared_grad.dtype)
    g = _up(grad, ct)
    eg = rho * _up(avg_squared_grad, ct) + (1 - rho) * g * g
    ed = _up(avg_squared_update, ct)
    d = -np.sqrt((ed + epsilon) / (eg + epsilon)) * g
    ed = rho * ed + (1 - rho) * d * d
    p = _up(param, ct) + _lr(learning_rate) * d
    return (_out(p, param.dtype), _out(eg, avg_squared_grad.dtype),
            _out(ed, avg_squared_update.dtype))


def _adadelta_cpu(param, grad, learning_rate, avg_squared_grad, avg_squared_update, rho=0.95,
                  epsilon=1e-6, out=None):
    _check_arrays("adadelta", param, grad, avg_squared_grad=avg_squared_grad,
                  avg_squared_update=avg_squared_update)
    ct = _ct(avg_squared_grad.dtype)
    p, pback = _slot(param, out, 0, ct)
    eg, egback = _slot(avg_squared_grad, out, 1, ct)
    ed, edback = _slot(avg_squared_update, out, 2, ct)
    g = _up(grad, ct)
    t = _update_sq_avg(g, eg, rho)
    # d = -sqrt((ed + eps) / (eg + eps)) * g, kept in t
    u = np.add(eg, epsilon, out=np.empty_like(eg))
    np.add(ed, epsilon, out=t)
    np.divide(t, u, out=t)
    np.sqrt(t, out=t)
    t *= g
    np.negative(t, out=t)
    np.multiply(t, t, out=u)
    u -= ed
    u *= 1.0 - rho
    ed += u
    t *= _lr(learning_rate)
    p += t
    return (_finish(p, pback, param.dtype), _finish(eg, egback, avg_squared_grad.dtype),
            _finish(ed, edback, avg_squared_update.dtype))


def _rms_ref(param, grad, learning_rate, mean_square, moment, mean_grad=None, rho=0.95,
             epsilon=1e-6, momentum=0.0, centered=False):
    if centered and mean_grad is None:
        raise InvalidArgumentError("centered=True needs the 'mean_grad' state input")
    ct = _ct(mean_square.dtype)
    g = _up(grad, ct)
    ms = rho * _up(mean_square, ct) + (1 - rho) * g * g
    if centered:
        mg = rho * _up(mean_grad, ct) + (1 - rho) * g
        den = np.sqrt(ms - mg * mg + epsilon)
    else:
        mg = None
        den = np.sqrt(ms + epsilon)
    mom = momentum * _up(moment, ct) + _lr(learning_rate) * g / den
    p = _up(param, ct) - mom
    mgout = _optional_ref_out(mean_grad, centered, mg, mean_square, param)
    return _out(p, param.dtype), _out(ms, mean_square.dtype), _out(mom, moment.dtype), mgout


def _rms_cpu(param, grad, learning_rate, mean_square, moment, mean_grad=None, rho=0.95,
             epsilon=1e-6, momentum=0.0, centered=False, out=None):
    _check_arrays("rmsprop", param, grad, mean_square=mean_square, moment=moment,
                  mean_grad=mean_grad)
    if centered and mean_grad is None:
        raise InvalidArgumentError("rmsprop: centered=True needs the 'mean_grad' state input")
    ct = _ct(mean_square.dtype)
    p, pback = _slot(param, out, 0, ct)
    ms, msback = _slot(mean_square, out, 1, ct)
    mom, momback = _slot(moment, out, 2, ct)
    g = _up(grad, ct)
    t = _update_sq_avg(g, ms, rho)
    if centered:
        mg, mgback = _slot(mean_grad, out, 3, ct)
        np.subtract(g, mg, out=t)
        t *= 1.0 - rho
        mg += t
        np.multiply(mg, mg, out=t)
        np.subtract(ms, t, out=t)
    else:
        mg = mgback = None
        np.copyto(t, ms)
    t += epsilon
    np.sqrt(t, out=t)
    np.divide(g, t, out=t)
    t *= _lr(learning_rate)
    mom *= momentum
    mom += t
    p -= mom
    mgout = _optional_out(mean_grad, centered, mg, mgback, out, 3, mean_square, param)
    return (_finish(p, pback, param.dtype), _finish(ms, msback, mean_square.dtype),
            _finish(mom, momback, moment.dtype), mgout)


def _lamb_ref(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, beta1=0.9,
              beta2=0.999, epsilon=1e-6, weight_decay=0.01, always_adapt=False):
    ct = _ct(moment1.dtype)
    g = _up(grad, ct)
    p = _up(param, ct)
    m = beta1 * _up(moment1, ct) + (1 - beta1) * g
    v = beta2 * _up(moment2, ct) + (1 - beta2) * g * g
    b1p, b2p = _lr(beta1_pow, "beta1_pow"), _lr(beta2_pow, "beta2_pow")
    r = (m / (1 - b1p)) / (np.sqrt(v / (1 - b2p)) + epsilon) + weight_decay * p
    trust = 1.0
    if weight_decay > 0 or always_adapt:
        pn = float(np.sqrt(np.sum(p.astype(np.float64) ** 2)))
        rn = float(np.sqrt(np.sum(r.astype(np.float64) ** 2)))
        if pn > 0 and rn > 0:
            trust = pn / rn
    p = p - _lr(learning_rate) * trust * r
    return (_out(p, param.dtype), _out(m, moment1.dtype), _out(v, moment2.dtype),
            _out(beta1_pow * beta1, beta1_pow.dtype),
            _out(beta2_pow * beta2, beta2_pow.dtype))


def _lamb_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, beta1=0.9,
              beta2=0.999, epsilon=1e-6, weight_decay=0.01, always_adapt=False, out=None,
              segments=None):
    _check_arrays("lamb", param, grad, moment1=moment1, moment2=moment2)
    ct = _ct(moment1.dtype)
    p, pback = _slot(param, out, 0, ct)
    m, mback = _slot(moment1, out, 1, ct)
    v, vback = _slot(moment2, out, 2, ct)
    g = _up(grad, ct)
    t = _update_moments(g, m, v, beta1, beta2)
    # r = m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + wd * p, kept in t
    np.multiply(v, 1.0 / (1.0 - _lr(beta2_pow, "beta2_pow")), out=t)
    np.sqrt(t, out=t)
    t += epsilon
    np.divide(m, t, out=t)
    t *= 1.0 / (1.0 - _lr(beta1_pow, "beta1_pow"))
    if weight_decay != 0.0:
        t += weight_decay * p
    lr = _lr(learning_rate)
    if weight_decay > 0 or always_adapt:
        flat_p = p.reshape(-1)
        flat_t = t.reshape(-1)
        if segments is None:
            pn = math.sqrt(float(np.dot(flat_p, flat_p))) if p.size else 0.0
            rn = math.sqrt(float(np.dot(flat_t, flat_t))) if p.size else 0.0
            scale = lr * (pn / rn if pn > 0 and rn > 0 else 1.0)
            t *= scale
        else:
            seg = np.asarray(segments, dtype=np.intp)
            ends = np.append(seg[1:], flat_p.size)
            sq = np.multiply(flat_p, flat_p, out=np.empty_like(flat_p))
            pn = np.sqrt(np.add.reduceat(sq, seg, dtype=np.float64))
            np.multiply(flat_t, flat_t, out=sq)
            rn = np.sqrt(np.add.reduceat(sq, seg, dtype=np.float64))
            ok = (pn > 0) & (rn > 0) & (ends > seg)
            ratio = np.where(ok, pn / np.where(ok, rn, 1.0), 1.0) * lr
            for a, b, r in zip(seg.tolist(), ends.tolist(), ratio.tolist()):
                flat_t[a:b] *= r  # one pass in all: a slice per parameter
    else:
        t *= lr
    p -= t
    return (_finish(p, pback, param.dtype), _finish(m, mback, moment1.dtype),
            _finish(v, vback, moment2.dtype), _pow_out(beta1_pow, beta1, out, 3),
            _pow_out(beta2_pow, beta2, out, 4))


def _n(a) -> float:
    n = _lr(a, "n")
    if not n > 0:
        raise InvalidArgumentError(f"asgd: 'n' must be positive, got {n}")
    return n


def _asgd_ref(param, grad, learning_rate, d, y, n):
    ct = _ct(d.dtype)
    g = _up(grad, ct)
    d2 = _up(d, ct) - _up(y, ct) + g
    p = _up(param, ct) - _lr(learning_rate) / _n(n) * d2
    return _out(p, param.dtype), _out(d2, d.dtype), _out(g, y.dtype)


def _asgd_cpu(param, grad, learning_rate, d, y, n, out=None):
    _check_arrays("asgd", param, grad, d=d, y=y)
    ct = _ct(d.dtype)
    p, pback = _slot(param, out, 0, ct)
    dd, dback = _slot(d, out, 1, ct)
    g = _up(grad, ct)
    dd -= _up(y, ct)
    dd += g
    p -= (_lr(learning_rate) / _n(n)) * dd
    ydst = None if out is None else out[2]
    if ydst is None:
        yout = g.astype(y.dtype, copy=True)
    else:
        np.copyto(ydst, g, casting="unsafe")
        yout = ydst
    return _finish(p, pback, param.dtype), _finish(dd, dback, d.dtype), yout


# ---------------------------------------------------------------- nadam / radam / rprop
def _nadam_scalars(momentum_decay_pow, beta2_pow, mu_product, beta1, beta2, momentum_decay):
    """The step's scalars from Paddle's accumulators (all start at 1): the decay power
    0.96^(t psi), mu_t, mu_{t+1}, the products of mu up to t, beta2^t."""
    r = 0.96 ** momentum_decay
    mdp = _lr(momentum_decay_pow, "momentum_decay_pow") * r
    mu_t = beta1 * (1.0 - 0.5 * mdp)
    mu_t1 = beta1 * (1.0 - 0.5 * mdp * r)
    prod = _lr(mu_product, "mu_product") * mu_t
    b2p = _lr(beta2_pow, "beta2_pow") * beta2
    return mdp, mu_t, mu_t1, prod, b2p


def _scalar_like(v, like):
    return np.full_like(like, v)  # on like's device


def _nadam_ref(param, grad, learning_rate, momentum_decay_pow, beta2_pow, mu_product, moment1,
               moment2, beta1=0.9, beta2=0.999, epsilon=1e-8, momentum_decay=0.004):
    ct = _ct(moment1.dtype)
    mdp, mu_t, mu_t1, prod, b2p = _nadam_scalars(momentum_decay_pow, beta2_pow, mu_product,
                                                 beta1, beta2, momentum_decay)
    g = _up(grad, ct)
    m = beta1 * _up(moment1, ct) + (1 - beta1) * g
    v = beta2 * _up(moment2, ct) + (1 - beta2) * g * g
    lr = _lr(learning_rate)
    denom = np.sqrt(v / (1 - b2p)) + epsilon
    p = (_up(param, ct) - lr * (1 - mu_t) / (1 - prod) * g / denom
         - lr * mu_t1 / (1 - prod * mu_t1) * m / denom)
    return (_out(p, param.dtype), _scalar_like(mdp, momentum_decay_pow),
            _scalar_like(b2p, beta2_pow), _scalar_like(prod, mu_product),
            _out(m, moment1.dtype), _out(v, moment2.dtype))


def _scalar_out(v, like, out, i):
    dst = None if out is None else out[i]
    if dst is None:
        return _scalar_like(v, like)
    dst[...] = v
    return dst


def _nadam_cpu(param, grad, learning_rate, momentum_decay_pow, beta2_pow, mu_product, moment1,
               moment2, beta1=0.9, beta2=0.999, epsilon=1e-8, momentum_decay=0.004, out=None):
    _check_arrays("nadam", param, grad, moment1=moment1, moment2=moment2)
    ct = _ct(moment1.dtype)
    mdp, mu_t, mu_t1, prod, b2p = _nadam_scalars(momentum_decay_pow, beta2_pow, mu_product,
                                                 beta1, beta2, momentum_decay)
    p, pback = _slot(param, out, 0, ct)
    m, mback = _slot(moment1, out, 4, ct)
    v, vback = _slot(moment2, out, 5, ct)
    g = _up(grad, ct)
    t = _update_moments(g, m, v, beta1, beta2)
    lr = _lr(learning_rate)
    np.multiply(v, 1.0 / (1 - b2p), out=t)
    np.sqrt(t, out=t)
    t += epsilon  # t: the denominator
    num = np.multiply(g, lr * (1 - mu_t) / (1 - prod), out=np.empty_like(g))
    num += (lr * mu_t1 / (1 - prod * mu_t1)) * m
    num /= t
    p -= num
    return (_finish(p, pback, param.dtype), _scalar_out(mdp, momentum_decay_pow, out, 1),
            _scalar_out(b2p, beta2_pow, out, 2), _scalar_out(prod, mu_product, out, 3),
            _finish(m, mback, moment1.dtype), _finish(v, vback, moment2.dtype))


def _radam_scalars(beta1_pow, beta2_pow, rho, beta1, beta2):
    """Paddle's accumulators (all start at 1): beta1^t, beta2^t and
    ``rho = t beta2^t / (1 - beta2^t)``, advanced by one step; and the rectifier's
    rho_t = rho_inf - 2 rho."""
    b1p_prev = _lr(beta1_pow, "beta1_pow")
    b2p_prev = _lr(beta2_pow, "beta2_pow")
    b1p, b2p = b1p_prev * beta1, b2p_prev * beta2
    # t b2^t/(1-b2^t) from (t-1) b2^(t-1)/(1-b2^(t-1)) without counting t
    rho_new = (_lr(rho, "rho") * (1 - b2p_prev) * beta2 + b2p) / (1 - b2p)
    rho_inf = 2.0 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * rho_new
    r = None
    if rho_t > 5:
        r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2)
                                                              * rho_t))
    return b1p, b2p, rho_new, r


def _radam_ref(param, grad, learning_rate, beta1_pow, beta2_pow, rho, moment1, moment2,
               beta1=0.9, beta2=0.999, epsilon=1e-8):
    ct = _ct(moment1.dtype)
    b1p, b2p, rho_new, r = _radam_scalars(beta1_pow, beta2_pow, rho, beta1, beta2)
    g = _up(grad, ct)
    m = beta1 * _up(moment1, ct) + (1 - beta1) * g
    v = beta2 * _up(moment2, ct) + (1 - beta2) * g * g
    lr = _lr(learning_rate)
    m_hat = m / (1 - b1p)
    if r is None:
        p = _up(param, ct) - lr * m_hat
    else:
        p = _up(param, ct) - lr * m_hat * r * math.sqrt(1 - b2p) / (np.sqrt(v) + epsilon)
    return (_out(p, param.dtype), _scalar_like(b1p, beta1_pow), _scalar_like(b2p, beta2_pow),
            _scalar_like(rho_new, rho), _out(m, moment1.dtype), _out(v, moment2.dtype))


def _radam_cpu(param, grad, learning_rate, beta1_pow, beta2_pow, rho, moment1, moment2,
               beta1=0.9, beta2=0.999, epsilon=1e-8, out=None):
    _check_arrays("radam", param, grad, moment1=moment1, moment2=moment2)
    ct = _ct(moment1.dtype)
    b1p, b2p, rho_new, r = _radam_scalars(beta1_pow, beta2_pow, rho, beta1, beta2)
    p, pback = _slot(param, out, 0, ct)
    m, mback = _slot(moment1, out, 4, ct)
    v, vback = _slot(moment2, out, 5, ct)
    g = _up(grad, ct)
    t = _update_moments(g, m, v, beta1, beta2)
    lr = _lr(learning_rate)
    if r is None:
        np.multiply(m, lr / (1 - b1p), out=t)
    else:
        np.sqrt(v, out=t)
        t += epsilon
        np.divide(m, t, out=t)
        t *= lr / (1 - b1p) * r * math.sqrt(1 - b2p)
    p -= t
    return (_finish(p, pback, param.dtype), _scalar_out(b1p, beta1_pow, out, 1),
            _scalar_out(b2p, beta2_pow, out, 2), _scalar_out(rho_new, rho, out, 3),
            _finish(m, mback, moment1.dtype), _finish(v, vback, moment2.dtype))


def _rprop_ref(param, grad, learning_rate, prev, learning_rates, lr_min=1e-5, lr_max=50.0,
               eta_negative=0.5, eta_positive=1.2):
    ct = _ct(prev.dtype)
    g = _up(grad, ct).copy()
    s = g * _up(prev, ct)
    rates = _up(learning_rates, ct)
    rates = np.where(s > 0, np.minimum(rates * eta_positive, lr_max),
                     np.where(s < 0, np.maximum(rates * eta_negative, lr_min), rates))
    g = np.where(s < 0, 0, g).astype(ct)
    p = _up(param, ct) - np.sign(g) * rates
    return _out(p, param.dtype), _out(g, prev.dtype), _out(rates, learning_rates.dtype)


def _rprop_cpu(param, grad, learning_rate, prev, learning_rates, lr_min=1e-5, lr_max=50.0,
               eta_negative=0.5, eta_positive=1.2, out=None):
    _check_arrays("rprop", param, grad, prev=prev, learning_rates=learning_rates)
    ct = _ct(prev.dtype)
    p, pback = _slot(param, out, 0, ct)
    pr, prback = _slot(prev, out, 1, ct)
    lr, lrback = _slot(learning_rates, out, 2, ct)
    g = _up(grad, ct)
    s = np.multiply(g, pr, out=np.empty_like(pr))
    pos, neg = s > 0, s < 0
    np.copyto(lr, np.minimum(lr * eta_positive, lr_max), where=pos)
    np.copyto(lr, np.maximum(lr * eta_negative, lr_min), where=neg)
    np.copyto(pr, g)
    pr[neg] = 0
    np.sign(pr, out=s)
    s *= lr
    p -= s
    return (_finish(p, pback, param.dtype), _finish(pr, prback, prev.dtype),
            _finish(lr, lrback, learning_rates.dtype))
