"""fw.utils (deprecated, require_version, run_check, try_import), fw.sysconfig and the
fw.device names added for Paddle 3.3 parity (issue 16)."""

from __future__ import annotations

import os
import warnings

import pytest

import fw


def test_deprecated_levels():
    @fw.utils.deprecated(update_to="fw.new", since="0.1", reason="renamed")
    def quiet():
        """Doc."""
        return 1

    @fw.utils.deprecated(update_to="fw.new", level=1)
    def loud():
        return 2

    @fw.utils.deprecated(level=2)
    def gone():
        return 3

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quiet() == 1  # level 0: no warning
    assert "deprecated since 0.1; use fw.new instead" in quiet.__doc__
    with pytest.warns(DeprecationWarning, match="loud is deprecated; use fw.new"):
        assert loud() == 2
    with pytest.raises(RuntimeError, match="gone is deprecated"):
        gone()
    with pytest.raises(ValueError, match="level must be 0, 1 or 2"):
        fw.utils.deprecated(level=5)


def test_require_version():
    fw.utils.require_version("0.0.1")
    fw.utils.require_version("0.1", "99")
    with pytest.raises(Exception, match="fw 99.0 or higher is required"):
        fw.utils.require_version("99.0")
    with pytest.raises(Exception, match="between 0.0.1 and 0.0.2"):
        fw.utils.require_version("0.0.1", "0.0.2")
    with pytest.raises(ValueError, match="min_version must be a version string"):
        fw.utils.require_version("abc")


def test_try_import():
    assert fw.utils.try_import("json").dumps([1]) == "[1]"
    with pytest.raises(ImportError, match="pip install no_such_mod_xyz"):
        fw.utils.try_import("no_such_mod_xyz.sub")
    with pytest.raises(ImportError, match="^custom$"):
        fw.utils.try_import("no_such_mod_xyz", "custom")


def test_run_check(capsys):
    fw.utils.run_check()
    out = capsys.readouterr().out
    assert "fw works well on" in out and "cpu" in out


def test_sysconfig_paths():
    inc, lib = fw.sysconfig.get_include(), fw.sysconfig.get_lib()
    assert os.path.isfile(os.path.join(inc, "fused_elementwise.hpp"))
    assert any(n.startswith("_C") for n in os.listdir(lib))


def test_device_names():
    d = fw.device
    for n in ("cinn", "ipu", "xpu", "rocm"):
        assert getattr(d, f"is_compiled_with_{n}")() is False
    assert d.is_compiled_with_custom_device("npu") is False
    assert d.get_all_custom_device_type() == [] and d.get_available_custom_device() == []
    assert d.is_current_stream_capturing() in (False, True)
    with pytest.raises(NotImplementedError, match="IPUPlace: not supported on this device"):
        d.IPUPlace()
    with pytest.raises(NotImplementedError, match="XPUPlace: not supported on this device"):
        d.XPUPlace(0)
    before = fw.get_device()
    with d.device_guard("cpu"):
        assert fw.get_device() == "cpu"
    assert fw.get_device() == before and d.device is d.device_guard
    d.manual_seed(7)
    a = fw.rand([3]).tolist()
    state = d.get_rng_state()
    b = fw.rand([3]).tolist()
    d.set_rng_state(state)
    assert fw.rand([3]).tolist() == b and a != b
    d.manual_seed(7)
    assert fw.rand([3]).tolist() == a
    assert d.FloatTensor is fw.FloatTensor
    assert fw.LongTensor([1, 2]).dtype == fw.int64 and fw.FloatTensor(2, 3).shape == [2, 3]
    with pytest.raises(TypeError, match="FloatTensor: expected"):
        fw.FloatTensor("abc")


def test_constants_and_dtype_names():
    import math

    assert fw.pi == math.pi and fw.e == math.e and fw.inf == math.inf and math.isnan(fw.nan)
    assert fw.newaxis is None
    assert fw.float is fw.float32 and fw.double is fw.float64 and fw.half is fw.float16
    assert fw.cfloat is fw.complex64 and fw.cdouble is fw.complex128


def test_cuda_rng_state_and_xpu_pinned():
    state = fw.get_cuda_rng_state()
    assert isinstance(state, list)
    if not state:  # no GPU: Paddle's CPU build answers [] too
        fw.set_cuda_rng_state([])
    with pytest.raises(NotImplementedError, match="XPUPinnedPlace: not supported"):
        fw.XPUPinnedPlace()
