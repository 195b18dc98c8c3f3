"""State written inside converted control flow: batch-norm running statistics, a
registered buffer or a tensor held in a plain attribute, updated in place in one
branch of a tensor ``if`` or in the body of a tensor ``while``/``for``. After each
call the state must be exactly what eager code leaves (true branch, false branch,
loops of 0, 1 and several iterations), the outputs and the parameter gradients
must match eager, with gradients recorded and under ``fw.no_grad()``."""

import numpy as np
import pytest
from jit_testutil import assert_same

import fw
from fw import nn

T = fw.to_tensor
RNG = np.random.RandomState(0)
X = RNG.rand(4, 3).astype("float32") + 0.5  # sum > 0: the true branch


def _twins(cls, *args):
    """Two identical layers: one run eagerly, one converted."""
    fw.seed(0)
    eager = cls(*args)
    static = cls(*args)
    static.set_state_dict(eager.state_dict())
    for k, v in vars(eager).items():  # tensors in plain attributes
        if isinstance(v, fw.Tensor):
            setattr(static, k, T(v.numpy()))
    return eager, fw.jit.to_static(static, full_graph=True)


def _state(layer):
    out = {k: v.numpy().copy() for k, v in layer.state_dict().items()}
    out.update({k: v.numpy().copy() for k, v in vars(layer).items() if isinstance(v, fw.Tensor)})
    return out


def _grads(layer):
    # a parameter the call did not reach has no gradient eagerly and a zero one
    # from the program (its branch was not taken): the same update either way
    return {f"{i}:{p.name}": (np.zeros(p.shape, "float32") if p.grad is None else
                              p.grad.numpy().copy())
            for i, p in enumerate(layer.parameters())}


def _run_both(eager, static, calls, grad):
    """Call both layers on each argument tuple; compare outputs, state, and (with
    `grad`) the parameter gradients after a backward of each output."""
    for args in calls:
        outs = []
        for layer in (eager, static):
            if grad:
                y = layer(*args)
                (y * T(np.arange(y.size, dtype="float32").reshape(y.shape))).sum().backward()
            else:
                with fw.no_grad():
                    y = layer(*args)
            outs.append(y)
        assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-5)
        se, ss = _state(eager), _state(static)
        assert list(se) == list(ss)
        for k in se:
            np.testing.assert_allclose(ss[k], se[k], rtol=1e-5, atol=1e-6, err_msg=k)
        if grad:
            ge, gs = _grads(eager), _grads(static)
            for ke, ks in zip(ge, gs):
                np.testing.assert_allclose(gs[ks], ge[ke], rtol=1e-5, atol=1e-5, err_msg=ke)


# ------------------------------------------------------------------ if
class BNEachBranch(nn.Layer):
    """A different batch norm in each branch, one shared by both, a Linear before."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.bn_t = nn.BatchNorm1D(3)
        self.bn_f = nn.BatchNorm1D(3)
        self.bn_both = nn.BatchNorm1D(3)

    def forward(self, x):
        h = self.lin(x)
        if x.sum() > 0:
            y = self.bn_t(h) + self.bn_both(h)
        else:
            y = self.bn_f(h * 2) - self.bn_both(h)
        return y


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_batch_norm_in_either_branch_updates_running_stats(grad):
    eager, static = _twins(BNEachBranch)
    calls = [(T(X),), (T(-X),), (T(X * 3),), (T(-X),)]
    _run_both(eager, static, calls, grad)
    # each branch ran: each layer's statistics moved
    for bn in (static.bn_t, static.bn_f, static.bn_both):
        assert np.abs(bn._mean.numpy()).sum() > 0


def test_batch_norm_in_a_branch_in_eval_mode_updates_nothing():
    eager, static = _twins(BNEachBranch)
    eager.eval()
    static.eval()
    before = _state(static)
    _run_both(eager, static, [(T(X),), (T(-X),)], grad=False)
    for k, v in _state(static).items():
        np.testing.assert_array_equal(v, before[k])


class BNTwice(nn.Layer):
    """The second call reads the statistics the first one wrote."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1D(3)

    def forward(self, x):
        y = self.bn(x)
        if x.sum() > 0:
            y = self.bn(y * 2 + 1)
        return self.bn(y - 1)


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_batch_norm_called_again_reads_the_statistics_written_before(grad):
    eager, static = _twins(BNTwice)
    _run_both(eager, static, [(T(X),), (T(-X),), (T(X),)], grad)


class BufferBranches(nn.Layer):
    """A registered buffer and a plain attribute tensor, written in place in the
    branches (`add_`, `set_value`); the false branch alone writes `hits`."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", fw.zeros([1]))
        self.register_buffer("hits", fw.zeros([3]))
        self.total = fw.zeros([3])

    def forward(self, x):
        if x.sum() > 0:
            self.count.add_(fw.ones([1]))
            self.total.add_(x.sum(0))
        else:
            self.count.set_value(self.count * 10 + 1)
            self.hits.set_value(self.hits + x.mean(0))
        return x * self.count + self.total


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_buffers_written_in_either_branch(grad):
    eager, static = _twins(BufferBranches)
    x, y = T(X, stop_gradient=False), T(-X, stop_gradient=False)
    _run_both(eager, static, [(x,), (y,), (x,), (y,)], grad)
    assert static.count.numpy()[0] == 121  # 0 -> 1 -> 11 -> 12 -> 121


# ------------------------------------------------------------------ while / for
class BNLoop(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.bn = nn.BatchNorm1D(3)
        self.register_buffer("steps", fw.zeros([1]))

    def forward(self, x, n):
        h = self.lin(x)
        i = 0
        while i < n:
            h = self.bn(h) + 1
            self.steps.add_(fw.ones([1]))
            i += 1
        return h


class BNFor(BNLoop):
    def forward(self, x, n):
        h = self.lin(x)
        for _ in range(n):
            h = self.bn(h) * 0.5
            self.steps.set_value(self.steps + 2)
        return h


@pytest.mark.parametrize("cls", [BNLoop, BNFor])
@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_state_updated_in_a_tensor_loop(cls, grad):
    eager, static = _twins(cls)
    calls = [(T(X), T(n)) for n in (0, 1, 3, 0, 2)]
    _run_both(eager, static, calls, grad)
    assert len(static.forward.program_cache) == 1  # one program for every trip count
    assert static.steps.numpy()[0] == (6 if cls is BNLoop else 12)


class CountRows(nn.Layer):
    """A buffer written in a branch inside a tensor loop: the branch not taken
    must keep the value the loop carries, not the value before the loop."""

    def __init__(self):
        super().__init__()
        self.register_buffer("seen", fw.zeros([1]))
        self.register_buffer("big", fw.zeros([1]))

    def forward(self, m):
        for row in m:
            if row.sum() > 2.5:
                self.big.add_(fw.ones([1]))
                if row.sum() > 6.5:
                    break
            else:
                self.seen.set_value(self.seen * 2 + 1)
        return m * 1


def test_state_written_in_a_branch_inside_a_loop():
    eager, static = _twins(CountRows)
    rows = [[1.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0], [5.0, 5.0, 0.0],
            [1.0, 1.0, 1.0]]
    calls = [(T(np.array(r, np.float32)),) for r in (rows, rows[::-1], rows[:3])]
    _run_both(eager, static, calls, grad=False)
    assert static.big.numpy()[0] == 2 + 2 + 1


class SetItemBuffers(nn.Layer):
    """Writes by index (`self.buf[i] = v`, `+=`) and `fw.assign(v, output=buf)`."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", fw.zeros([3]))
        self.register_buffer("last", fw.zeros([3]))

    def forward(self, x):
        if x.sum() > 0:
            self.buf[0] = self.buf[1] * 3 + 1
            self.buf[1:] += 2.0
        else:
            fw.assign(self.buf * 2 + x.mean(0), output=self.last)
        self.buf[2] -= 1.0
        return x * 1 + self.buf[0]


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_buffers_written_by_index_and_assign(grad):
    eager, static = _twins(SetItemBuffers)
    x, y = T(X, stop_gradient=False), T(-X, stop_gradient=False)
    _run_both(eager, static, [(x,), (y,), (x,), (y,)], grad)


class BNTrainNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1D(4)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = self.bn(h)
        else:
            h = h * 0.5
        return self.out(h)


def test_training_step_with_batch_norm_in_a_branch_is_one_program():
    import copy

    fw.seed(1)
    a = BNTrainNet()
    b = copy.deepcopy(a)
    opt_a = fw.optimizer.Momentum(0.1, 0.9, parameters=a.parameters())
    opt_b = fw.optimizer.Momentum(0.1, 0.9, parameters=b.parameters())

    def step_of(model, opt):
        def step(x):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager, static = step_of(a, opt_a), fw.jit.to_static(step_of(b, opt_b), full_graph=True)
    branches = set()
    for x in (X, -X * 2, X, -X):
        branches.add(bool(a.fc(T(x)).mean() > 0))
        assert_same(eager(T(x)), static(T(x)), rtol=1e-5, atol=1e-6)
        for (k, p), q in zip(a.state_dict().items(), b.state_dict().values()):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert branches == {True, False}
