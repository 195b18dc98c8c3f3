"""Optimizer update ops: one op per update rule, ``(param, grad, learning_rate, state...)
-> (param_out, state_out...)``.

They are the IR form of a parameter update (fw.jit puts them into static training
programs after the backward ops) and the specification of fw-nn's eager optimizers,
which run the same kernels over flat buffers holding many parameters at once. They
are functional (the outputs are new values; nothing is written in place), not
differentiable, and not public functions (``fw.optimizer`` is the user-facing API).

Conventions shared by every op:

- ``learning_rate`` is a one-element tensor (shape ``[]`` or ``[1]``): the effective
  rate of this parameter (the optimizer's rate times the parameter's multiplier), so a
  learning-rate schedule changes an input, not the program.
- ``param`` and ``grad`` have one shape and one real floating dtype. State tensors
  (moments, accumulators) have the param's shape and a real floating dtype of their
  own (float32 state for a float16/bfloat16 param is allowed); the update is computed
  in the state's dtype (float16/bfloat16 are widened to float32) and ``param_out`` is
  rounded back to the param's dtype. Master weights (``multi_precision``) are not an
  op concern: the optimizer passes the float32 master copy as ``param`` and casts it
  into the low-precision parameter afterwards.
- ``beta1_pow``/``beta2_pow`` are one-element tensors holding ``beta^t`` for the step
  being taken (Paddle's convention: they start at ``beta``); the ops return them times
  ``beta`` for the next step.
- An optional state input (``moment2_max?`` of adam/adamw, ``mean_grad?`` of rmsprop)
  used only in one mode gives a 0-size ``[0]`` output when it is absent.

The ops (``t`` the step, ``g`` the gradient, ``lr`` the learning rate):

``sgd(param, grad, learning_rate) -> param_out``
    ``p - lr * g``.
``momentum(param, grad, learning_rate, velocity) -> (param_out, velocity_out)`` --
    ``mu=0.9, use_nesterov=False, regularization_method="", regularization_coeff=0.0,
    rescale_grad=1.0``: ``g = rescale_grad * g`` (``+ coeff * p`` when
    ``regularization_method="l2_decay"``), ``v = mu * v + g``, ``p - lr * v`` or, with
    Nesterov, ``p - lr * (g + mu * v)``.
``adam(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, moment2_max?)
    -> (param_out, moment1_out, moment2_out, beta1_pow_out, beta2_pow_out,
    moment2_max_out)`` -- ``beta1=0.9, beta2=0.999, epsilon=1e-8, amsgrad=False``:
    ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g^2``; with amsgrad ``vmax = max(vmax, v)``
    is used in place of ``v`` below; ``p - lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) +
    epsilon)`` (the bias-corrected form of the paper; Paddle's kernel computes the same
    value as ``lr sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + epsilon sqrt(1-b2^t))``).
``adamw(...)`` -- adam's inputs and outputs; ``beta1, beta2, epsilon, lr_ratio=1.0,
    coeff=0.01, with_decay=True, amsgrad=False``: decoupled weight decay. With
    ``lr' = lr * lr_ratio``: ``p = p * (1 - lr' * coeff)`` (when ``with_decay``), then the
    adam update with ``lr'``.
``adamax(param, grad, learning_rate, moment, inf_norm, beta1_pow) -> (param_out,
    moment_out, inf_norm_out, beta1_pow_out)`` -- ``beta1=0.9, beta2=0.999,
    epsilon=1e-8``: ``m = b1 m + (1-b1) g``, ``u = max(b2 u + epsilon, |g|)``,
    ``p - lr / (1-b1^t) * m / u``.
``adagrad(param, grad, learning_rate, moment) -> (param_out, moment_out)`` --
    ``epsilon=1e-6``: ``G = G + g^2``, ``p - lr * g / (sqrt(G) + epsilon)``.
``adadelta(param, grad, learning_rate, avg_squared_grad, avg_squared_update) ->
    (param_out, avg_squared_grad_out, avg_squared_update_out)`` -- ``rho=0.95,
    epsilon=1e-6``: ``Eg = rho Eg + (1-rho) g^2``, ``d = -sqrt((Ed + eps) / (Eg + eps)) g``,
    ``Ed = rho Ed + (1-rho) d^2``, ``p + lr * d``.
``rmsprop(param, grad, learning_rate, mean_square, moment, mean_grad?) -> (param_out,
    mean_square_out, moment_out, mean_grad_out)`` -- ``rho=0.95, epsilon=1e-6,
    momentum=0.0, centered=False``: ``ms = rho ms + (1-rho) g^2``; centered: ``mg = rho mg
    + (1-rho) g`` and ``den = sqrt(ms - mg^2 + eps)``, else ``den = sqrt(ms + eps)``;
    ``mom = momentum * mom + lr * g / den``; ``p - mom``.
``lamb(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow) ->
    (param_out, moment1_out, moment2_out, beta1_pow_out, beta2_pow_out)`` --
    ``beta1=0.9, beta2=0.999, epsilon=1e-6, weight_decay=0.01, always_adapt=False``:
    adam's moments, ``r = (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) + weight_decay * p``,
    trust ratio ``||p|| / ||r||`` (1 when either norm is 0, or when ``weight_decay`` is 0
    and not ``always_adapt``), ``p - lr * trust * r``. The norms are over the whole param.
``asgd(param, grad, learning_rate, d, y, n) -> (param_out, d_out, y_out)``
    Paddle's ASGD (stochastic average gradient): ``d = d - y + g``, ``y = g``,
    ``p - lr / n * d`` where ``y`` is the gradient this slot saw last time round and ``n``
    (one element) is ``min(step, batch_num)``.

``nadam(param, grad, learning_rate, momentum_decay_pow, beta2_pow, mu_product, moment1,
    moment2) -> (param_out, momentum_decay_pow_out, beta2_pow_out, mu_product_out,
    moment1_out, moment2_out)`` -- ``beta1=0.9, beta2=0.999, epsilon=1e-8,
    momentum_decay=0.004`` (Paddle's NAdam; its three scalar accumulators start at 1):
    ``d = momentum_decay_pow * 0.96^momentum_decay`` (``0.96^(t psi)``),
    ``mu_t = b1 (1 - d/2)``, ``mu_{t+1} = b1 (1 - d 0.96^psi / 2)``,
    ``mu_product *= mu_t``, ``beta2_pow *= b2``, adam's moments, ``denom =
    sqrt(v / (1 - b2^t)) + eps``; ``p - lr (1-mu_t)/(1-mu_product) g/denom - lr mu_{t+1}/
    (1 - mu_product mu_{t+1}) m/denom``.
``radam(param, grad, learning_rate, beta1_pow, beta2_pow, rho, moment1, moment2) ->
    (param_out, beta1_pow_out, beta2_pow_out, rho_out, moment1_out, moment2_out)`` --
    ``beta1=0.9, beta2=0.999, epsilon=1e-8`` (Paddle's RAdam; the scalar accumulators
    start at 1): the pows advance by one step, ``rho = t b2^t / (1 - b2^t)`` (advanced
    without counting t), ``rho_t = rho_inf - 2 rho`` with ``rho_inf = 2/(1-b2) - 1``;
    adam's moments, ``m_hat = m / (1 - b1^t)``; if ``rho_t > 5``: ``r = sqrt((rho_t-4)
    (rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t))`` and ``p - lr m_hat r sqrt(1-b2^t)
    / (sqrt(v) + eps)``, else ``p - lr m_hat``.
``rprop(param, grad, learning_rate, prev, learning_rates) -> (param_out, prev_out,
    learning_rates_out)`` -- ``lr_min=1e-5, lr_max=50, eta_negative=0.5,
    eta_positive=1.2``: per element, ``s = g prev``; ``s > 0``: ``rate = min(rate
    eta_positive, lr_max)``; ``s < 0``: ``rate = max(rate eta_negative, lr_min)`` and ``g
    = 0``; ``p - sign(g) rate``, ``prev = g``. ``learning_rate`` is not used (Paddle's
    kernel neither: the per-element rates are the state).

Fast kernels (``kernels["cpu"]``, replaced by native ones through
``register_kernel(name, "cpu")``) have the reference's signature plus two keywords the
eager optimizers use and the executor never passes:

- ``out=None``: a tuple with one entry per output, each an array to write that output
  into or None (allocate). An entry may be the very array passed as the matching input
  (``out=(param, moment1, moment2, None, None, None)``): the update is then in place,
  which is how fw-nn updates a flat buffer of many parameters with one call. The
  kernel returns the outputs (the ``out`` arrays where given).
- ``segments=None`` (lamb only): the start offsets (1-D int array, first 0) of the
  parameters packed one after another in 1-D buffers; the trust ratio is computed per
  segment instead of over the whole buffer.

A native kernel gets C-contiguous arrays (1-D when called by the optimizers; any
shape through the executor), scalars as Python floats/bools/ints, and must treat an
``out`` entry that aliases its input as in-place (every update is elementwise, so one
pass that reads then writes each element is correct).
"""

from __future__ import annotations

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import shp
from fw.core.ops._optimizer_np import (
    _adadelta_cpu,
    _adadelta_ref,
    _adagrad_cpu,
    _adagrad_ref,
    _adam_cpu,
    _adam_ref,
    _adamax_cpu,
    _adamax_ref,
    _adamw_cpu,
    _adamw_ref,
    _asgd_cpu,
    _asgd_ref,
    _lamb_cpu,
    _lamb_ref,
    _mom_cpu,
    _mom_ref,
    _nadam_cpu,
    _nadam_ref,
    _radam_cpu,
    _radam_ref,
    _rms_cpu,
    _rms_ref,
    _rprop_cpu,
    _rprop_ref,
    _sgd_cpu,
    _sgd_ref,
)
from fw.core.ops._registry import defop

__all__ = ["UPDATE_OPS"]


# name -> (state input names, outputs) of every update op, for fw-nn
UPDATE_OPS: dict = {}


# ---------------------------------------------------------------- infer helpers
def _real_float(t, arg):
    if t.dtype.kind != _dt._FLOAT:
        raise InvalidTypeError(f"'{arg}' must be a real floating tensor, got {t.dtype.name}"
                               f"{shp(t.shape)}")


def _same_shape(t, param, arg):
    if len(t.shape) != len(param.shape) or any(
            a != b and a != DYN and b != DYN for a, b in zip(t.shape, param.shape)):
        raise InvalidArgumentError(f"'{arg}' has shape {shp(t.shape)} but 'param' has shape "
                                   f"{shp(param.shape)}; they must be equal")


def _one_element(t, arg):
    n = 1
    for d in t.shape:
        if d == DYN:
            return
        n *= d
    if n != 1 or len(t.shape) > 1:
        raise InvalidArgumentError(f"'{arg}' must hold one value (shape [] or [1]), got shape "
                                   f"{shp(t.shape)}")


def _check_common(param, grad, learning_rate, states, scalars=()):
    """Types of the shared inputs; `states` maps names to types of param-shaped
    state, `scalars` to one-element inputs."""
    _real_float(param, "param")
    _real_float(grad, "grad")
    if grad.dtype is not param.dtype:
        raise InvalidTypeError(f"'grad' has dtype {grad.dtype.name} but 'param' has dtype "
                               f"{param.dtype.name}; they must be equal")
    _same_shape(grad, param, "grad")
    _real_float(learning_rate, "learning_rate")
    _one_element(learning_rate, "learning_rate")
    for name, t in states.items():
        if t is None:
            continue
        _real_float(t, name)
        _same_shape(t, param, name)
    for name, t in scalars:
        _real_float(t, name)
        _one_element(t, name)


def _state_type(t, param):
    return TensorType(param.shape, t.dtype)


# ---------------------------------------------------------------- the UPDATE_OPS table
def _register(name, states, outputs):
    UPDATE_OPS[name] = (tuple(states), tuple(outputs))


# ================================================================ sgd
def _sgd_infer(param, grad, learning_rate):
    _check_common(param, grad, learning_rate, {})
    return TensorType(param.shape, param.dtype)


defop("sgd", ("param", "grad", "learning_rate"), {}, ("param_out",),
      infer=_sgd_infer, reference=_sgd_ref, kernels={"cpu": _sgd_cpu}, promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="Plain SGD: param - learning_rate * grad.")
_register("sgd", (), ("param_out",))


# ================================================================ momentum
_MOM_ATTRS = {"mu": 0.9, "use_nesterov": False, "regularization_method": "",
              "regularization_coeff": 0.0, "rescale_grad": 1.0}


def _mom_canon(attrs):
    a = dict(attrs)
    m = a["regularization_method"]
    if m is None:
        m = ""
    if m not in ("", "l2_decay"):
        raise InvalidArgumentError(f"'regularization_method' must be '' or 'l2_decay', got "
                                   f"{m!r}")
    a["regularization_method"] = m
    for k in ("mu", "regularization_coeff", "rescale_grad"):
        a[k] = float(a[k])
    a["use_nesterov"] = bool(a["use_nesterov"])
    return a


def _mom_infer(param, grad, learning_rate, velocity, mu=0.9, use_nesterov=False,
               regularization_method="", regularization_coeff=0.0, rescale_grad=1.0):
    _check_common(param, grad, learning_rate, {"velocity": velocity})
    return TensorType(param.shape, param.dtype), _state_type(velocity, param)


defop("momentum", ("param", "grad", "learning_rate", "velocity"), dict(_MOM_ATTRS),
      ("param_out", "velocity_out"), infer=_mom_infer, reference=_mom_ref,
      kernels={"cpu": _mom_cpu}, canon=_mom_canon, promote=None, differentiable=False,
      family="optimizer", api=False, method=False,
      doc="Momentum SGD (optionally Nesterov) with an optional fused L2 decay.")
_register("momentum", ("velocity",), ("param_out", "velocity_out"))


# ================================================================ adam / adamw
_ADAM_IN = ("param", "grad", "learning_rate", "moment1", "moment2", "beta1_pow", "beta2_pow",
            "moment2_max?")
_ADAM_OUT = ("param_out", "moment1_out", "moment2_out", "beta1_pow_out", "beta2_pow_out",
             "moment2_max_out")


def _adam_canon_floats(keys):
    def canon(attrs):
        a = dict(attrs)
        for k in keys:
            a[k] = float(a[k])
        for k in ("amsgrad", "with_decay", "always_adapt"):
            if k in a:
                a[k] = bool(a[k])
        for k in ("beta1", "beta2"):
            if k in a and not 0.0 <= a[k] < 1.0:
                raise InvalidArgumentError(f"'{k}' must be in [0, 1), got {a[k]}")
        return a

    return canon


def _adam_infer_common(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                       moment2_max, amsgrad):
    _check_common(param, grad, learning_rate,
                  {"moment1": moment1, "moment2": moment2, "moment2_max": moment2_max},
                  (("beta1_pow", beta1_pow), ("beta2_pow", beta2_pow)))
    if amsgrad and moment2_max is None:
        raise InvalidArgumentError("amsgrad=True needs the 'moment2_max' state input")
    vmax = TensorType((0,), moment2.dtype) if moment2_max is None else \
        _state_type(moment2_max, param)
    return (TensorType(param.shape, param.dtype), _state_type(moment1, param),
            _state_type(moment2, param), TensorType(beta1_pow.shape, beta1_pow.dtype),
            TensorType(beta2_pow.shape, beta2_pow.dtype), vmax)


def _adam_infer(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, amsgrad=False):
    return _adam_infer_common(param, grad, learning_rate, moment1, moment2, beta1_pow,
                              beta2_pow, moment2_max, amsgrad)


def _adamw_infer(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                 moment2_max=None, beta1=0.9, beta2=0.999, epsilon=1e-8, lr_ratio=1.0,
                 coeff=0.01, with_decay=True, amsgrad=False):
    return _adam_infer_common(param, grad, learning_rate, moment1, moment2, beta1_pow,
                              beta2_pow, moment2_max, amsgrad)


defop("adam", _ADAM_IN, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "amsgrad": False},
      _ADAM_OUT, infer=_adam_infer, reference=_adam_ref, kernels={"cpu": _adam_cpu},
      canon=_adam_canon_floats(("beta1", "beta2", "epsilon")), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="Adam (optionally AMSGrad) with Paddle's beta-power state.")
_register("adam", ("moment1", "moment2", "beta1_pow", "beta2_pow", "moment2_max"), _ADAM_OUT)

defop("adamw", _ADAM_IN, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "lr_ratio": 1.0,
                          "coeff": 0.01, "with_decay": True, "amsgrad": False},
      _ADAM_OUT, infer=_adamw_infer, reference=_adamw_ref, kernels={"cpu": _adamw_cpu},
      canon=_adam_canon_floats(("beta1", "beta2", "epsilon", "lr_ratio", "coeff")),
      promote=None, differentiable=False, family="optimizer", api=False, method=False,
      doc="AdamW: Adam with decoupled weight decay p *= 1 - lr * lr_ratio * coeff.")
_register("adamw", ("moment1", "moment2", "beta1_pow", "beta2_pow", "moment2_max"), _ADAM_OUT)


# ================================================================ adamax
def _adamax_infer(param, grad, learning_rate, moment, inf_norm, beta1_pow, beta1=0.9,
                  beta2=0.999, epsilon=1e-8):
    _check_common(param, grad, learning_rate, {"moment": moment, "inf_norm": inf_norm},
                  (("beta1_pow", beta1_pow),))
    return (TensorType(param.shape, param.dtype), _state_type(moment, param),
            _state_type(inf_norm, param), TensorType(beta1_pow.shape, beta1_pow.dtype))


defop("adamax", ("param", "grad", "learning_rate", "moment", "inf_norm", "beta1_pow"),
      {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
      ("param_out", "moment_out", "inf_norm_out", "beta1_pow_out"),
      infer=_adamax_infer, reference=_adamax_ref, kernels={"cpu": _adamax_cpu},
      canon=_adam_canon_floats(("beta1", "beta2", "epsilon")), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="Adamax: Adam with the infinity norm.")
_register("adamax", ("moment", "inf_norm", "beta1_pow"),
          ("param_out", "moment_out", "inf_norm_out", "beta1_pow_out"))


# ================================================================ adagrad
def _floats_canon(*keys):
    def canon(attrs):
        a = dict(attrs)
        for k in keys:
            a[k] = float(a[k])
        for k in ("centered",):
            if k in a:
                a[k] = bool(a[k])
        return a

    return canon


def _adagrad_infer(param, grad, learning_rate, moment, epsilon=1e-6):
    _check_common(param, grad, learning_rate, {"moment": moment})
    return TensorType(param.shape, param.dtype), _state_type(moment, param)


defop("adagrad", ("param", "grad", "learning_rate", "moment"), {"epsilon": 1e-6},
      ("param_out", "moment_out"), infer=_adagrad_infer, reference=_adagrad_ref,
      kernels={"cpu": _adagrad_cpu}, canon=_floats_canon("epsilon"), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="Adagrad: accumulated squared gradients scale the step.")
_register("adagrad", ("moment",), ("param_out", "moment_out"))


# ================================================================ adadelta
def _adadelta_infer(param, grad, learning_rate, avg_squared_grad, avg_squared_update, rho=0.95,
                    epsilon=1e-6):
    _check_common(param, grad, learning_rate, {"avg_squared_grad": avg_squared_grad,
                                               "avg_squared_update": avg_squared_update})
    return (TensorType(param.shape, param.dtype), _state_type(avg_squared_grad, param),
            _state_type(avg_squared_update, param))


defop("adadelta", ("param", "grad", "learning_rate", "avg_squared_grad", "avg_squared_update"),
      {"rho": 0.95, "epsilon": 1e-6},
      ("param_out", "avg_squared_grad_out", "avg_squared_update_out"),
      infer=_adadelta_infer, reference=_adadelta_ref, kernels={"cpu": _adadelta_cpu},
      canon=_floats_canon("rho", "epsilon"), promote=None, differentiable=False,
      family="optimizer", api=False, method=False,
      doc="Adadelta with Paddle's learning-rate factor.")
_register("adadelta", ("avg_squared_grad", "avg_squared_update"),
          ("param_out", "avg_squared_grad_out", "avg_squared_update_out"))


# ================================================================ rmsprop
def _rms_infer(param, grad, learning_rate, mean_square, moment, mean_grad=None, rho=0.95,
               epsilon=1e-6, momentum=0.0, centered=False):
    _check_common(param, grad, learning_rate, {"mean_square": mean_square, "moment": moment,
                                               "mean_grad": mean_grad})
    if centered and mean_grad is None:
        raise InvalidArgumentError("centered=True needs the 'mean_grad' state input")
    mg = TensorType((0,), mean_square.dtype) if mean_grad is None else \
        _state_type(mean_grad, param)
    return (TensorType(param.shape, param.dtype), _state_type(mean_square, param),
            _state_type(moment, param), mg)


defop("rmsprop", ("param", "grad", "learning_rate", "mean_square", "moment", "mean_grad?"),
      {"rho": 0.95, "epsilon": 1e-6, "momentum": 0.0, "centered": False},
      ("param_out", "mean_square_out", "moment_out", "mean_grad_out"),
      infer=_rms_infer, reference=_rms_ref, kernels={"cpu": _rms_cpu},
      canon=_floats_canon("rho", "epsilon", "momentum"), promote=None, differentiable=False,
      family="optimizer", api=False, method=False,
      doc="RMSProp (optionally centered) with momentum.")
_register("rmsprop", ("mean_square", "moment", "mean_grad"),
          ("param_out", "mean_square_out", "moment_out", "mean_grad_out"))


# ================================================================ lamb
_LAMB_ATTRS = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "weight_decay": 0.01,
               "always_adapt": False}


def _lamb_infer(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, beta1=0.9,
                beta2=0.999, epsilon=1e-6, weight_decay=0.01, always_adapt=False):
    _check_common(param, grad, learning_rate, {"moment1": moment1, "moment2": moment2},
                  (("beta1_pow", beta1_pow), ("beta2_pow", beta2_pow)))
    return (TensorType(param.shape, param.dtype), _state_type(moment1, param),
            _state_type(moment2, param), TensorType(beta1_pow.shape, beta1_pow.dtype),
            TensorType(beta2_pow.shape, beta2_pow.dtype))


defop("lamb", ("param", "grad", "learning_rate", "moment1", "moment2", "beta1_pow", "beta2_pow"),
      dict(_LAMB_ATTRS),
      ("param_out", "moment1_out", "moment2_out", "beta1_pow_out", "beta2_pow_out"),
      infer=_lamb_infer, reference=_lamb_ref, kernels={"cpu": _lamb_cpu},
      canon=_adam_canon_floats(("beta1", "beta2", "epsilon", "weight_decay")), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="LAMB: Adam direction plus weight decay, scaled by the layer-wise trust ratio.")
_register("lamb", ("moment1", "moment2", "beta1_pow", "beta2_pow"),
          ("param_out", "moment1_out", "moment2_out", "beta1_pow_out", "beta2_pow_out"))


# ================================================================ asgd
def _asgd_infer(param, grad, learning_rate, d, y, n):
    _check_common(param, grad, learning_rate, {"d": d, "y": y})
    if n.dtype.kind not in (_dt._FLOAT, _dt._INT):
        raise InvalidTypeError(f"'n' must be a real number tensor, got {n.dtype.name}")
    _one_element(n, "n")
    return (TensorType(param.shape, param.dtype), _state_type(d, param), _state_type(y, param))


defop("asgd", ("param", "grad", "learning_rate", "d", "y", "n"), {},
      ("param_out", "d_out", "y_out"), infer=_asgd_infer, reference=_asgd_ref,
      kernels={"cpu": _asgd_cpu}, promote=None, differentiable=False, family="optimizer",
      api=False, method=False,
      doc="Paddle's ASGD (stochastic average gradient) update.")
_register("asgd", ("d", "y", "n"), ("param_out", "d_out", "y_out"))


# ================================================================ nadam / radam / rprop
_NADAM_IN = ("param", "grad", "learning_rate", "momentum_decay_pow", "beta2_pow", "mu_product",
             "moment1", "moment2")
_NADAM_OUT = ("param_out", "momentum_decay_pow_out", "beta2_pow_out", "mu_product_out",
              "moment1_out", "moment2_out")


def _nadam_infer(param, grad, learning_rate, momentum_decay_pow, beta2_pow, mu_product, moment1,
                 moment2, beta1=0.9, beta2=0.999, epsilon=1e-8, momentum_decay=0.004):
    _check_common(param, grad, learning_rate, {"moment1": moment1, "moment2": moment2},
                  (("momentum_decay_pow", momentum_decay_pow), ("beta2_pow", beta2_pow),
                   ("mu_product", mu_product)))
    return (TensorType(param.shape, param.dtype),
            TensorType(momentum_decay_pow.shape, momentum_decay_pow.dtype),
            TensorType(beta2_pow.shape, beta2_pow.dtype),
            TensorType(mu_product.shape, mu_product.dtype),
            _state_type(moment1, param), _state_type(moment2, param))


def _nonneg_canon(keys, betas=("beta1", "beta2")):
    base = _adam_canon_floats(keys)

    def canon(attrs):
        a = base(attrs)
        for k in keys:
            if k not in betas and a[k] < 0:
                raise InvalidArgumentError(f"'{k}' must be >= 0, got {a[k]}")
        return a

    return canon


defop("nadam", _NADAM_IN, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8,
                           "momentum_decay": 0.004},
      _NADAM_OUT, infer=_nadam_infer, reference=_nadam_ref, kernels={"cpu": _nadam_cpu},
      canon=_nonneg_canon(("beta1", "beta2", "epsilon", "momentum_decay")), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="NAdam: Adam with Nesterov momentum and Paddle's momentum-decay schedule.")
_register("nadam", _NADAM_IN[3:], _NADAM_OUT)

_RADAM_IN = ("param", "grad", "learning_rate", "beta1_pow", "beta2_pow", "rho", "moment1",
             "moment2")
_RADAM_OUT = ("param_out", "beta1_pow_out", "beta2_pow_out", "rho_out", "moment1_out",
              "moment2_out")


def _radam_infer(param, grad, learning_rate, beta1_pow, beta2_pow, rho, moment1, moment2,
                 beta1=0.9, beta2=0.999, epsilon=1e-8):
    _check_common(param, grad, learning_rate, {"moment1": moment1, "moment2": moment2},
                  (("beta1_pow", beta1_pow), ("beta2_pow", beta2_pow), ("rho", rho)))
    return (TensorType(param.shape, param.dtype),
            TensorType(beta1_pow.shape, beta1_pow.dtype),
            TensorType(beta2_pow.shape, beta2_pow.dtype), TensorType(rho.shape, rho.dtype),
            _state_type(moment1, param), _state_type(moment2, param))


defop("radam", _RADAM_IN, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
      _RADAM_OUT, infer=_radam_infer, reference=_radam_ref, kernels={"cpu": _radam_cpu},
      canon=_nonneg_canon(("beta1", "beta2", "epsilon")), promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="RAdam: Adam with the variance rectification of Liu et al. (2019).")
_register("radam", _RADAM_IN[3:], _RADAM_OUT)


def _rprop_canon(attrs):
    a = {k: float(v) for k, v in attrs.items()}
    if not 0.0 < a["lr_min"] <= a["lr_max"]:
        raise InvalidArgumentError(f"'lr_min' and 'lr_max' must satisfy 0 < lr_min <= lr_max, "
                                   f"got {a['lr_min']} and {a['lr_max']}")
    if not 0.0 < a["eta_negative"] < 1.0 < a["eta_positive"]:
        raise InvalidArgumentError(f"'eta_negative' and 'eta_positive' must satisfy 0 < "
                                   f"eta_negative < 1 < eta_positive, got {a['eta_negative']} "
                                   f"and {a['eta_positive']}")
    return a


def _rprop_infer(param, grad, learning_rate, prev, learning_rates, lr_min=1e-5, lr_max=50.0,
                 eta_negative=0.5, eta_positive=1.2):
    _check_common(param, grad, learning_rate, {"prev": prev, "learning_rates": learning_rates})
    return (TensorType(param.shape, param.dtype), _state_type(prev, param),
            _state_type(learning_rates, param))


defop("rprop", ("param", "grad", "learning_rate", "prev", "learning_rates"),
      {"lr_min": 1e-5, "lr_max": 50.0, "eta_negative": 0.5, "eta_positive": 1.2},
      ("param_out", "prev_out", "learning_rates_out"), infer=_rprop_infer,
      reference=_rprop_ref, kernels={"cpu": _rprop_cpu}, canon=_rprop_canon, promote=None,
      differentiable=False, family="optimizer", api=False, method=False,
      doc="Rprop: per-element step sizes grown or shrunk by the sign agreement of "
          "successive gradients (learning_rate is unused: the step sizes are state).")
_register("rprop", ("prev", "learning_rates"), ("param_out", "prev_out", "learning_rates_out"))
