"""Devices: places, the current device, errors without a GPU, and a backend
added by a plugin without editing fw-core."""

from importlib import metadata

import numpy as np
import pytest

import fw
from fw.core import place as _pl
from fw.core.testing.fake_device import FakeArray


@pytest.fixture
def fake_plugin(monkeypatch):
    """Expose FakeBackend through the 'fw.backends' entry-point group."""
    ep = metadata.EntryPoint(name="fake", value="fw.core.testing.fake_device:FakeBackend",
                             group="fw.backends")
    real = metadata.entry_points

    def entry_points(**kw):
        if kw.get("group") == "fw.backends":
            return metadata.EntryPoints([ep])
        return real(**kw)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    # the registries as they were (the device tests may have registered the fake
    # backend already): restored afterwards, not emptied
    backends, by_type = dict(_pl._BACKENDS), dict(_pl._BY_ARRAY_TYPE)
    _pl._BACKENDS.pop("fake", None)
    _pl._BY_ARRAY_TYPE.pop(FakeArray, None)
    yield
    _pl._BACKENDS.clear()
    _pl._BACKENDS.update(backends)
    _pl._BY_ARRAY_TYPE.clear()
    _pl._BY_ARRAY_TYPE.update(by_type)
    _pl._current[0] = _pl._CPU_PLACE


def test_plugin_backend_is_loaded_from_its_entry_point(fake_plugin):
    t = fw.to_tensor([1.0, 2.0, 3.0], place="fake:1")
    assert t.place == _pl.Place("fake", 0) and str(t.place) == "fake:0"
    u = (t * 2 + 1).sum()
    assert isinstance(u._data, FakeArray)
    assert float(u) == 15.0
    back = t.cpu()
    assert type(back._data) is np.ndarray and back.tolist() == [1.0, 2.0, 3.0]


def test_plugin_device_can_be_current(fake_plugin):
    fw.set_device("fake:1")
    assert fw.get_device() == "fake:1"
    z = fw.zeros([2])
    assert isinstance(z._data, FakeArray)


def test_mixing_devices_is_a_clear_error(fake_plugin):
    a = fw.to_tensor([1.0], place="fake")
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="different devices"):
        a + fw.to_tensor([1.0])


def test_unknown_device_kind_names_the_plugin_group():
    with pytest.raises(RuntimeError, match="fw.backends"):
        fw.set_device("tpu:0")


def test_gpu_without_cupy_or_device_is_a_clear_error():
    if fw.is_compiled_with_cuda():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="(CuPy|cupy|CUDA device)"):
        fw.set_device("gpu:0")
    assert fw.device.cuda.device_count() == 0
    assert fw.device.get_all_device_type() == ["cpu"]


def test_places_print_and_compare_like_paddle():
    assert repr(fw.CPUPlace()) == "Place(cpu)"
    assert repr(fw.CUDAPlace(1)) == "Place(gpu:1)"
    assert fw.CPUPlace() == "cpu"
    assert fw.to_tensor([1]).place.is_cpu_place()
    assert fw.get_device() == "cpu"


def test_gpu_memory_and_stream_calls_say_why_without_a_gpu():
    if fw.is_compiled_with_cuda():
        pytest.skip("a GPU is present")
    cuda = fw.device.cuda
    for call in (cuda.memory_allocated, cuda.max_memory_allocated, cuda.memory_reserved,
                 cuda.get_device_properties, fw.device.Stream, fw.device.Event,
                 fw.device.current_stream):
        with pytest.raises(RuntimeError, match="(CuPy|cupy|CUDA device)"):
            call()
    cuda.empty_cache()  # a no-op without a GPU, as in Paddle
    assert not cuda.is_bf16_supported() and not fw.device.is_available()
