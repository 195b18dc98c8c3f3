"""OneCycleLR and CyclicLR against values printed by Paddle 3.3.1 (same arguments,
12 steps; these numbers were produced once with real Paddle, which CI does not
need): uneven up/down phases, every CyclicLR mode, OneCycleLR's last step and the
step past it, and the arguments Paddle refuses."""

import numpy as np
import pytest

import fw

LR = fw.optimizer.lr

# CyclicLR(base 0.1, max 1.0, step_size_up=2, step_size_down=D, mode=M, exp_gamma=0.9)
CYCLIC = {
    (None, "triangular"): [0.1, 0.55, 1.0, 0.55, 0.1, 0.55, 1.0, 0.55, 0.1, 0.55, 1.0, 0.55],
    (None, "triangular2"): [0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55, 0.325, 0.1, 0.2125, 0.325,
                            0.2125],
    (None, "exp_range"): [0.1, 0.505, 0.829, 0.42805, 0.1, 0.365721, 0.578297, 0.315234, 0.1,
                          0.274339, 0.413811, 0.241215],
    (1, "triangular"): [0.1, 0.55, 1.0, 0.1, 0.55, 1.0, 0.1, 0.55, 1.0, 0.1, 0.55, 1.0],
    (1, "triangular2"): [0.1, 0.55, 1.0, 0.1, 0.325, 0.55, 0.1, 0.2125, 0.325, 0.1, 0.15625,
                         0.2125],
    (1, "exp_range"): [0.1, 0.505, 0.829, 0.1, 0.395245, 0.631441, 0.1, 0.315234, 0.48742, 0.1,
                       0.256905, 0.38243],
    (3, "triangular"): [0.1, 0.55, 1.0, 0.7, 0.4, 0.1, 0.55, 1.0, 0.7, 0.4, 0.1, 0.55],
    (3, "triangular2"): [0.1, 0.55, 1.0, 0.7, 0.4, 0.1, 0.325, 0.55, 0.4, 0.25, 0.1, 0.2125],
    (3, "exp_range"): [0.1, 0.505, 0.829, 0.5374, 0.29683, 0.1, 0.339148, 0.530467, 0.35828,
                       0.216226, 0.1, 0.241215],
}


def _run(sched, n):
    out = []
    for _ in range(n):
        out.append(float(sched.get_lr()))
        sched.step()
    return out


@pytest.mark.parametrize("down,mode", sorted(CYCLIC, key=str))
def test_cyclic_lr_matches_paddle(down, mode):
    s = LR.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=2,
                    step_size_down=down, mode=mode, exp_gamma=0.9)
    np.testing.assert_allclose(_run(s, 12), CYCLIC[down, mode], atol=1e-6)


@pytest.mark.parametrize("down", [0, -1])
def test_cyclic_lr_refuses_a_step_size_down_below_one(down):
    with pytest.raises(ValueError, match="step_size_down"):
        LR.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=2,
                    step_size_down=down)


def test_one_cycle_lr_matches_paddle_up_to_its_last_step_and_refuses_more():
    s = LR.OneCycleLR(max_learning_rate=1.0, total_steps=5)
    # Paddle's values for steps 0..5 (step 5 = total_steps is still computed)
    got = _run(s, 5) + [float(s.get_lr())]
    np.testing.assert_allclose(got, [0.04, 0.950489, 0.611299, 0.188336, 0.0001, 0.188336],
                               atol=1e-6)
    with pytest.raises(ValueError, match="total_steps=5"):
        s.step()  # to step 6, which Paddle refuses too
