"""A float64 input to a float32 layer raises (Paddle 3.3 raises ValueError for Linear, Conv*,
LayerNorm, BatchNorm, GroupNorm, InstanceNorm; checked with the real Paddle 3.3.1), instead of
silently computing in float64; Embedding takes integer ids and is unaffected."""

from __future__ import annotations

import re

import pytest

import fw
import fw.nn as nn


@pytest.mark.parametrize("name,layer,shape", [
    ("linear", lambda: nn.Linear(8, 2), [2, 8]),
    ("conv1d", lambda: nn.Conv1D(3, 4, 3), [2, 3, 8]),
    ("conv2d", lambda: nn.Conv2D(3, 4, 3), [2, 3, 8, 8]),
    ("conv2d_transpose", lambda: nn.Conv2DTranspose(3, 4, 3), [2, 3, 8, 8]),
    ("layer_norm", lambda: nn.LayerNorm(8), [2, 3, 8, 8]),
    ("batch_norm", lambda: nn.BatchNorm2D(3), [2, 3, 8, 8]),
    ("group_norm", lambda: nn.GroupNorm(1, 3), [2, 3, 8, 8]),
    ("instance_norm", lambda: nn.InstanceNorm2D(3), [2, 3, 8, 8]),
])
def test_float64_input_to_float32_layer_raises(name, layer, shape):
    m = layer()
    x = fw.ones(shape, dtype="float64")
    want = (f"{name}: x has dtype fw.float64 but weight has dtype fw.float32 "
            f"(x shape {shape}, weight shape ")
    with pytest.raises(ValueError, match=re.escape(want)):
        m(x)
    out = m(fw.ones(shape, dtype="float32"))  # the matching dtype still runs
    assert out.dtype == fw.float32


def test_int_input_to_linear_raises():
    with pytest.raises(ValueError, match="linear: x has dtype fw.int64"):
        nn.Linear(2, 2)(fw.ones([1, 2], dtype="int64"))


def test_low_precision_x_with_float32_norm_params_is_allowed():
    out = nn.LayerNorm(4)(fw.ones([2, 4], dtype="bfloat16"))
    assert list(out.shape) == [2, 4]


def test_auto_cast_skips_the_check():
    m = nn.Linear(4, 2)
    with fw.amp.auto_cast(dtype="bfloat16"):
        assert m(fw.ones([1, 4])).dtype == fw.bfloat16


def test_embedding_ids_unaffected():
    assert nn.Embedding(4, 3)(fw.to_tensor([1, 2])).dtype == fw.float32


def test_amp_queries():
    assert fw.amp.is_autocast_enabled() is False and fw.is_autocast_enabled() is False
    assert fw.amp.get_autocast_dtype() == "float16"  # Paddle's answer outside a region
    with fw.amp.auto_cast(dtype="bfloat16"):
        assert fw.amp.is_autocast_enabled() is True
        assert fw.amp.get_autocast_dtype() == "bfloat16"
        assert fw.amp.get_autocast_cpu_dtype() == fw.amp.get_autocast_gpu_dtype() == "bfloat16"
    with fw.amp.auto_cast(enable=False):
        assert fw.amp.is_autocast_enabled() is False


def test_autocast_torch_order():
    with fw.autocast("cpu", dtype="bfloat16"):
        assert fw.amp.is_autocast_enabled() and fw.amp.get_autocast_dtype() == "bfloat16"
    with fw.autocast("cpu", enabled=False):
        assert not fw.amp.is_autocast_enabled()
