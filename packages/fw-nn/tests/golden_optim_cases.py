"""The fw side of the golden optimizer and gradient-clipping tests.

Each `OptCase` makes an fw optimizer (and learning-rate scheduler) over
parameters of the given shapes; `run` feeds it a fixed gradient sequence (the
gradient of ``sum(p * g_t)`` is ``g_t``) and returns the parameters after every
step. `fixtures/gen_torch_fixtures.py` computes the same trajectories with
``torch.optim`` (or, where Paddle's rule has no PyTorch twin, a NumPy reference
of Paddle's documented update). Clipping cases run SGD with learning rate 1, so
each step subtracts exactly the clipped gradient.

This module imports no PyTorch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import fw
import fw.nn as nn
from fw import optimizer as opt
from fw.optimizer import lr as sched


@dataclasses.dataclass(frozen=True)
class OptCase:
    name: str
    make: Callable  # params -> (optimizer, scheduler or None)
    shapes: tuple = ((3, 4), (5,))
    steps: int = 4
    grad_scale: float | tuple = 1.0  # one for all parameters, or one each
    tol: float = 1e-5
    clip: object = None  # the clipping strategy a clipping case's SGD uses


def run(case, p0, grads):
    """The fw trajectory: a list (per step) of lists of parameter values."""
    params = [fw.create_parameter(list(p.shape), "float32",
                                  default_initializer=nn.initializer.Assign(p)) for p in p0]
    optimizer, scheduler = case.make(params)
    traj = []
    for gs in grads:
        loss = sum((p * fw.to_tensor(g)).sum() for p, g in zip(params, gs))
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        if scheduler is not None:
            scheduler.step()
        traj.append([p.numpy().copy() for p in params])
    return traj


CASES: list[OptCase] = []


def case(*args, **kw):
    CASES.append(OptCase(*args, **kw))


def _with_sched(make_sched, make_opt):
    def make(params):
        s = make_sched()
        return make_opt(s, params), s
    return make


# ---------------------------------------------------------------- optimizers
case("sgd_l2_stepdecay", _with_sched(
    lambda: sched.StepDecay(0.1, step_size=2, gamma=0.5),
    lambda s, ps: opt.SGD(s, parameters=ps, weight_decay=0.01)), steps=5)
case("momentum_l2", lambda ps: (opt.Momentum(0.05, 0.9, ps, weight_decay=0.02), None))
case("momentum_nesterov", lambda ps: (opt.Momentum(0.05, 0.8, ps, use_nesterov=True), None))
case("adam_l2", lambda ps: (opt.Adam(0.01, 0.8, 0.95, 1e-6, ps, weight_decay=0.05), None),
     steps=5)
case("adam_amsgrad", lambda ps: (opt.Adam(0.01, parameters=ps, amsgrad=True), None),
     steps=5)
case("adamw_expdecay", _with_sched(
    lambda: sched.ExponentialDecay(0.02, gamma=0.7),
    lambda s, ps: opt.AdamW(s, parameters=ps, weight_decay=0.1)), steps=5)
case("adamw_cosine", _with_sched(
    lambda: sched.CosineAnnealingDecay(0.05, T_max=3, eta_min=0.001),
    lambda s, ps: opt.AdamW(s, beta1=0.85, parameters=ps, weight_decay=0.3)), steps=5)
case("adagrad_l2", lambda ps: (opt.Adagrad(0.1, 1e-6, ps, weight_decay=0.01,
                                           initial_accumulator_value=0.1), None))
case("adadelta", lambda ps: (opt.Adadelta(0.5, 1e-6, 0.9, ps), None))
case("sgd_multistep", _with_sched(
    lambda: sched.MultiStepDecay(0.2, milestones=[1, 3], gamma=0.3),
    lambda s, ps: opt.SGD(s, parameters=ps)), steps=5)
# no PyTorch twin (Paddle's epsilon sits elsewhere): NumPy references of Paddle's rules
case("rmsprop_momentum", lambda ps: (opt.RMSProp(0.01, 0.9, 1e-4, 0.5, parameters=ps), None))
case("rmsprop_centered", lambda ps: (opt.RMSProp(0.01, 0.8, 1e-4, 0.0, centered=True,
                                                 parameters=ps), None))
case("adamax", lambda ps: (opt.Adamax(0.02, 0.8, 0.9, 1e-3, ps), None), grad_scale=0.5)
case("lamb", lambda ps: (opt.Lamb(0.02, 0.05, 0.8, 0.95, 1e-6, ps), None))

# ---------------------------------------------------------------- gradient clipping
# SGD(lr=1): every step subtracts the clipped gradient
def clip_case(name, clip, **kw):
    case(name, lambda ps: (opt.SGD(1.0, parameters=ps, grad_clip=clip), None), clip=clip,
         steps=2, **kw)


clip_case("clip_global_norm_above", nn.ClipGradByGlobalNorm(1.0))
# a global norm below clip_norm leaves the gradients as they are (not scaled up)
clip_case("clip_global_norm_below", nn.ClipGradByGlobalNorm(1.0), grad_scale=0.05)
# per-tensor norms: the first tensor is clipped, the second (norm < 0.5) is not
clip_case("clip_norm_mixed", nn.ClipGradByNorm(0.5), shapes=((4, 4), (2,)),
          grad_scale=(0.3, 0.1))
clip_case("clip_value", nn.ClipGradByValue(0.3), grad_scale=0.4)
clip_case("clip_value_asymmetric", nn.ClipGradByValue(0.3, -0.1), grad_scale=0.4)


# ---------------------------------------------------------------- learning-rate schedules
@dataclasses.dataclass(frozen=True)
class LRCase:
    """A scheduler stepped `steps` times (``step(metrics[t])`` for ReduceOnPlateau);
    the fixture holds the rate before the first step and after each."""
    name: str
    make: Callable
    steps: int = 14
    metrics: tuple | None = None


def lr_trajectory(case):
    s = case.make()
    out = [s()]
    for t in range(case.steps):
        if case.metrics is None:
            s.step()
        else:
            s.step(case.metrics[t])
        out.append(s())
    return out


# a metric that improves, stalls (by less than the relative threshold), improves again
_PLATEAU = (5.0, 4.0, 3.9999, 4.2, 4.1, 4.0, 3.0, 3.5, 3.4, 3.3, 3.2, 2.0, 2.1, 2.2)
LR_CASES = [
    LRCase("exponential", lambda: sched.ExponentialDecay(0.5, 0.8)),
    LRCase("step", lambda: sched.StepDecay(0.5, 3, 0.5)),
    LRCase("multistep", lambda: sched.MultiStepDecay(0.5, [2, 5, 6], 0.3)),
    LRCase("lambda", lambda: sched.LambdaDecay(0.5, lambda e: 1.0 / (1 + e))),
    LRCase("multiplicative", lambda: sched.MultiplicativeDecay(0.5, lambda e: 0.9)),
    LRCase("cosine", lambda: sched.CosineAnnealingDecay(0.5, T_max=4, eta_min=0.05)),
    LRCase("cosine_warm_restarts", lambda: sched.CosineAnnealingWarmRestarts(
        0.5, T_0=3, T_mult=2, eta_min=0.01)),
    LRCase("one_cycle_cos", lambda: sched.OneCycleLR(1.0, 14, divide_factor=10.0,
                                                     end_learning_rate=0.001, phase_pct=0.3)),
    LRCase("one_cycle_linear_three_phase", lambda: sched.OneCycleLR(
        1.0, 14, end_learning_rate=0.002, phase_pct=0.25, anneal_strategy="linear",
        three_phase=True)),
    LRCase("cyclic_triangular", lambda: sched.CyclicLR(0.1, 1.0, 3, 2)),
    LRCase("cyclic_triangular2", lambda: sched.CyclicLR(0.1, 1.0, 2, mode="triangular2")),
    LRCase("cyclic_exp_range", lambda: sched.CyclicLR(0.1, 1.0, 2, 3, mode="exp_range",
                                                      exp_gamma=0.9)),
    LRCase("linear_lr", lambda: sched.LinearLR(0.5, 5, start_factor=0.2, end_factor=0.9)),
    LRCase("plateau_min_rel", lambda: sched.ReduceOnPlateau(
        1.0, factor=0.5, patience=1, threshold=0.01), metrics=_PLATEAU),
    # the defaults (patience 10, factor 0.1, relative threshold 1e-4): a drop by less
    # than the threshold is no improvement, so the 12th step reduces
    LRCase("plateau_defaults", lambda: sched.ReduceOnPlateau(1.0),
           metrics=(1.0,) + (1.0 - 5e-5,) * 13),
    LRCase("one_cycle_defaults", lambda: sched.OneCycleLR(1.0, 12), steps=12),
    LRCase("plateau_max_rel", lambda: sched.ReduceOnPlateau(
        1.0, mode="max", factor=0.5, patience=1, threshold=0.02),
           metrics=tuple(-m for m in _PLATEAU)),
    LRCase("plateau_max_abs_cooldown", lambda: sched.ReduceOnPlateau(
        1.0, mode="max", factor=0.3, patience=0, threshold=0.05, threshold_mode="abs",
        cooldown=2, min_lr=0.05), metrics=tuple(-m for m in _PLATEAU)),
]
