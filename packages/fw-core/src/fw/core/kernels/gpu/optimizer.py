"""Fused optimizer updates on the GPU: one ``cupy.ElementwiseKernel`` launch per flat
buffer instead of the reference's dozen, and no device-to-host copy.

The reference reads the learning rate and the beta powers as Python floats
(``a.item()``): on a GPU each read waits for every queued kernel. Here they are
kernel arguments: a host value (the eager optimizer keeps them on the host) is
passed by value, a device array (a to_static program's captured state) is
broadcast inside the kernel. Like the cpu kernels these accept ``out=`` (the
optimizer's and the executor's in-place update); without it they work on copies.
Only the common case is fused (float32/float64 state of the parameter's dtype, no
amsgrad); anything else runs the reference.
"""

from __future__ import annotations

import numpy as np

_ADAM_SRC = """
    T lr_ = lr * lr_ratio;
    T p0 = p * (T(1) - lr_ * coeff);
    m = beta1 * m + (T(1) - beta1) * g;
    v = beta2 * v + (T(1) - beta2) * g * g;
    T mhat = m / (T(1) - b1p);
    T vhat = v / (T(1) - b2p);
    p = p0 - lr_ * mhat / (sqrt(vhat) + eps);
"""


def _scalar(a, dtype):
    """A learning rate or beta power as a kernel argument of `dtype`, without reading a
    device (a to_static program may hold the learning rate as a float64 array)."""
    if isinstance(a, np.ndarray) or isinstance(a, (int, float, np.generic)):
        return float(np.asarray(a).reshape(-1)[0])
    a = a.reshape(())  # a device array: broadcast in the kernel
    return a if a.dtype == dtype else a.astype(dtype)


def kernels(cp):
    from fw.core.ops._registry import OPS

    adam_k = cp.ElementwiseKernel(
        "T g, T lr, T b1p, T b2p, T beta1, T beta2, T eps, T lr_ratio, T coeff",
        "T p, T m, T v", _ADAM_SRC, "fw_adam_update")
    sgd_k = cp.ElementwiseKernel("T g, T lr", "T p", "p = p - lr * g;", "fw_sgd_update")

    def _fusable(param, grad, *states):
        d = param.dtype
        return d in (np.float32, np.float64) and grad.dtype == d and \
            all(s.dtype == d for s in states) and param.size > 0

    def _targets(out, arrays):
        """The arrays to update in place: `out`'s, else copies."""
        got = []
        for k, a in enumerate(arrays):
            o = out[k] if out is not None and k < len(out) else None
            if o is None:
                o = a.copy()
            elif o is not a:
                cp.copyto(o, a)
            got.append(o)
        return got

    def adam_like(ref_name, decay):
        ref = OPS[ref_name].reference

        def k(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
              moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, lr_ratio=1.0,
              coeff=0.01, with_decay=True, amsgrad=False, out=None):
            if amsgrad or not _fusable(param, grad, moment1, moment2):
                kw = dict(beta1=beta1, beta2=beta2, epsilon=epsilon, amsgrad=amsgrad)
                if decay:
                    kw.update(lr_ratio=lr_ratio, coeff=coeff, with_decay=with_decay)
                res = ref(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                          moment2_max, **kw)
                if out is not None:
                    for o, r in zip(out, res):
                        if o is not None:
                            cp.copyto(o, r)
                return res
            p, m, v = _targets(out, (param, moment1, moment2))
            c = (coeff if with_decay else 0.0) if decay else 0.0
            d = param.dtype
            adam_k(grad, _scalar(learning_rate, d), _scalar(beta1_pow, d),
                   _scalar(beta2_pow, d), beta1, beta2, epsilon,
                   lr_ratio if decay else 1.0, c, p, m, v)
            b1 = beta1_pow * beta1
            b2 = beta2_pow * beta2
            vmax = moment2_max.copy() if moment2_max is not None else \
                cp.empty((0,), dtype=moment2.dtype)
            return p, m, v, b1, b2, vmax

        return k

    def sgd(param, grad, learning_rate, out=None):
        if not _fusable(param, grad):
            res = OPS["sgd"].reference(param, grad, learning_rate)
            if out is not None and out[0] is not None:
                cp.copyto(out[0], res)
            return res
        (p,) = _targets(out, (param,))
        sgd_k(grad, _scalar(learning_rate, param.dtype), p)
        return p

    return {"adam": adam_like("adam", False), "adamw": adam_like("adamw", True), "sgd": sgd}
