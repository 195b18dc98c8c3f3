"""cpu kernels of the optimizer family (own C++ in ``fw.core._C``): one-pass updates of
``sgd momentum adam adamw adamax adagrad adadelta rmsprop lamb asgd``.

One pass over memory (lamb: two) on both cores above ~16K elements per core. Native
for C-contiguous param/grad of float32, float16 or bfloat16 with state of float32 or
of the param's own low-precision dtype, and ``out`` entries that are None, the matching
input (in place) or a separate array of the output's dtype and shape that overlaps no
input. Everything else (float64, mixed state dtypes, strided arrays, other aliasing,
bad input) goes to the op's NumPy cpu kernel, which also raises the errors. The
constants passed to the C++ loops are derived exactly as the NumPy kernels derive
theirs (``fw.core.ops._optimizer_np``), and the loops follow their operation order, so
float32 results agree to rounding (and FMA contraction).

Nothing is registered when the extension is disabled (``FW_DISABLE_NATIVE=1``) or
the CPU lacks AVX2/FMA/F16C (``_C.fused_supported()``).
"""

from __future__ import annotations

import math

import numpy as np

from fw.core.kernels.cpu._common import _BF16, _F16, _F32, C, _bits, _ndarray, fused_available
from fw.core.ops import _optimizer_np as _opt
from fw.core.ops._registry import OPS

__all__ = ["register"]

_PARAM_DT = frozenset((_F32, _F16, _BF16))
_empty_like = np.empty_like
_may_share = np.may_share_memory

# Rule numbers of _C.optim_update, and the constants/flags each rule's loop reads
# (lr is the one-element learning rate as a float; b1p/b2p the beta powers):
#   sgd       (lr,)                                             ()
#   momentum  (lr, mu, rescale_grad, coeff)                     (nesterov, l2 on, rescaled)
#   adam(w)   (1 - lr' coeff, 1 - b1, 1 - b2, eps c2, lr' c2 / (1 - b1p)),
#             lr' = lr lr_ratio, c2 = sqrt(1 - b2p)             (amsgrad, decay on)
#   adamax    (1 - b1, b2, eps, lr / (1 - b1p))                 ()
#   adagrad   (lr, eps)                                         ()
#   adadelta  (lr, 1 - rho, eps)                                ()
#   rmsprop   (lr, 1 - rho, eps, momentum)                      (centered,)
#   lamb      (1 - b1, 1 - b2, 1 / (1 - b2p), eps, 1 / (1 - b1p), wd, lr)  (adapt, wd != 0)
#   asgd      (lr / n,)                                         ()
_SGD, _MOMENTUM, _ADAM, _ADAMAX, _ADAGRAD, _ADADELTA, _RMSPROP, _LAMB, _ASGD = range(9)



def _targets(param, grad, states, out, out_idx):
    """The arrays the native kernel writes (param_out, then one per state), or None
    when the call is not for the native kernel. ``out_idx[i]`` is the position in
    ``out`` of state i's output."""
    t = _ndarray
    if type(param) is not t or type(grad) is not t:
        return None
    pd = param.dtype
    shape = param.shape
    if pd not in _PARAM_DT or grad.dtype != pd or grad.shape != shape or \
            not (param.flags.c_contiguous and grad.flags.c_contiguous):
        return None
    sd = None
    for s in states:
        if type(s) is not t or s.shape != shape or not s.flags.c_contiguous:
            return None
        if sd is None:
            sd = s.dtype
        elif s.dtype != sd:
            return None
    if sd is not None and sd != _F32 and sd != pd:
        return None
    srcs = (param, *states)
    if out is None:
        return [_empty_like(a) for a in srcs]
    res = []
    for a, j in zip(srcs, (0, *out_idx)):
        d = out[j]
        if d is None:
            d = _empty_like(a)
        elif d is not a:
            # a separate destination: same dtype/shape/layout, and not overlapping
            # any input (the loop reads element i of every input after writing i-1)
            if type(d) is not t or d.dtype != a.dtype or d.shape != shape or \
                    not d.flags.c_contiguous:
                return None
            for x in (param, grad, *states):
                if _may_share(d, x):
                    return None
        res.append(d)
    if len(set(map(id, res))) != len(res):
        return None
    return res


def _call(rule, param, grad, states, targets, consts, flags, segments=None):
    if param.dtype is _BF16 or (states and states[0].dtype is _BF16):
        C.optim_update(rule, _bits(param), _bits(grad), _bits(targets[0]),
                       [_bits(s) for s in states], [_bits(o) for o in targets[1:]], consts,
                       flags, segments)
    else:
        C.optim_update(rule, param, grad, targets[0], states, targets[1:], consts, flags,
                       segments)


def _pow(pow_, beta, out, i):
    """``beta_pow * beta`` into ``out[i]`` (or new): the NumPy kernels' _pow_out,
    without its generic conversions when the product already has the pow's dtype."""
    if out is not None and out[i] is pow_ and type(pow_) is _ndarray and \
            pow_.dtype.kind == "f" and pow_.flags.writeable:
        np.multiply(pow_, beta, out=pow_)  # in place (a static step's update): same bits
        return pow_
    r = pow_ * beta
    if type(r) is not _ndarray or r.dtype != pow_.dtype:
        return _opt._pow_out(pow_, beta, out, i)
    dst = None if out is None else out[i]
    if dst is None:
        return r
    np.copyto(dst, r.reshape(dst.shape), casting="unsafe")
    return dst


def _wrap(name, fn, numpy_kernel):
    fn.__name__ = f"_{name}_cpu_native"
    fn.__qualname__ = fn.__name__
    fn.numpy_kernel = numpy_kernel  # the fallback (register() unwraps it on re-registration)
    return fn


def _make_sgd(numpy_kernel):
    def sgd_cpu(param, grad, learning_rate, out=None):
        tg = _targets(param, grad, (), out, ())
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, out=out)
        _call(_SGD, param, grad, (), tg, (_opt._lr(learning_rate),), ())
        return tg[0]

    return _wrap("sgd", sgd_cpu, numpy_kernel)


def _make_momentum(numpy_kernel):
    def momentum_cpu(param, grad, learning_rate, velocity, mu=0.9, use_nesterov=False,
                     regularization_method="", regularization_coeff=0.0, rescale_grad=1.0,
                     out=None):
        tg = _targets(param, grad, (velocity,), out, (1,))
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, velocity, mu, use_nesterov,
                                regularization_method, regularization_coeff, rescale_grad,
                                out=out)
        l2 = regularization_method == "l2_decay" and regularization_coeff != 0.0
        _call(_MOMENTUM, param, grad, (velocity,), tg,
              (_opt._lr(learning_rate), mu, rescale_grad, regularization_coeff),
              (bool(use_nesterov), l2, rescale_grad != 1.0))
        return tg[0], tg[1]

    return _wrap("momentum", momentum_cpu, numpy_kernel)


def _maxed_out(moment2, moment2_max, param, out):
    """moment2_max_out when amsgrad is off (as the NumPy kernel gives it)."""
    if moment2_max is None:
        return _opt._empty(moment2.dtype, param)
    dst = None if out is None else out[5]
    if dst is None:
        return moment2_max.copy()
    if dst is not moment2_max:
        np.copyto(dst, moment2_max)
    return dst


def _make_adam(name, numpy_kernel):
    decoupled = name == "adamw"

    def native(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
               moment2_max, beta1, beta2, epsilon, amsgrad, lr_ratio, coeff, out):
        ams = bool(amsgrad) and moment2_max is not None
        states = (moment1, moment2, moment2_max) if ams else (moment1, moment2)
        tg = _targets(param, grad, states, out, (1, 2, 5)[:len(states)])
        if tg is None:
            return None
        lr = _opt._lr(learning_rate) * lr_ratio
        b1p, b2p = _opt._lr(beta1_pow, "beta1_pow"), _opt._lr(beta2_pow, "beta2_pow")
        c2 = math.sqrt(1.0 - b2p)
        consts = (1.0 - lr * coeff, 1.0 - beta1, 1.0 - beta2, epsilon * c2,
                  lr * c2 / (1.0 - b1p))
        _call(_ADAM, param, grad, states, tg, consts, (ams, coeff != 0.0))
        vout = tg[3] if ams else _maxed_out(moment2, moment2_max, param, out)
        return (tg[0], tg[1], tg[2], _pow(beta1_pow, beta1, out, 3),
                _pow(beta2_pow, beta2, out, 4), vout)

    if decoupled:
        def adamw_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                      moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, lr_ratio=1.0,
                      coeff=0.01, with_decay=True, amsgrad=False, out=None):
            if not (amsgrad and moment2_max is None):
                r = native(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                           moment2_max, beta1, beta2, epsilon, amsgrad, lr_ratio,
                           coeff if with_decay else 0.0, out)
                if r is not None:
                    return r
            return numpy_kernel(param, grad, learning_rate, moment1, moment2, beta1_pow,
                                beta2_pow, moment2_max, beta1, beta2, epsilon, lr_ratio, coeff,
                                with_decay, amsgrad, out=out)

        return _wrap(name, adamw_cpu, numpy_kernel)

    def adam_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                 moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, amsgrad=False,
                 out=None):
        if not (amsgrad and moment2_max is None):
            r = native(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                       moment2_max, beta1, beta2, epsilon, amsgrad, 1.0, 0.0, out)
            if r is not None:
                return r
        return numpy_kernel(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                            moment2_max, beta1, beta2, epsilon, amsgrad, out=out)

    return _wrap(name, adam_cpu, numpy_kernel)


def _make_adamax(numpy_kernel):
    def adamax_cpu(param, grad, learning_rate, moment, inf_norm, beta1_pow, beta1=0.9,
                   beta2=0.999, epsilon=1e-8, out=None):
        tg = _targets(param, grad, (moment, inf_norm), out, (1, 2))
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, moment, inf_norm, beta1_pow, beta1,
                                beta2, epsilon, out=out)
        step = _opt._lr(learning_rate) / (1.0 - _opt._lr(beta1_pow, "beta1_pow"))
        _call(_ADAMAX, param, grad, (moment, inf_norm), tg, (1.0 - beta1, beta2, epsilon, step),
              ())
        return tg[0], tg[1], tg[2], _pow(beta1_pow, beta1, out, 3)

    return _wrap("adamax", adamax_cpu, numpy_kernel)


def _make_adagrad(numpy_kernel):
    def adagrad_cpu(param, grad, learning_rate, moment, epsilon=1e-6, out=None):
        tg = _targets(param, grad, (moment,), out, (1,))
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, moment, epsilon, out=out)
        _call(_ADAGRAD, param, grad, (moment,), tg, (_opt._lr(learning_rate), epsilon), ())
        return tg[0], tg[1]

    return _wrap("adagrad", adagrad_cpu, numpy_kernel)


def _make_adadelta(numpy_kernel):
    def adadelta_cpu(param, grad, learning_rate, avg_squared_grad, avg_squared_update, rho=0.95,
                     epsilon=1e-6, out=None):
        states = (avg_squared_grad, avg_squared_update)
        tg = _targets(param, grad, states, out, (1, 2))
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, avg_squared_grad, avg_squared_update,
                                rho, epsilon, out=out)
        _call(_ADADELTA, param, grad, states, tg, (_opt._lr(learning_rate), 1.0 - rho, epsilon),
              ())
        return tg[0], tg[1], tg[2]

    return _wrap("adadelta", adadelta_cpu, numpy_kernel)


def _make_rmsprop(numpy_kernel):
    def rmsprop_cpu(param, grad, learning_rate, mean_square, moment, mean_grad=None, rho=0.95,
                    epsilon=1e-6, momentum=0.0, centered=False, out=None):
        if not (centered and mean_grad is None):
            states = (mean_square, moment, mean_grad) if centered else (mean_square, moment)
            tg = _targets(param, grad, states, out, (1, 2, 3)[:len(states)])
            if tg is not None:
                _call(_RMSPROP, param, grad, states, tg,
                      (_opt._lr(learning_rate), 1.0 - rho, epsilon, momentum), (bool(centered),))
                if centered:
                    mgout = tg[3]
                elif mean_grad is None:
                    mgout = _opt._empty(mean_square.dtype, param)
                else:
                    dst = None if out is None else out[3]
                    mgout = mean_grad.copy() if dst is None else dst
                    if dst is not None and dst is not mean_grad:
                        np.copyto(dst, mean_grad)
                return tg[0], tg[1], tg[2], mgout
        return numpy_kernel(param, grad, learning_rate, mean_square, moment, mean_grad, rho,
                            epsilon, momentum, centered, out=out)

    return _wrap("rmsprop", rmsprop_cpu, numpy_kernel)


def _make_lamb(numpy_kernel):
    def lamb_cpu(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, beta1=0.9,
                 beta2=0.999, epsilon=1e-6, weight_decay=0.01, always_adapt=False, out=None,
                 segments=None):
        tg = _targets(param, grad, (moment1, moment2), out, (1, 2))
        adapt = weight_decay > 0 or bool(always_adapt)
        seg = None
        if tg is not None and segments is not None and adapt:
            seg = np.ascontiguousarray(segments, dtype=np.int64).reshape(-1)
            if not (seg.size and seg[0] == 0 and seg[-1] <= param.size and
                    (seg.size == 1 or bool(np.all(seg[1:] >= seg[:-1])))):
                tg = None  # unusual offsets: the NumPy kernel's reduceat semantics
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                                beta1, beta2, epsilon, weight_decay, always_adapt, out=out,
                                segments=segments)
        b1p, b2p = _opt._lr(beta1_pow, "beta1_pow"), _opt._lr(beta2_pow, "beta2_pow")
        consts = (1.0 - beta1, 1.0 - beta2, 1.0 / (1.0 - b2p), epsilon, 1.0 / (1.0 - b1p),
                  weight_decay, _opt._lr(learning_rate))
        _call(_LAMB, param, grad, (moment1, moment2), tg, consts,
              (adapt, weight_decay != 0.0), seg)
        return (tg[0], tg[1], tg[2], _pow(beta1_pow, beta1, out, 3),
                _pow(beta2_pow, beta2, out, 4))

    return _wrap("lamb", lamb_cpu, numpy_kernel)


def _make_asgd(numpy_kernel):
    def asgd_cpu(param, grad, learning_rate, d, y, n, out=None):
        tg = _targets(param, grad, (d, y), out, (1, 2))
        if tg is None:
            return numpy_kernel(param, grad, learning_rate, d, y, n, out=out)
        _call(_ASGD, param, grad, (d, y), tg, (_opt._lr(learning_rate) / _opt._n(n),), ())
        return tg[0], tg[1], tg[2]

    return _wrap("asgd", asgd_cpu, numpy_kernel)


_OPTIMIZERS = {
    "sgd": _make_sgd, "momentum": _make_momentum,
    "adam": lambda k: _make_adam("adam", k), "adamw": lambda k: _make_adam("adamw", k),
    "adamax": _make_adamax, "adagrad": _make_adagrad, "adadelta": _make_adadelta,
    "rmsprop": _make_rmsprop, "lamb": _make_lamb, "asgd": _make_asgd,
}


def register() -> None:
    """Attach the native kernels (idempotent: a previous wrapper is unwrapped: the
    NumPy kernel of each optimizer op is its cpu kernel, not its reference)."""
    if not fused_available:
        return
    for name, make in _OPTIMIZERS.items():
        op = OPS.get(name)
        if op is None:
            continue
        k = op.kernels.get("cpu") or op.reference
        op.kernels["cpu"] = make(getattr(k, "numpy_kernel", k))


register()
