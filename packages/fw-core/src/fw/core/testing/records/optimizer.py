"""Records for the optimizer update ops (fw.core.ops.optimizer).

Each record's ``oracle`` is the textbook form of the update written independently of
the reference kernel (float64, bias corrections applied to the moments as in the
papers); fw-nn's tests check the reference against it over several steps."""

import numpy as np
from hypothesis import strategies as st

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.testing import FLOATS, FLOATS_LOW, Sample, arrays, record, shapes

F32 = np.float32
ALL_F = FLOATS + FLOATS_LOW
LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _one(draw, dtype, lo, hi):
    """A one-element tensor of shape [] or [1]."""
    v = draw(st.floats(lo, hi))
    shape = () if draw(st.booleans()) else (1,)
    return np.full(shape, v, dtype=dtype.np)


def _state_dtype(draw, dtype):
    if dtype in FLOATS_LOW:
        return draw(st.sampled_from([dtype, _dt.float32]))
    return dtype


def _base(draw, dtype):
    shape = shapes(draw, max_dims=3)
    sd = _state_dtype(draw, dtype)
    return (shape, sd, arrays(draw, dtype, shape), arrays(draw, dtype, shape),
            _one(draw, _dt.float32 if dtype in FLOATS_LOW else dtype, 1e-3, 0.5))


def _pos(draw, sd, shape, lo=0.0, hi=2.0):
    return arrays(draw, sd, shape, lo, hi)


P3 = np.zeros(3, F32)
LR = np.array(0.1, F32)


# ---------------------------------------------------------------- sgd
def _sgd(draw, dtype):
    _, _, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr], {})


def _sgd_oracle(p, g, lr):
    return (_f(p) - _f(lr).item() * _f(g),)


record("sgd", _sgd, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_sgd_oracle,
       errors=[([P3, np.zeros(4, F32), LR], {}, InvalidArgumentError, "'grad' has shape \\[4\\]"),
               ([P3, np.zeros(3, np.float64), LR], {}, InvalidTypeError, "'grad' has dtype"),
               ([np.zeros(3, np.int64), np.zeros(3, np.int64), LR], {}, InvalidTypeError,
                "real floating"),
               ([P3, P3, np.zeros(2, F32)], {}, InvalidArgumentError, "one value")])


# ---------------------------------------------------------------- momentum
def _momentum(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    reg = draw(st.sampled_from(["", "l2_decay"]))
    return Sample([p, g, lr, arrays(draw, sd, shape)],
                  {"mu": draw(st.sampled_from([0.0, 0.5, 0.9])),
                   "use_nesterov": draw(st.booleans()), "regularization_method": reg,
                   "regularization_coeff": draw(st.sampled_from([0.0, 0.01])),
                   "rescale_grad": draw(st.sampled_from([1.0, 0.5]))})


def _momentum_oracle(p, g, lr, v, mu=0.9, use_nesterov=False, regularization_method="",
                     regularization_coeff=0.0, rescale_grad=1.0):
    p, g, v, lr = _f(p), _f(g), _f(v), _f(lr).item()
    g = g * rescale_grad + (regularization_coeff * p if regularization_method else 0.0)
    v = mu * v + g
    step = g + mu * v if use_nesterov else v
    return p - lr * step, v


record("momentum", _momentum, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_momentum_oracle,
       errors=[([P3, P3, LR, np.zeros(2, F32)], {}, InvalidArgumentError,
                "'velocity' has shape \\[2\\]"),
               ([P3, P3, LR, P3], {"regularization_method": "l1"}, InvalidArgumentError,
                "regularization_method")])


# ---------------------------------------------------------------- adam / adamw
def _adam_state(draw, sd, shape, amsgrad):
    m = arrays(draw, sd, shape, -1, 1)
    v = _pos(draw, sd, shape, 0, 1)
    vmax = None
    if amsgrad or draw(st.booleans()):
        vmax = _pos(draw, sd, shape, 0, 1)
    return m, v, vmax


def _pows(draw, dtype, n):
    pd = _dt.float32 if dtype in FLOATS_LOW else dtype
    return [_one(draw, pd, 0.05, 0.95) for _ in range(n)]


def _adam(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    amsgrad = draw(st.booleans())
    m, v, vmax = _adam_state(draw, sd, shape, amsgrad)
    b1p, b2p = _pows(draw, dtype, 2)
    return Sample([p, g, lr, m, v, b1p, b2p, vmax],
                  {"beta1": draw(st.sampled_from([0.9, 0.5])),
                   "beta2": draw(st.sampled_from([0.999, 0.9])),
                   "epsilon": draw(st.sampled_from([1e-8, 1e-3])), "amsgrad": amsgrad})


def _adam_oracle(p, g, lr, m, v, b1p, b2p, vmax=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 amsgrad=False, lr_ratio=1.0, coeff=0.0, with_decay=False):
    p, g, m, v, lr = _f(p), _f(g), _f(m), _f(v), _f(lr).item() * lr_ratio
    b1t, b2t = _f(b1p).item(), _f(b2p).item()
    if with_decay:
        p = p - lr * coeff * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    if amsgrad:
        vmax = np.maximum(_f(vmax), v)
    m_hat = m / (1 - b1t)
    v_hat = (vmax if amsgrad else v) / (1 - b2t)
    p = p - lr * m_hat / (np.sqrt(v_hat) + epsilon)
    out_vmax = np.zeros(0) if vmax is None else _f(vmax)
    return p, m, v, b1t * beta1, b2t * beta2, out_vmax


A3 = [P3, P3, LR, P3, P3, np.array([0.9], F32), np.array([0.99], F32), None]
record("adam", _adam, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_adam_oracle,
       errors=[(A3, {"amsgrad": True}, InvalidArgumentError, "moment2_max"),
               (A3[:3] + [np.zeros((3, 1), F32)] + A3[4:], {}, InvalidArgumentError,
                "'moment1' has shape \\[3, 1\\]"),
               (A3[:5] + [np.zeros(2, F32)] + A3[6:], {}, InvalidArgumentError,
                "'beta1_pow' must hold one value"),
               (A3, {"beta1": 1.5}, InvalidArgumentError, "'beta1' must be in")])


def _adamw(draw, dtype):
    s = _adam(draw, dtype)
    s.attrs.update({"lr_ratio": draw(st.sampled_from([1.0, 0.5])),
                    "coeff": draw(st.sampled_from([0.01, 0.1])),
                    "with_decay": draw(st.booleans())})
    return s


record("adamw", _adamw, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_adam_oracle,
       errors=[(A3, {"amsgrad": True}, InvalidArgumentError, "moment2_max"),
               (A3[:2] + [np.zeros((2, 2), F32)] + A3[3:], {}, InvalidArgumentError,
                "'learning_rate' must hold one value")])


# ---------------------------------------------------------------- adamax
def _adamax(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr, arrays(draw, sd, shape, -1, 1), _pos(draw, sd, shape, 0, 1)]
                  + _pows(draw, dtype, 1),
                  {"beta1": draw(st.sampled_from([0.9, 0.5])),
                   "beta2": draw(st.sampled_from([0.999, 0.9])),
                   "epsilon": draw(st.sampled_from([1e-8, 1e-3]))})


def _adamax_oracle(p, g, lr, m, u, b1p, beta1=0.9, beta2=0.999, epsilon=1e-8):
    p, g, m, u, lr, b1t = _f(p), _f(g), _f(m), _f(u), _f(lr).item(), _f(b1p).item()
    m = beta1 * m + (1 - beta1) * g
    u = np.maximum(beta2 * u + epsilon, np.abs(g))
    return p - (lr / (1 - b1t)) * m / u, m, u, b1t * beta1


record("adamax", _adamax, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_adamax_oracle,
       errors=[([P3, P3, LR, P3, np.zeros(4, F32), np.array([0.9], F32)], {},
                InvalidArgumentError, "'inf_norm' has shape \\[4\\]")])


# ---------------------------------------------------------------- adagrad
def _adagrad(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr, _pos(draw, sd, shape)],
                  {"epsilon": draw(st.sampled_from([1e-6, 1e-2]))})


def _adagrad_oracle(p, g, lr, G, epsilon=1e-6):
    p, g, G, lr = _f(p), _f(g), _f(G), _f(lr).item()
    G = G + g ** 2
    return p - lr * g / (np.sqrt(G) + epsilon), G


record("adagrad", _adagrad, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_adagrad_oracle,
       errors=[([P3, P3, LR, np.zeros(3, np.int32)], {}, InvalidTypeError,
                "'moment' must be a real floating")])


# ---------------------------------------------------------------- adadelta
def _adadelta(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr, _pos(draw, sd, shape), _pos(draw, sd, shape)],
                  {"rho": draw(st.sampled_from([0.95, 0.5])),
                   "epsilon": draw(st.sampled_from([1e-6, 1e-2]))})


def _adadelta_oracle(p, g, lr, eg, ed, rho=0.95, epsilon=1e-6):
    p, g, eg, ed, lr = _f(p), _f(g), _f(eg), _f(ed), _f(lr).item()
    eg = rho * eg + (1 - rho) * g ** 2
    rms_dx = np.sqrt(ed + epsilon)
    rms_g = np.sqrt(eg + epsilon)
    delta = -(rms_dx / rms_g) * g
    ed = rho * ed + (1 - rho) * delta ** 2
    return p + lr * delta, eg, ed


record("adadelta", _adadelta, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_adadelta_oracle,
       errors=[([P3, P3, LR, P3, np.zeros((1, 3), F32)], {}, InvalidArgumentError,
                "'avg_squared_update' has shape")])


# ---------------------------------------------------------------- rmsprop
def _rmsprop(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    centered = draw(st.booleans())
    mg = arrays(draw, sd, shape, -0.5, 0.5) if centered or draw(st.booleans()) else None
    return Sample([p, g, lr, _pos(draw, sd, shape, 1.0, 2.0), arrays(draw, sd, shape, -1, 1),
                   mg],
                  {"rho": draw(st.sampled_from([0.95, 0.5])),
                   "epsilon": draw(st.sampled_from([1e-6, 1e-2])),
                   "momentum": draw(st.sampled_from([0.0, 0.9])), "centered": centered})


def _rmsprop_oracle(p, g, lr, ms, mom, mg=None, rho=0.95, epsilon=1e-6, momentum=0.0,
                    centered=False):
    p, g, ms, mom, lr = _f(p), _f(g), _f(ms), _f(mom), _f(lr).item()
    ms = rho * ms + (1 - rho) * g ** 2
    var = ms
    if centered:
        mg = rho * _f(mg) + (1 - rho) * g
        var = ms - mg ** 2
    mom = momentum * mom + lr * g / np.sqrt(var + epsilon)
    return p - mom, ms, mom, np.zeros(0) if mg is None else _f(mg)


record("rmsprop", _rmsprop, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_rmsprop_oracle,
       errors=[([P3, P3, LR, P3, P3, None], {"centered": True}, InvalidArgumentError,
                "mean_grad")])


# ---------------------------------------------------------------- lamb
def _lamb(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    m, v, _ = _adam_state(draw, sd, shape, False)
    return Sample([p, g, lr, m, v] + _pows(draw, dtype, 2),
                  {"beta1": draw(st.sampled_from([0.9, 0.5])),
                   "beta2": draw(st.sampled_from([0.999, 0.9])),
                   "epsilon": draw(st.sampled_from([1e-6, 1e-3])),
                   "weight_decay": draw(st.sampled_from([0.0, 0.01, 0.1])),
                   "always_adapt": draw(st.booleans())})


def _lamb_oracle(p, g, lr, m, v, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 weight_decay=0.01, always_adapt=False):
    p, g, m, v, lr = _f(p), _f(g), _f(m), _f(v), _f(lr).item()
    b1t, b2t = _f(b1p).item(), _f(b2p).item()
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    r = (m / (1 - b1t)) / (np.sqrt(v / (1 - b2t)) + epsilon) + weight_decay * p
    w_norm, r_norm = np.linalg.norm(p), np.linalg.norm(r)
    adapt = weight_decay > 0 or always_adapt
    trust = w_norm / r_norm if adapt and w_norm > 0 and r_norm > 0 else 1.0
    return p - lr * trust * r, m, v, b1t * beta1, b2t * beta2


record("lamb", _lamb, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_lamb_oracle,
       errors=[(A3[:7], {"beta2": -0.1}, InvalidArgumentError, "'beta2' must be in")])


# ---------------------------------------------------------------- asgd
def _asgd(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    n = np.full(() if draw(st.booleans()) else (1,), draw(st.integers(1, 5)),
                dtype=draw(st.sampled_from([np.int64, np.float32])))
    return Sample([p, g, lr, arrays(draw, sd, shape), arrays(draw, sd, shape), n], {})


def _asgd_oracle(p, g, lr, d, y, n):
    p, g, d, y, lr, n = _f(p), _f(g), _f(d), _f(y), _f(lr).item(), _f(n).item()
    d = d - y + g
    return p - lr * d / n, d, g


record("asgd", _asgd, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_asgd_oracle,
       errors=[([P3, P3, LR, P3, P3, np.array([0.0], F32)], {}, InvalidArgumentError,
                "'n' must be positive"),
               ([P3, P3, LR, P3, P3, np.array([1, 2])], {}, InvalidArgumentError,
                "'n' must hold one value")])


# ---------------------------------------------------------------- nadam / radam / rprop
def _pows1(draw, dtype, k):
    """k one-element accumulators in (0, 1] (Paddle's NAdam/RAdam start them at 1)."""
    d = _dt.float32 if dtype in FLOATS_LOW else dtype
    return [_one(draw, d, 0.3, 1.0) for _ in range(k)]


def _nadam(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr] + _pows1(draw, dtype, 3)
                  + [arrays(draw, sd, shape, -1, 1), _pos(draw, sd, shape, 0, 1)],
                  {"beta1": draw(st.sampled_from([0.9, 0.5])),
                   "beta2": draw(st.sampled_from([0.999, 0.9])),
                   "epsilon": draw(st.sampled_from([1e-8, 1e-3])),
                   "momentum_decay": draw(st.sampled_from([0.004, 0.1]))})


def _nadam_oracle(p, g, lr, mdp, b2p, prod, m, v, beta1=0.9, beta2=0.999, epsilon=1e-8,
                  momentum_decay=0.004):
    # Paddle's NAdam with the accumulators written as powers: mdp = 0.96^((t-1) psi),
    # prod = mu_1 ... mu_{t-1}, b2p = beta2^(t-1)
    p, g, m, v, lr = _f(p), _f(g), _f(m), _f(v), _f(lr).item()
    mdp, b2p, prod = _f(mdp).item(), _f(b2p).item(), _f(prod).item()
    decay = 0.96 ** momentum_decay
    mu_t = beta1 * (1 - 0.5 * mdp * decay)
    mu_next = beta1 * (1 - 0.5 * mdp * decay * decay)
    prod_t = prod * mu_t
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    m_hat = mu_next * m / (1 - prod_t * mu_next) + (1 - mu_t) * g / (1 - prod_t)
    v_hat = v / (1 - b2p * beta2)
    return (p - lr * m_hat / (np.sqrt(v_hat) + epsilon), mdp * decay, b2p * beta2, prod_t, m,
            v)


record("nadam", _nadam, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_nadam_oracle,
       errors=[([P3, P3, LR, np.ones(1, F32), np.ones(1, F32), np.ones(1, F32), P3, P3],
                {"momentum_decay": -1.0}, InvalidArgumentError, "'momentum_decay' must be")])


def _radam(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    d = _dt.float32 if dtype in FLOATS_LOW else dtype
    # steps taken so far: both branches of the rectifier, away from rho_t ~ 5 (t = 5 with
    # beta2 = 0.999), where float32 state could round to the other branch
    t = draw(st.sampled_from([0, 1, 2, 3, 8, 10, 12]))
    b1, b2 = draw(st.sampled_from([0.9, 0.5])), draw(st.sampled_from([0.999, 0.9]))
    rho = 1.0 if t == 0 else t * b2 ** t / (1 - b2 ** t)
    one = lambda v: np.full(() if draw(st.booleans()) else (1,), v, dtype=d.np)  # noqa: E731
    return Sample([p, g, lr, one(b1 ** t), one(b2 ** t), one(rho),
                   arrays(draw, sd, shape, -1, 1), _pos(draw, sd, shape, 0, 1)],
                  {"beta1": b1, "beta2": b2, "epsilon": draw(st.sampled_from([1e-8, 1e-3]))})


def _radam_oracle(p, g, lr, b1p, b2p, rho, m, v, beta1=0.9, beta2=0.999, epsilon=1e-8):
    # the paper's RAdam at step t = log(beta2_pow * beta2) / log(beta2)
    p, g, m, v, lr = _f(p), _f(g), _f(m), _f(v), _f(lr).item()
    b1t, b2t = _f(b1p).item() * beta1, _f(b2p).item() * beta2
    t = round(np.log(b2t) / np.log(beta2))
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    m_hat = m / (1 - b1t)
    rinf = 2 / (1 - beta2) - 1
    rho_t = rinf - 2 * t * b2t / (1 - b2t)
    if rho_t > 5:
        r = np.sqrt((rho_t - 4) * (rho_t - 2) * rinf / ((rinf - 4) * (rinf - 2) * rho_t))
        p = p - lr * m_hat * r * np.sqrt(1 - b2t) / (np.sqrt(v) + epsilon)
    else:
        p = p - lr * m_hat
    return p, b1t, b2t, t * b2t / (1 - b2t), m, v


record("radam", _radam, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_radam_oracle,
       errors=[([P3, P3, LR, np.ones(2, F32), np.ones(1, F32), np.ones(1, F32), P3, P3], {},
                InvalidArgumentError, "'beta1_pow' must hold one value")])


def _rprop(draw, dtype):
    shape, sd, p, g, lr = _base(draw, dtype)
    return Sample([p, g, lr, arrays(draw, sd, shape, -1, 1), _pos(draw, sd, shape, 1e-4, 1.0)],
                  {"lr_min": draw(st.sampled_from([1e-5, 0.01])),
                   "lr_max": draw(st.sampled_from([50.0, 0.5])),
                   "eta_negative": draw(st.sampled_from([0.5, 0.3])),
                   "eta_positive": draw(st.sampled_from([1.2, 1.5]))})


def _rprop_oracle(p, g, lr, prev, rates, lr_min=1e-5, lr_max=50.0, eta_negative=0.5,
                  eta_positive=1.2):
    p, g, prev, rates = _f(p), _f(g), _f(prev), _f(rates)
    out_p, out_g, out_r = p.copy(), g.copy(), rates.copy()
    for i in np.ndindex(p.shape):  # element by element, as the paper states it
        s = g[i] * prev[i]
        if s > 0:
            out_r[i] = min(rates[i] * eta_positive, lr_max)
        elif s < 0:
            out_r[i] = max(rates[i] * eta_negative, lr_min)
            out_g[i] = 0.0
        out_p[i] = p[i] - np.sign(out_g[i]) * out_r[i]
    return out_p, out_g, out_r


record("rprop", _rprop, dtypes=ALL_F, grad_order=0, tol=LOW_TOL, oracle=_rprop_oracle,
       errors=[([P3, P3, LR, P3, P3], {"eta_positive": 0.9}, InvalidArgumentError,
                "eta_positive")])
