"""fw.save / fw.load: round trips of every dtype and nested structures, atomic writes,
and refusal of pickles and malformed files."""

import json
import os
import pickle
import struct
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fw
import fw.nn as nn
from fw.nn import serialization
from fw.nn.serialization import CheckpointError

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.startswith("complex"):
        r = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return r.astype(dtype)
    npd = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    a = (rng.standard_normal(shape) * 100).astype(npd)
    flat = a.reshape(-1)
    if flat.size >= 3:  # special values round-trip too
        flat[0], flat[1], flat[2] = np.inf, -0.0, np.nan
    return a


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [[], [0], [3], [2, 3, 4]])
def test_every_dtype_round_trips_bit_exactly(tmp_path, dtype, shape):
    a = sample(dtype, shape)
    t = fw.to_tensor(a)
    assert t.dtype.name == dtype
    p = tmp_path / "t.pdparams"
    fw.save({"t": t, "a": a}, str(p))
    back = fw.load(str(p))
    assert isinstance(back["t"], fw.Tensor) and back["t"].dtype.name == dtype
    same_bits(back["t"].numpy(), a)
    same_bits(back["a"], a)
    same_bits(fw.load(str(p), return_numpy=True)["t"], a)


def test_nested_structure_round_trips(tmp_path):
    x = fw.to_tensor([1.0, 2.0])
    obj = OrderedDict([
        ("model", {"w": x, "b": fw.zeros([2], dtype="int64")}),
        ("lists", [1, 2.5, "s", None, True, [x, (3, "t")]]),
        ("tuple", (float("inf"), float("-inf"), -0.0)),
        ("scalars", {1: "int key", 2.5: "float key", (1, "a"): "tuple key", None: False}),
        ("np", {"scalar": np.float32(1.5), "int": np.int64(7), "arr": np.arange(3)}),
        ("nested.dots", {"a.b": fw.ones([1]), "a": {"b": fw.full([1], 2.0)}}),
    ])
    p = tmp_path / "nested.ckpt"
    fw.save(obj, str(p))
    back = fw.load(str(p))
    assert isinstance(back, OrderedDict) and list(back) == list(obj)
    assert back["model"]["w"].tolist() == [1.0, 2.0]
    assert back["model"]["b"].dtype == fw.int64
    assert back["lists"][:5] == [1, 2.5, "s", None, True]
    assert type(back["lists"][1]) is float and type(back["lists"][4]) is bool
    assert back["lists"][5][1] == (3, "t")
    # the same tensor twice is stored once and comes back as one object
    assert back["lists"][5][0] is back["model"]["w"]
    inf, ninf, nz = back["tuple"]
    assert inf == float("inf") and ninf == float("-inf") and str(nz) == "-0.0"
    assert back["scalars"] == {1: "int key", 2.5: "float key", (1, "a"): "tuple key",
                               None: False}
    assert back["np"]["scalar"] == np.float32(1.5) and back["np"]["scalar"].dtype == np.float32
    assert back["np"]["int"].dtype == np.int64
    np.testing.assert_array_equal(back["np"]["arr"], np.arange(3))
    assert back["nested.dots"]["a.b"].tolist() == [1.0]
    assert back["nested.dots"]["a"]["b"].tolist() == [2.0]


def test_single_tensor_and_tensor_attributes(tmp_path):
    p = str(tmp_path / "one")
    t = fw.to_tensor([[1, 2]], stop_gradient=False)
    t.name = "my_tensor"
    fw.save(t, p)
    back = fw.load(p)
    assert isinstance(back, fw.Tensor) and back.tolist() == [[1, 2]]
    assert back.stop_gradient is False and back.name == "my_tensor"


def test_layer_state_dict_round_trip_and_set_state_dict(tmp_path):
    fw.seed(1)
    net = nn.Sequential(nn.Conv2D(2, 3, 3), nn.BatchNorm2D(3), nn.Flatten(),
                        nn.Linear(12, 2))
    net(fw.randn([2, 2, 4, 4]))  # moves the running statistics
    p = tmp_path / "sub" / "dir" / "net.pdparams"
    fw.save(net.state_dict(), str(p))
    fw.seed(2)
    other = nn.Sequential(nn.Conv2D(2, 3, 3), nn.BatchNorm2D(3), nn.Flatten(),
                          nn.Linear(12, 2))
    report = other.set_state_dict(fw.load(str(p)))
    assert report.ok and len(report.matched_keys) == len(net.state_dict())
    for (k, a), (k2, b) in zip(net.state_dict().items(), other.state_dict().items()):
        assert k == k2
        same_bits(a.numpy(), b.numpy())


def test_non_serialisable_objects_are_refused(tmp_path):
    p = str(tmp_path / "x")
    with pytest.raises(TypeError, match="state_dict"):
        fw.save(nn.Linear(2, 2), p)
    with pytest.raises(TypeError, match="cannot store a object"):
        fw.save({"o": object()}, p)
    with pytest.raises(TypeError, match="dict keys"):
        fw.save({frozenset(): 1}, p)
    assert not os.path.exists(p)
    with pytest.raises(ValueError, match="file name"):
        fw.save({}, str(tmp_path) + "/")


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "model.pdparams"
    p = str(path)
    fw.save({"v": fw.to_tensor([1.0])}, p)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(serialization.os, "replace", boom)
    with pytest.raises(OSError, match="disk on fire"):
        fw.save({"v": fw.to_tensor([2.0])}, p)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.pdparams"]  # the temp file was removed
    monkeypatch.undo()

    # a crash while writing the data
    real_fsync = os.fsync

    def crash(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(serialization.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        fw.save({"v": fw.to_tensor([3.0])}, p)
    monkeypatch.setattr(serialization.os, "fsync", real_fsync)
    assert fw.load(p)["v"].tolist() == [1.0]
    assert os.listdir(tmp_path) == ["model.pdparams"]


def test_pickles_are_refused_without_unpickling(tmp_path):
    ran = []

    class Evil:
        def __reduce__(self):
            return (ran.append, ("executed",))

    for proto in (2, 4, 5):
        p = tmp_path / f"evil{proto}.pdparams"
        p.write_bytes(pickle.dumps({"w": Evil(), "x": np.ones(3)}, protocol=proto))
        with pytest.raises(CheckpointError, match="pickle") as e:
            fw.load(str(p))
        assert str(p) in str(e.value)
    zip_like = tmp_path / "torch.pt"
    zip_like.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    with pytest.raises(CheckpointError, match="zip"):
        fw.load(str(zip_like))
    assert ran == []


@pytest.mark.parametrize("data", [b"", b"abc", b"\x00" * 8, b"\xff" * 32,
                                  struct.pack("<Q", 4) + b"[1] ", struct.pack("<Q", 2) + b"{}"])
def test_garbage_files_raise_clear_errors(tmp_path, data):
    p = tmp_path / "bad.bin"
    p.write_bytes(data)
    if data == struct.pack("<Q", 2) + b"{}":
        assert fw.load(str(p)) == {}  # an empty plain safetensors file is valid
        return
    with pytest.raises(CheckpointError) as e:
        fw.load(str(p))
    assert str(p) in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        fw.load(str(tmp_path / "nope"))


def _good_file(tmp_path):
    p = tmp_path / "good.ckpt"
    fw.save({"w": fw.to_tensor([[1.0, 2.0], [3.0, 4.0]]), "step": 7, "name": "model",
             "b": fw.to_tensor([1, 2], dtype="int32")}, str(p))
    return p, p.read_bytes()


@settings(deadline=None)
@given(st.data())
def test_any_single_byte_flip_is_detected(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("flip")
    p, good = _good_file(tmp)
    i = data.draw(st.integers(0, len(good) - 1), label="offset")
    flip = data.draw(st.integers(1, 255), label="xor")
    bad = bytearray(good)
    bad[i] ^= flip
    p.write_bytes(bytes(bad))
    try:
        out = fw.load(str(p))
    except CheckpointError as e:
        assert str(p) in str(e)
        return
    # a flip in the header's padding spaces or JSON whitespace may leave the file valid,
    # but then it must load exactly the saved values
    assert out["w"].tolist() == [[1.0, 2.0], [3.0, 4.0]] and out["step"] == 7
    assert out["name"] == "model" and out["b"].tolist() == [1, 2]


@settings(deadline=None)
@given(st.integers(0, 400))
def test_truncation_is_detected(tmp_path_factory, cut):
    tmp = tmp_path_factory.mktemp("cut")
    p, good = _good_file(tmp)
    cut = min(cut, len(good) - 1)
    p.write_bytes(good[:cut])
    with pytest.raises(CheckpointError):
        fw.load(str(p))


def test_file_is_standard_safetensors(tmp_path):
    from safetensors.numpy import load_file

    p = tmp_path / "std.safetensors"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    fw.save({"layer": {"w": fw.to_tensor(w)}, "ids": np.arange(4)}, str(p))
    flat = load_file(str(p))
    np.testing.assert_array_equal(flat["layer.w"], w)
    np.testing.assert_array_equal(flat["ids"], np.arange(4))
    # and a plain safetensors file written by another tool loads as a flat dict
    from safetensors.numpy import save_file

    q = tmp_path / "plain.safetensors"
    save_file({"a": np.ones((2, 2), np.float32)}, str(q))
    out = fw.load(str(q))
    assert list(out) == ["a"] and out["a"].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_header_records_structure_and_checksum(tmp_path):
    p = tmp_path / "h.ckpt"
    fw.save({"x": fw.ones([2])}, str(p))
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header["__metadata__"]
    assert meta["fw.format"] == "1" and len(meta["fw.checksum"]) == 64
    assert json.loads(meta["fw.structure"]) == {
        "__dict__": [["x", {"__tensor__": "x", "stop_gradient": True}]], "ordered": False}
    assert header["x"]["dtype"] == "F32" and (8 + n) % 8 == 0
