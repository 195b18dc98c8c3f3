"""BiRNN runs its forward cell from the first initial state and its backward cell,
over the reversed sequence, from the second: checked against the two cells stepped
by hand, with different initial states, for a simple RNN and an LSTM cell."""

import numpy as np
import pytest

import fw


def _run_cell(cell, xs, state):
    outs = []
    for x in xs:
        out, state = cell(x, state)
        outs.append(out)
    return outs, state


@pytest.mark.parametrize("kind", ["simple", "lstm"])
def test_birnn_uses_each_directions_own_initial_state(kind):
    fw.seed(0)
    nn = fw.nn
    make = (lambda: nn.SimpleRNNCell(3, 4)) if kind == "simple" else (lambda: nn.LSTMCell(3, 4))
    fwd, bwd = make(), make()
    birnn = nn.BiRNN(fwd, bwd)
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal((2, 5, 3)).astype(np.float32))

    def state():
        h = fw.to_tensor(rng.standard_normal((2, 4)).astype(np.float32))
        if kind == "simple":
            return h
        return h, fw.to_tensor(rng.standard_normal((2, 4)).astype(np.float32))

    s_fw, s_bw = state(), state()
    out, (f_fw, f_bw) = birnn(x, (s_fw, s_bw))
    steps = [x[:, t] for t in range(5)]
    o_fw, e_fw = _run_cell(fwd, steps, s_fw)
    o_bw, e_bw = _run_cell(bwd, steps[::-1], s_bw)
    want = np.concatenate([np.stack([o.numpy() for o in o_fw], 1),
                           np.stack([o.numpy() for o in o_bw[::-1]], 1)], -1)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    flat = (lambda s: [s]) if kind == "simple" else (lambda s: list(s))
    for got, exp in zip(flat(f_fw) + flat(f_bw), flat(e_fw) + flat(e_bw)):
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-5, atol=1e-6)
    # the two states really matter: swapping them changes the output
    swapped, _ = birnn(x, (s_bw, s_fw))
    assert not np.allclose(swapped.numpy(), out.numpy())
