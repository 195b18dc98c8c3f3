"""fw.nn.quant: Paddle's weight-only quantization functions and WeightOnlyLinear."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
import fw.nn as nn
from fw.core.errors import InvalidArgumentError
from fw.nn.quant import WeightOnlyLinear, weight_dequantize, weight_only_linear, weight_quantize


@settings(max_examples=20, deadline=None)
@given(k=st.sampled_from([2, 8, 64]), n=st.integers(1, 6), bits=st.sampled_from([8, 4]),
       group=st.sampled_from([-1, 2]), seed=st.integers(0, 2**31 - 1))
def test_round_trip_within_half_a_step(k, n, bits, group, seed):
    algo = f"weight_only_int{bits}"
    w = np.random.default_rng(seed).normal(size=(k, n)).astype(np.float32)
    q, s = weight_quantize(fw.to_tensor(w), algo=algo, group_size=group)
    assert q.shape == [n, k * bits // 8]
    back = weight_dequantize(q, s, algo=algo, out_dtype="float32", group_size=group).numpy()
    step = s.numpy() if group == -1 else np.repeat(s.numpy(), group, axis=0)
    assert np.all(np.abs(back - w) <= step / 2 + 1e-6)
    # Paddle's default out_dtype is float16
    assert weight_dequantize(q, s, algo=algo, group_size=group).dtype == fw.float16


def test_paddle_example_shapes():
    # paddle.nn.quant.weight_quantize's documented example: [64, 32] -> [32, 64], [32]
    out, scale = weight_quantize(fw.rand([64, 32]).astype("float16"), algo="weight_only_int8")
    assert out.shape == [32, 64] and scale.shape == [32] and out.dtype == fw.int8


@pytest.mark.parametrize("algo,group", [("weight_only_int8", -1), ("weight_only_int4", 4)])
def test_weight_only_linear_layer(algo, group):
    fw.seed(0)
    lin = nn.Linear(16, 8)
    wol = WeightOnlyLinear.from_linear(lin, algo=algo, group_size=group)
    x = fw.randn([3, 5, 16])
    deq = weight_dequantize(wol.weight, wol.weight_scale, algo=algo, out_dtype="float32",
                            group_size=group).numpy()
    want = x.numpy() @ deq + lin.bias.numpy()
    np.testing.assert_allclose(wol(x).numpy(), want, rtol=1e-5, atol=1e-5)
    qmax = 127 if algo.endswith("8") else 7
    err = np.abs(wol(x).numpy() - lin(x).numpy()).max()
    assert err <= np.abs(x.numpy()).sum(-1).max() * np.abs(lin.weight.numpy()).max() / qmax
    # storage: int8 codes (int4: half a byte each), float32 scales and bias
    assert wol.weight.dtype == fw.int8
    assert wol.size_bytes() == 16 * 8 * (8 if algo.endswith("8") else 4) // 8 \
        + 4 * wol.weight_scale.size + 4 * 8
    # x and bias get gradients through it (adapters, fine-tuning the bias)
    x.stop_gradient = False
    wol(x).sum().backward()
    assert x.grad is not None and wol.bias.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(deq.sum(1), x.shape), rtol=1e-5)


def test_errors():
    with pytest.raises(InvalidArgumentError, match="'weight_scale' is required"):
        weight_only_linear(fw.ones([1, 4]), fw.ones([2, 4]).astype("int8"))
    with pytest.raises(InvalidArgumentError, match="WeightOnlyLinear: 'algo'"):
        WeightOnlyLinear(4, 2, algo="llm.int8")
    with pytest.raises(InvalidArgumentError, match="must equal the weight's k=4"):
        q, s = weight_quantize(fw.ones([4, 2]))
        weight_only_linear(fw.ones([1, 3]), q, weight_scale=s)
