"""cpu kernels of the fused family (own C++ in ``fw.core._C``): optimizer updates,
``fused_elementwise``, ``fused_matmul`` and the relu/gelu/silu activations.

What runs natively, and what falls back:

- **Optimizer updates** (``sgd momentum adam adamw adamax adagrad adadelta rmsprop
  lamb asgd``): one pass over memory (lamb: two) on both cores above ~16K elements
  per core. Native for C-contiguous param/grad of float32, float16 or bfloat16 with
  state of float32 or of the param's own low-precision dtype, and ``out`` entries
  that are None, the matching input (in place) or a separate array of the output's
  dtype and shape that overlaps no input. Everything else (float64, mixed state
  dtypes, strided arrays, other aliasing, bad input) goes to the op's NumPy cpu
  kernel, which also raises the errors. The constants passed to the C++ loops are
  derived exactly as the NumPy kernels derive theirs (``fw.core.ops.optimizer``),
  and the loops follow their operation order, so float32 results agree to rounding
  (and FMA contraction).
- **fused_elementwise**: programs over bool/float16/bfloat16/float32 values (any
  float64 value keeps the NumPy reference) are compiled once per program tuple into
  an ``EwProgram`` and run in L1-sized tiles on both cores. Inputs must have the
  result's size (full), one element (scalar) or be one row of the last dimension
  (a bias); other broadcasts and 0-size results use the reference.
- **fused_matmul**: float32/bfloat16 through ``fw.core._native.matmul`` (oneDNN with
  bias, activation and residual post-ops) from about 64x64x64 on, with the same
  small-problem crossover as :mod:`fw.core.kernels.cpu`. ``alpha`` scales the smaller
  operand first (exact for powers of two, otherwise within float rounding of the
  reference); a residual that broadcasts (rather than having the product's shape),
  float16/float64 and small products use the reference.
- **Activations** ``relu gelu silu``: the interpreter's loop for that opcode on
  C-contiguous float32/float16/bfloat16 arrays of any size (one thread up to ~128K
  elements): 3x (relu, silu) to 17x (erf-form gelu) faster than the NumPy references
  on large arrays, and bit-identical to the same instruction inside a
  fused_elementwise program. float64 and strided arrays use the reference.

Nothing is registered when the extension is disabled (``FW_DISABLE_NATIVE=1``) or
the CPU lacks AVX2/FMA/F16C (``_C.fused_supported()``).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from fw.core import _native
from fw.core import dtypes as _dt
from fw.core.ir.types import TensorType
from fw.core.ops import optimizer as _opt
from fw.core.ops._registry import OPS

__all__ = ["available", "compile_program", "register"]

C = _native.C
available: bool = C is not None and bool(C.fused_supported())

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_U16 = np.dtype(np.uint16)
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


def _bits(a):
    return a.view(_U16) if a.dtype is _BF16 else a  # the bfloat16 descriptor is a singleton


# ================================================================ optimizer updates
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


# ================================================================ fused_elementwise
_EW_DT = {_dt.bool_: 0, _dt.float16: 1, _dt.bfloat16: 2, _dt.float32: 3}
_EW_NP = frozenset(d.np for d in _EW_DT)
_EW_CACHE_MAX = 4096


def _rounded(value, dtype) -> float:
    """`value` as the op's reference holds it: a 0-d array of `dtype`, read as float."""
    return float(np.asarray(value, dtype=dtype.np).astype(np.float32))


def compile_program(program, n_inputs):
    """The `_C.EwProgram` of a (validated) fused_elementwise program, or None when it
    computes on float64 values (left to the NumPy reference)."""
    names = {n: i for i, n in enumerate(C.ew_opcode_names())}
    code = []
    for opcode, dtype, operands, scalars in program:
        dc = _EW_DT.get(dtype)
        if dc is None:
            return None
        imm = 0.0
        name = opcode
        if opcode == "gelu":
            name = "gelu_tanh" if scalars[0] else "gelu_erf"
        elif opcode in ("const", "pow"):
            imm = _rounded(scalars[0], dtype)
        ops = tuple(operands) + (-1,) * (3 - len(operands))
        code.append((names[name], dc, *ops, imm))
    return C.EwProgram(n_inputs, code)


def _make_fused_elementwise(reference):
    from fw.core.ops.fused import check_program

    cache: dict = {}  # (id(program), out_dtype, input dtypes) -> (program, EwProgram|None)
    full_kinds: dict = {}
    broadcast_shapes = np.broadcast_shapes
    prod = math.prod

    def prepare(inputs, program, out_dtype, key):
        # validates exactly as the reference does (raises its errors)
        check_program([TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in inputs], program,
                      out_dtype)
        native = None
        if all(a.dtype in _EW_NP for a in inputs):
            native = compile_program(program, len(inputs))
        if len(cache) >= _EW_CACHE_MAX:
            cache.clear()
        ent = cache[key] = (program, native)
        return ent

    def fused_elementwise_cpu(inputs, program=(), out_dtype=None):
        if not inputs or not all(type(a) is _ndarray for a in inputs):
            return reference(inputs, program=program, out_dtype=out_dtype)
        key = (id(program), out_dtype, *[a.dtype for a in inputs])
        ent = cache.get(key)
        if ent is None or ent[0] is not program:
            ent = prepare(inputs, program, out_dtype, key)
        prog = ent[1]
        if prog is None:
            return reference(inputs, program=program, out_dtype=out_dtype)
        n = len(inputs)
        shape = inputs[0].shape
        if all(a.shape == shape for a in inputs):
            kinds = full_kinds.get(n) or full_kinds.setdefault(n, [0] * n)
            size = prod(shape)
            row = 0
        else:
            try:
                shape = broadcast_shapes(*[a.shape for a in inputs])
            except ValueError:
                return reference(inputs, program=program, out_dtype=out_dtype)
            size = prod(shape)
            row = shape[-1] if shape else 1
            kinds = []
            for a in inputs:
                s = a.size
                if s == size:
                    kinds.append(0)
                elif s == 1:
                    kinds.append(1)
                elif s == row and a.shape[-1] == row and row <= 65536:
                    kinds.append(2)
                else:  # another broadcast: the reference
                    return reference(inputs, program=program, out_dtype=out_dtype)
        if size == 0:
            return reference(inputs, program=program, out_dtype=out_dtype)
        arrays = []
        for a, k in zip(inputs, kinds):
            if k != 1 and not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            arrays.append(a.view(_U16) if a.dtype == _BF16 else a)
        out = np.empty(shape, dtype=out_dtype.np)
        prog.run(arrays, kinds, row, out.view(_U16) if out.dtype == _BF16 else out)
        return out

    fused_elementwise_cpu.cache = cache
    return fused_elementwise_cpu


# ================================================================ fused_matmul
_MM_ACT = {"none": None, "relu": "relu", "gelu_tanh": "gelu_tanh", "gelu_erf": "gelu_erf",
           "sigmoid": "sigmoid", "tanh": "tanh", "silu": "swish"}


def _make_fused_matmul(reference):
    native = _native.matmul
    threshold = _native.NUMPY_FASTER_BELOW_FLOPS

    def product_shape(x, y, tx, ty):
        """The product's shape, or None when the reference must decide (errors)."""
        k = (x.shape[-2] if tx else x.shape[-1]) if x.ndim >= 2 else x.shape[-1]
        if k != (y.shape[-1] if ty else y.shape[-2]):
            return None
        n = y.shape[-2] if ty else y.shape[-1]
        if x.ndim == 1:
            return (*y.shape[:-2], n)
        try:
            batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        except ValueError:
            return None
        return (*batch, x.shape[-1] if tx else x.shape[-2], n)

    def fused_matmul_cpu(x, y, bias=None, residual=None, transpose_x=False, transpose_y=False,
                         activation="none", alpha=1.0):
        d = x.dtype
        if type(x) is _ndarray and type(y) is _ndarray and (d is _F32 or d == _BF16) and \
                y.dtype == d and y.ndim >= 2 and x.ndim >= 1 and x.size and y.size and \
                (bias is None or bias.dtype == d) and (residual is None or residual.dtype == d):
            n = y.shape[-2] if transpose_y else y.shape[-1]
            if 2 * x.size * n >= threshold:
                shape = product_shape(x, y, transpose_x, transpose_y)
                if shape is not None and \
                        (residual is None or residual.shape == shape) and \
                        (bias is None or (bias.size == n and 1 <= bias.ndim <= len(shape) and
                                          bias.shape[-1] == n)):
                    if alpha != 1.0:  # alpha (x @ y) == (alpha x) @ y: scale the smaller one
                        if x.size <= y.size:
                            x = x * np.asarray(alpha, dtype=d)
                        else:
                            y = y * np.asarray(alpha, dtype=d)
                    return native(x, y, transpose_x, transpose_y,
                                  bias=None if bias is None else bias.reshape(-1),
                                  activation=_MM_ACT[activation], residual=residual)
        return reference(x, y, bias, residual, transpose_x=transpose_x, transpose_y=transpose_y,
                         activation=activation, alpha=alpha)

    return fused_matmul_cpu


# ================================================================ activations
_ACT_DT = {_F32: 3, _F16: 1, _BF16: 2}  # ew_unary dtype codes
# op -> the interpreter opcode computing it (gelu: erf form, tanh form). Only ops whose
# NumPy references are several passes (and whose records compare with a tolerance):
# exp/log/tanh/sigmoid/erf are single SIMD ufuncs in NumPy, and their records feed them
# integer inputs promoted to float32 and demand NumPy's exact bits.
_ACTIVATIONS = {"relu": "relu", "silu": "silu", "gelu": ("gelu_erf", "gelu_tanh")}


def _make_activation(name, reference):
    """The op's kernel: C-contiguous float32/float16/bfloat16 arrays of any size go
    through the interpreter's own loop for that opcode (so an unfused op and the same
    instruction in a fused_elementwise program give identical bits); everything else
    (float64, strided, complex) takes the reference."""
    names = {n: i for i, n in enumerate(C.ew_opcode_names())}
    unary = C.ew_unary
    codes = _ACT_DT
    empty = np.empty
    u16 = _U16
    spec = _ACTIVATIONS[name]

    if name == "gelu":
        erf_form, tanh_form = names[spec[0]], names[spec[1]]

        def gelu_cpu(x, approximate=False):
            if type(x) is _ndarray:
                c = codes.get(x.dtype)
                if c is not None and x.flags.c_contiguous:
                    out = empty(x.shape, x.dtype)
                    op = tanh_form if approximate else erf_form
                    if c == 2:
                        unary(op, x.view(u16), out.view(u16))
                    else:
                        unary(op, x, out)
                    return out
            return reference(x, approximate=approximate)

        return gelu_cpu

    opcode = names[spec]

    def activation_cpu(x):
        if type(x) is _ndarray:
            c = codes.get(x.dtype)
            if c is not None and x.flags.c_contiguous:
                out = empty(x.shape, x.dtype)
                if c == 2:
                    unary(opcode, x.view(u16), out.view(u16))
                else:
                    unary(opcode, x, out)
                return out
        return reference(x)

    activation_cpu.__name__ = activation_cpu.__qualname__ = f"_{name}_cpu_native"
    return activation_cpu


# ================================================================ mask gradients
def _make_mask_grad(reference, with_scale):
    """relu_grad (``grad_out * (out > 0)``) and dropout_grad (``grad_out * mask *
    scale``) as fixed interpreter programs: one pass over memory instead of NumPy's
    compare, cast and multiply. The mask is cast and multiplied (not selected), so NaN
    and Inf gradients behave exactly as in the reference."""
    names = {n: i for i, n in enumerate(C.ew_opcode_names())}
    programs: dict = {}

    def program(dtype, scale):
        key = (dtype, scale)
        prog = programs.get(key)
        if prog is None:
            dc = _ACT_DT[dtype]
            if with_scale:  # inputs: mask (bool), grad_out
                code = [(names["cast"], dc, 0, -1, -1, 0.0), (names["multiply"], dc, 1, 2, -1, 0.0)]
                if scale != 1.0:
                    code += [(names["const"], dc, -1, -1, -1, _rounded(scale, _dt.from_numpy(
                        dtype))), (names["multiply"], dc, 3, 4, -1, 0.0)]
            else:  # inputs: out, grad_out
                code = [(names["const"], dc, -1, -1, -1, 0.0),
                        (names["greater_than"], 0, 0, 2, -1, 0.0),
                        (names["cast"], dc, 3, -1, -1, 0.0),
                        (names["multiply"], dc, 1, 4, -1, 0.0)]
            prog = programs[key] = C.EwProgram(2, code)
        return prog

    def native(first, grad_out, scale):
        if (type(first) is _ndarray and type(grad_out) is _ndarray
                and first.shape == grad_out.shape and grad_out.dtype in _ACT_DT
                and (first.dtype == bool if with_scale else first.dtype == grad_out.dtype)
                and grad_out.size and first.flags.c_contiguous and grad_out.flags.c_contiguous):
            out = np.empty(grad_out.shape, grad_out.dtype)
            program(grad_out.dtype, scale).run([_bits(first), _bits(grad_out)], [0, 0], 0,
                                               _bits(out))
            return out
        return None

    if with_scale:
        def dropout_grad_cpu(mask, grad_out, scale=1.0):
            out = native(mask, grad_out, float(scale))
            return reference(mask, grad_out, scale=scale) if out is None else out

        return dropout_grad_cpu

    def relu_grad_cpu(out, grad_out):
        res = native(out, grad_out, 1.0)
        return reference(out, grad_out) if res is None else res

    return relu_grad_cpu


# ================================================================ registration
def register() -> None:
    """Attach the native kernels (idempotent: a previous wrapper is unwrapped)."""
    if not available:
        return
    for name, make in _OPTIMIZERS.items():
        op = OPS.get(name)
        if op is None:
            continue
        k = op.kernels.get("cpu") or op.reference
        op.kernels["cpu"] = make(getattr(k, "numpy_kernel", k))
    for name, make in (("fused_elementwise", _make_fused_elementwise),
                       ("fused_matmul", _make_fused_matmul),
                       ("relu_grad", lambda ref: _make_mask_grad(ref, False)),
                       ("dropout_grad", lambda ref: _make_mask_grad(ref, True))):
        op = OPS.get(name)
        if op is not None:
            op.kernels["cpu"] = make(op.reference)
    for name in _ACTIVATIONS:
        op = OPS.get(name)
        if op is not None:
            op.kernels["cpu"] = _make_activation(name, op.reference)


register()
