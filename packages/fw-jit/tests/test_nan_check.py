"""A converted training step honours anomaly mode and FLAGS_check_nan_inf (issue 10,
item 10): the op whose output went NaN/Inf is named with the user's line, the
error class is eager's `AnomalyError`, and parameters and optimizer state keep
their values. With the mode off the step runs unchecked, as before."""

import numpy as np
import pytest

import fw
from fw.autograd import AnomalyError


class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = fw.nn.Linear(4, 2)

    def forward(self, x, shift):
        h = self.fc(x)
        return fw.log(h * h - shift).mean()  # log of a negative number when shift > h*h


def _setup(opt="adam"):
    fw.seed(0)
    net = Net()
    opt = (fw.optimizer.Adam(0.01, parameters=net.parameters()) if opt == "adam"
           else fw.optimizer.SGD(0.1, parameters=net.parameters()))

    @fw.jit.to_static(full_graph=True)
    def step(x, shift):
        loss = net(x, shift)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return net, opt, step


def _opt_state(opt):
    return {k: np.array(v.numpy(), copy=True) for k, v in opt.state_dict().items()
            if hasattr(v, "numpy")}


def _state(net):
    return [p.numpy().copy() for p in net.parameters()]


X = fw.to_tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
GOOD, BAD = fw.to_tensor(np.float32(-1.0)), fw.to_tensor(np.float32(100.0))


@pytest.mark.parametrize("how", ["detect_anomaly", "set_detect_anomaly", "flag"])
def test_nan_in_a_converted_step_raises_before_the_update(how):
    net, opt, step = _setup()
    step(X, GOOD)  # compiled and run once with the mode off
    before = _state(net)
    moments = _opt_state(opt)
    try:
        if how == "detect_anomaly":
            ctx = fw.autograd.detect_anomaly()
            ctx.__enter__()
        elif how == "set_detect_anomaly":
            fw.autograd.set_detect_anomaly(True)
        else:
            fw.set_flags({"FLAGS_check_nan_inf": True})
        with pytest.raises(AnomalyError) as ei:
            step(X, BAD)
    finally:
        if how == "detect_anomaly":
            ctx.__exit__(None, None, None)
        elif how == "set_detect_anomaly":
            fw.autograd.set_detect_anomaly(False)
        else:
            fw.set_flags({"FLAGS_check_nan_inf": False})
    msg = str(ei.value)
    assert "'log' produced NaN" in msg
    assert "test_nan_check.py" in msg and "fw.log(h * h - shift)" in msg  # the user's line
    for a, b in zip(before, _state(net)):
        np.testing.assert_array_equal(a, b)  # nothing was written
    after = _opt_state(opt)
    assert moments.keys() == after.keys() and len(moments) >= 4  # Adam's moments and betas
    for k in moments:
        np.testing.assert_array_equal(moments[k], after[k])
    # the mode off again: the unchecked program runs (a NaN loss, no error), as before
    assert np.isnan(step(X, BAD).numpy())


def test_division_by_zero_is_named():
    fw.seed(0)
    w = fw.create_parameter([3], "float32")
    opt = fw.optimizer.SGD(0.1, parameters=[w])

    @fw.jit.to_static(full_graph=True)
    def step(x):
        loss = (w / x).sum()
        loss.backward()
        opt.step()
        return loss

    ok = fw.to_tensor(np.ones(3, np.float32))
    step(ok)
    before = w.numpy().copy()
    with fw.autograd.detect_anomaly():
        with pytest.raises(AnomalyError, match="'divide' produced Inf"):
            step(fw.to_tensor(np.array([1, 0, 1], np.float32)))
    np.testing.assert_array_equal(w.numpy(), before)


def test_mode_off_runs_the_unchecked_program():
    net, opt, step = _setup("sgd")
    step(X, GOOD)
    with fw.autograd.detect_anomaly():
        step(X, GOOD)  # finite: the checked program runs and updates
    before = _state(net)
    step(X, GOOD)
    assert any((a != b).any() for a, b in zip(before, _state(net)))
    compiled = {k: c for cp in step.program_cache.concrete_programs()
                for k, c in cp._compiled.items()}
    assert {k: c.op_check is not None for k, c in compiled.items()} == \
        {("cpu", False): False, ("cpu", True): True}
    # zero cost when off: the unchecked program's code calls no check
    plain, checked = compiled[("cpu", False)].source, compiled[("cpu", True)].source
    assert plain.count("(o") == 0 and checked.count("(o") > 0


def test_converted_forward_with_eager_backward():
    fw.seed(0)
    net = Net()
    fwd = fw.jit.to_static(net, full_graph=True)
    fwd(X, GOOD).backward()  # the program runs as one differentiable op
    with fw.autograd.detect_anomaly():
        with pytest.raises(AnomalyError, match="'log' produced NaN"):
            fwd(X, BAD)
    assert np.isnan(fwd(X, BAD).numpy())  # unchecked again
