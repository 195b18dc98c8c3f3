"""Top-level odds and ends: Size, batch, flags, the torch-compat layer."""

import importlib
import sys

import numpy as np
import pytest

import fw


def test_size_is_a_tuple_of_ints():
    s = fw.Size([2, 3, 4])
    assert s == (2, 3, 4) and isinstance(s, tuple)
    assert s.numel() == 24
    assert isinstance(s[1:], fw.Size) and s[1:] == (3, 4)
    assert repr(s) == "fw.Size([2, 3, 4])"


def test_batch_groups_samples_and_keeps_or_drops_the_tail():
    def reader():
        yield from range(5)

    assert list(fw.batch(reader, 2)()) == [[0, 1], [2, 3], [4]]
    assert list(fw.batch(reader, 2, drop_last=True)()) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="batch_size"):
        fw.batch(reader, 0)


def test_flags_are_recorded_and_validated():
    fw.set_flags({"FLAGS_eager_delete_tensor_gb": 1.0})
    assert fw.get_flags("FLAGS_eager_delete_tensor_gb") == {"FLAGS_eager_delete_tensor_gb": 1.0}
    with pytest.raises(ValueError, match="FLAGS_"):
        fw.set_flags({"eager_delete": 1})
    with pytest.raises(ValueError, match="has not been set"):
        fw.get_flags(["FLAGS_never_set"])


def test_compat_softmax_uses_torch_argument_names():
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    out = fw.compat.nn.functional.softmax(fw.to_tensor(x), dim=0, dtype="float64")
    e = np.exp(x.astype(np.float64) - x.max(0))
    np.testing.assert_allclose(out.numpy(), e / e.sum(0), rtol=1e-12)
    assert out.dtype == fw.float64


def test_enable_compat_makes_import_torch_give_fw():
    real = sys.modules.get("torch")
    fw.enable_compat()
    try:
        torch = importlib.import_module("torch")
        assert torch is fw and torch.sin is fw.sin
        import torch.nn as tnn  # noqa: F401  (submodules resolve too)

        assert tnn is fw.nn
    finally:
        fw.disable_compat()
    assert not fw.compat.is_compat_enabled()
    assert sys.modules.get("torch") is real


def test_check_nan_inf_flag_turns_on_anomaly_mode():
    autograd = pytest.importorskip("fw.autograd")
    try:
        fw.set_flags({"FLAGS_check_nan_inf": True})
        assert autograd.is_anomaly_enabled()
    finally:
        fw.set_flags({"FLAGS_check_nan_inf": False})
    assert not autograd.is_anomaly_enabled()


def test_malloc_tuning_can_be_turned_off():
    import subprocess

    code = "import fw.core._memory as m, fw; print(m.TUNED)"
    env = dict(__import__("os").environ, FW_MALLOC_TUNING="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
