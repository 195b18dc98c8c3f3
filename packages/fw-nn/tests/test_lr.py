"""fw.optimizer.lr: every schedule against its documented formula, state dicts,
verbose output and the base-class protocol."""

import math

import pytest

from fw.optimizer import lr


def values(s, n):
    """The rate before the first step and after each of n-1 steps."""
    out = [s()]
    for _ in range(n - 1):
        s.step()
        out.append(s())
    return out


def close(a, b):
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), f"epoch {i}: {x} != {y}"


def test_noam():
    s = lr.NoamDecay(d_model=64, warmup_steps=4, learning_rate=2.0)
    want = [2.0 * 64 ** -0.5 * min(1.0 if e == 0 else e ** -0.5, e * 4 ** -1.5)
            for e in range(10)]
    close(values(s, 10), want)


def test_piecewise():
    s = lr.PiecewiseDecay([2, 5], [1.0, 0.5, 0.1])
    close(values(s, 7), [1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1])


def test_natural_exp_inverse_time_exponential():
    close(values(lr.NaturalExpDecay(0.5, 0.1), 4), [0.5 * math.exp(-0.1 * e) for e in range(4)])
    close(values(lr.InverseTimeDecay(0.5, 0.1), 4), [0.5 / (1 + 0.1 * e) for e in range(4)])
    close(values(lr.ExponentialDecay(0.5, 0.9), 4), [0.5 * 0.9 ** e for e in range(4)])


@pytest.mark.parametrize("cycle", [False, True])
def test_polynomial(cycle):
    s = lr.PolynomialDecay(1.0, decay_steps=3, end_lr=0.1, power=2.0, cycle=cycle)
    want = []
    for e in range(8):
        if cycle:
            T = 3 * max(1, math.ceil(e / 3))
            ee = e
        else:
            T, ee = 3, min(e, 3)
        want.append((1.0 - 0.1) * (1 - ee / T) ** 2 + 0.1)
    close(values(s, 8), want)


def test_linear_warmup_of_float_and_of_a_scheduler():
    s = lr.LinearWarmup(0.5, warmup_steps=4, start_lr=0.0, end_lr=0.5)
    close(values(s, 6), [0.0, 0.125, 0.25, 0.375, 0.5, 0.5])
    inner = lr.ExponentialDecay(0.5, 0.5)
    s = lr.LinearWarmup(inner, warmup_steps=2, start_lr=0.1, end_lr=0.5)
    close(values(s, 6), [0.1, 0.3, 0.5, 0.25, 0.125, 0.0625])
    sd = s.state_dict()
    assert "LinearWarmup_LR" in sd
    s2 = lr.LinearWarmup(lr.ExponentialDecay(0.5, 0.5), warmup_steps=2, start_lr=0.1,
                         end_lr=0.5)
    s2.set_state_dict(sd)
    assert s2.last_epoch == s.last_epoch and s2.learning_rate.last_epoch == 3
    # Paddle requires end_lr > start_lr strictly (a flat warm-up is refused too)
    for start, end in ((0.5, 0.1), (0.3, 0.3)):
        with pytest.raises(ValueError, match="end_lr"):
            lr.LinearWarmup(0.5, 2, start_lr=start, end_lr=end)


def test_multistep_step_lambda_multiplicative():
    close(values(lr.MultiStepDecay(1.0, [2, 4], 0.1), 6), [1, 1, 0.1, 0.1, 0.01, 0.01])
    close(values(lr.StepDecay(1.0, 2, 0.5), 5), [1, 1, 0.5, 0.5, 0.25])
    close(values(lr.LambdaDecay(1.0, lambda e: 0.9 ** e), 4), [0.9 ** e for e in range(4)])
    close(values(lr.MultiplicativeDecay(1.0, lambda e: 0.5), 4), [1, 0.5, 0.25, 0.125])
    with pytest.raises(TypeError, match="step_size"):
        lr.StepDecay(1.0, 2.5)
    with pytest.raises(ValueError, match="gamma"):
        lr.MultiStepDecay(1.0, [1], gamma=2.0)


def test_reduce_on_plateau():
    s = lr.ReduceOnPlateau(1.0, mode="min", factor=0.5, patience=1, cooldown=1)
    seen = []
    for m in [5, 4, 4, 4, 4, 4, 4, 3]:
        s.step(m)
        seen.append(s())
    # improvements at 5 and 4; two bad epochs (> patience) halve the rate, then one
    # epoch of cooldown during which nothing is recorded (not even the 3)
    close(seen, [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25])
    sd = s.state_dict()
    assert set(sd) == {"cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"}
    s2 = lr.ReduceOnPlateau(1.0, factor=0.5, patience=1, cooldown=1)
    s2.set_state_dict(sd)
    assert s2() == s() and s2.best == 4.0 and s2.cooldown_counter == 0
    mx = lr.ReduceOnPlateau(1.0, mode="max", factor=0.1, patience=0, threshold_mode="abs",
                            threshold=0.5)
    mx.step(1.0)
    mx.step(1.2)  # not better by 0.5 in abs mode
    assert math.isclose(mx(), 0.1)


def test_cosine_annealing_recursive_and_closed_form():
    s = lr.CosineAnnealingDecay(1.0, T_max=4, eta_min=0.1)
    want = [0.1 + 0.9 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(9)]
    close(values(s, 9), want)
    s.step(2)
    assert math.isclose(s(), want[2])


def test_cosine_warm_restarts():
    s = lr.CosineAnnealingWarmRestarts(1.0, T_0=2, T_mult=2, eta_min=0.0)
    # periods: 2 then 4 then 8
    tcur = [0, 1, 0, 1, 2, 3, 0]
    ti = [2, 2, 4, 4, 4, 4, 8]
    close(values(s, 7), [(1 + math.cos(math.pi * c / t)) / 2 for c, t in zip(tcur, ti)])
    s.step(5)
    assert math.isclose(s(), (1 + math.cos(math.pi * 3 / 4)) / 2)
    # Paddle: T_0 a positive int, T_mult an int >= 1
    for kw in ({"T_0": 0}, {"T_0": 2.0}, {"T_0": 2, "T_mult": 0}):
        with pytest.raises(ValueError, match="T_"):
            lr.CosineAnnealingWarmRestarts(1.0, **{"T_0": 2, **kw})


@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle(three_phase):
    s = lr.OneCycleLR(1.0, total_steps=10, divide_factor=10.0, end_learning_rate=0.01,
                      phase_pct=0.3, anneal_strategy="linear", three_phase=three_phase)
    got = values(s, 10)
    assert math.isclose(got[0], 0.1)
    assert math.isclose(max(got), 1.0)
    assert math.isclose(got[2], 1.0)  # the peak is at phase_pct * total_steps - 1
    assert math.isclose(got[-1], 0.01)
    if three_phase:
        assert math.isclose(got[4], 0.1)  # back to the initial rate at 2 * (pct * T) - 2
    with pytest.raises(ValueError, match="total_steps"):
        for _ in range(5):
            s.step()


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic(mode):
    lr.CyclicLR(0.1, 1.0, step_size_up=1, step_size_down=1)  # one step each way is allowed
    s = lr.CyclicLR(0.1, 1.0, step_size_up=2, step_size_down=2, mode=mode, exp_gamma=0.9)
    got = values(s, 9)
    amp = 0.9
    scale = {"triangular": lambda c, i: 1.0, "triangular2": lambda c, i: 1 / 2 ** (c - 1),
             "exp_range": lambda c, i: 0.9 ** i}[mode]
    want = []
    for i in range(9):
        c = 1 + i // 4
        x = 1 + i / 4 - c
        f = x / 0.5 if x <= 0.5 else (1 - x) / 0.5
        want.append(0.1 + amp * f * scale(c, i))
    close(got, want)


def test_linear_lr():
    s = lr.LinearLR(1.0, total_steps=4, start_factor=0.2, end_factor=1.0)
    close(values(s, 6), [0.2, 0.4, 0.6, 0.8, 1.0, 1.0])
    # Paddle's ranges: start_factor in (0, 1], end_factor in [0, 1]
    for kw in ({"end_factor": 1.5}, {"end_factor": -0.5}, {"start_factor": 0.0},
               {"start_factor": 1.5}):
        with pytest.raises(ValueError, match="factor"):
            lr.LinearLR(1.0, total_steps=4, **kw)
    close(values(lr.LinearLR(1.0, 2, start_factor=1.0, end_factor=0.0), 3), [1.0, 0.5, 0.0])


def test_base_class_protocol_and_verbose(capsys):
    class Halving(lr.LRScheduler):
        def get_lr(self):
            return self.base_lr * 0.5 ** self.last_epoch

    s = Halving(1.0, verbose=True)
    s.step()
    out = capsys.readouterr().out
    assert "Epoch 1: Halving set learning rate to 0.5." in out
    assert s.state_dict() == {"last_epoch": 1, "last_lr": 0.5}
    t = Halving(1.0)
    t.set_dict({"last_epoch": 1, "last_lr": 0.5})
    assert t() == 0.5 and t.last_epoch == 1
    with pytest.raises(RuntimeError, match="last_lr"):
        t.set_state_dict({"last_epoch": 3})
    with pytest.raises(NotImplementedError, match="get_lr"):
        lr.LRScheduler(0.1)
