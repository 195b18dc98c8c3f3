"""The model file: one safetensors file with the program text and the weights;
atomic writes; every dtype bit-exact; malformed files only ever raise
ModelFormatError."""

import datetime
import json
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.numpy import save_file

import fw
from fw.core import checksum
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, load, run, save, trace
from fw.core.ir import serialize as ser
from fw.core.ir.serialize import ModelFormatError
from fw.core.testing.programs import draw_program

T = TensorType


def _mlp():
    rng = np.random.default_rng(0)
    w1 = fw.to_tensor(rng.standard_normal((4, 8)).astype(np.float32))
    w1.name, w1.trainable = "fc1.weight", True
    b1 = fw.to_tensor(rng.standard_normal(8).astype(np.float32))
    b1.name, b1.trainable = "fc1.bias", True
    scale = fw.to_tensor(np.float32(0.5))  # a constant

    def f(x):
        return fw.matmul(x, w1).add(b1).tanh() * scale

    return trace(f, [T([-1, 4], "float32")], names=["x"])


def _bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


def test_round_trip_runs_with_its_params(tmp_path):
    p = _mlp()
    f = tmp_path / "mlp.fwm"
    save(p, f)
    q, params = load(f)
    assert str(q) == str(p)
    assert q.captured is params
    assert sorted(params) == sorted(p.captured)
    for k, t in params.items():
        assert _bits(t.numpy()) == _bits(p.captured[k].numpy())
        assert t.name == k and t.persistable
    assert not params["fc1.weight"].stop_gradient and params["_const_0"].stop_gradient
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run(q, x).numpy(), run(p, x).numpy())


def test_file_layout(tmp_path):
    p = _mlp()
    f = tmp_path / "mlp.fwm"
    save(p, str(f))
    with safe_open(str(f), framework="np") as h:
        meta = h.metadata()
        assert sorted(h.keys()) == ["_const_0", "fc1.bias", "fc1.weight"]
        np.testing.assert_array_equal(h.get_tensor("fc1.bias"), p.captured["fc1.bias"].numpy())
    assert meta["format"] == "fw.model" and meta["version"] == "2"
    assert meta["fw_version"] == fw.core.__version__
    assert meta["program"] == str(p)
    table = json.loads(meta["tensors"])
    assert table["fc1.weight"] == {"label": "fc1.weight", "role": "param", "dtype": "float32",
                                   "shape": [4, 8], "encoding": "native"}
    assert table["_const_0"]["role"] == "const" and table["_const_0"]["shape"] == []
    sums = json.loads(meta["checksum"])
    assert sums["algorithm"] == "sha256" and sorted(sums["tensors"]) == sorted(table)
    assert sums["program"] == checksum.text_digest(meta["program"])
    assert sums["table"] == checksum.text_digest(meta["tensors"])


def _special(dtype):
    d = _dt.convert_dtype(dtype)
    rng = np.random.default_rng(3)
    if d is _dt.bool_:
        return np.array([[True, False, True]])
    if d.kind == _dt._INT:
        info = np.iinfo(d.np)
        return np.array([info.min, info.max, 0, -1 if info.min < 0 else 1], d.np)
    if d.kind == _dt._FLOAT:
        a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.25], np.float32).astype(d.np)
        raw = a.view(np.uint16 if d.itemsize == 2 else np.uint32 if d.itemsize == 4 else
                     np.uint64).copy()
        raw[4] |= 1  # a NaN payload must survive too
        return np.concatenate([raw.view(d.np), rng.standard_normal(5).astype(d.np)])
    re = np.array([0.0, -0.0, np.inf, np.nan, 1.5])
    im = np.array([-0.0, np.nan, -np.inf, 0.0, 2.5])
    out = np.empty(5, d.np)
    out.real, out.imag = re, im
    return out.reshape(5, 1)


@pytest.mark.parametrize("dtype", [d.name for d in _dt.ALL_DTYPES])
def test_every_dtype_round_trips_bit_exactly(dtype, tmp_path):
    vals = [_special(dtype), np.zeros((2, 0), _dt.convert_dtype(dtype).np),
            _special(dtype).reshape(-1)[:1].reshape(())]
    ts = [fw.to_tensor(v) for v in vals]
    for t, v in zip(ts, vals):
        assert t.numpy().dtype == v.dtype
    ts[0].name, ts[0].trainable = "w", dtype not in ("bool", "int8", "uint8", "int16", "int32",
                                                     "int64")
    p = trace(lambda x: (x, *ts), [T([1], "float32")])
    f = tmp_path / f"{dtype}.fwm"
    save(p, f)
    q, params = load(f)
    for label, t in p.captured.items():
        assert _bits(params[label].numpy()) == _bits(t.numpy()), label
    outs = run(q, np.zeros(1, np.float32))
    for o, v in zip(outs[1:], vals):
        assert _bits(o.numpy()) == _bits(v)


def test_complex128_is_stored_as_real_pairs(tmp_path):
    t = fw.to_tensor(np.array([1 + 2j, -0.0 - 3j]))
    p = trace(lambda x: x * t, [T([2], "complex128")])
    save(p, tmp_path / "c.fwm")
    with safe_open(str(tmp_path / "c.fwm"), framework="np") as h:
        raw = h.get_tensor("_const_0")
        table = json.loads(h.metadata()["tensors"])
    assert raw.dtype == np.float64 and raw.shape == (2, 2)
    assert table["_const_0"]["encoding"] == "real_pairs"
    assert table["_const_0"]["dtype"] == "complex128" and table["_const_0"]["shape"] == [2]


def test_reserved_and_odd_labels(tmp_path):
    ts = []
    for label in ("__metadata__", "a.b", 'q"uote', "ünï"):
        t = fw.to_tensor(np.full(2, len(ts), np.float32))
        t.name, t.trainable = label, True
        ts.append(t)
    p = trace(lambda x: sum((x * t for t in ts), x), [T([2], "float32")])
    save(p, tmp_path / "m.fwm")
    q, params = load(tmp_path / "m.fwm")
    assert sorted(params) == sorted(t.name for t in ts)
    assert params["__metadata__"].numpy().tolist() == [0.0, 0.0]


@given(data=st.data())
def test_random_programs_round_trip(data, tmp_path_factory):
    rp = draw_program(data.draw)
    p = rp.trace()
    f = tmp_path_factory.mktemp("rt") / "p.fwm"
    save(p, f)
    q, _ = load(f)
    assert str(q) == str(p)
    a, b = run(p, *rp.inputs_), run(q, *rp.inputs_)
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


# ---------------------------------------------------------------- saving
def test_save_params_argument_and_missing_params(tmp_path):
    p = _mlp()
    other = {k: np.zeros_like(t.numpy()) for k, t in p.captured.items()}
    save(p, tmp_path / "z.fwm", params=other)
    _, params = load(tmp_path / "z.fwm")
    assert all(not t.numpy().any() for t in params.values())
    p.captured.pop("fc1.bias")
    with pytest.raises(InvalidArgumentError, match=r"no value for .*\['fc1.bias'\]"):
        save(p, tmp_path / "m.fwm")
    with pytest.raises(InvalidArgumentError, match=r"\['fc1.weight', 'fc1.bias', '_const_0'\]"):
        save(p, tmp_path / "m.fwm", params={})
    bad = dict(other, **{"fc1.weight": np.zeros((4, 7), np.float32)})
    with pytest.raises(InvalidArgumentError, match=r"param 'fc1.weight' must be f32\[4,8\]"):
        save(p, tmp_path / "m.fwm", params=bad)
    assert not (tmp_path / "m.fwm").exists()


def test_a_failed_write_leaves_the_previous_file(tmp_path, monkeypatch):
    f = tmp_path / "m.fwm"
    p = _mlp()
    save(p, f)
    before = f.read_bytes()

    def crash(tensors, path, metadata):
        with open(path, "wb") as h:
            h.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{\"partial")  # half a file
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(ser, "_write_file", crash)
    p.captured["fc1.bias"] = fw.to_tensor(np.zeros(8, np.float32))
    with pytest.raises(OSError, match="simulated"):
        save(p, f)
    assert f.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.fwm"]  # no temporary file left behind
    monkeypatch.undo()

    def no_rename(src, dst):
        raise OSError("rename failed (simulated)")

    monkeypatch.setattr(ser.os, "replace", no_rename)
    with pytest.raises(OSError, match="rename failed"):
        save(p, f)
    assert f.read_bytes() == before and os.listdir(tmp_path) == ["m.fwm"]
    monkeypatch.undo()
    save(p, f)
    _, params = load(f)
    assert not params["fc1.bias"].numpy().any()


# ---------------------------------------------------------------- malformed files
def _rewrite(src, dst, meta=None, tensors=None, drop=()):
    """A copy of model file `src` with metadata/tensors changed, its checksum
    recomputed (so the checks behind the checksum are what is tested)."""
    with safe_open(str(src), framework="np") as h:
        m = dict(h.metadata())
        ts = {k: h.get_tensor(k) for k in h.keys() if k not in drop}
    m.update(meta or {})
    m = {k: v for k, v in m.items() if v is not None}
    ts.update(tensors or {})
    if "checksum" not in (meta or {}) and isinstance(m.get("program"), str):
        m["checksum"] = ser._checksums(m["program"], m.get("tensors", ""), ts)
    save_file(ts, str(dst), metadata=m)
    return dst


def _expect_format_error(path, pattern):
    with pytest.raises(ModelFormatError) as info:
        load(path)
    msg = str(info.value)
    assert str(path) in msg
    assert isinstance(info.value, InvalidArgumentError)
    assert pattern in msg, msg
    return msg


def test_malformed_files(tmp_path):
    good = tmp_path / "good.fwm"
    save(_mlp(), good)
    data = good.read_bytes()
    cases = []

    def case(name, pattern, **kw):
        cases.append((_rewrite(good, tmp_path / name, **kw), pattern))

    (tmp_path / "trunc").write_bytes(data[: len(data) // 2])
    cases.append((tmp_path / "trunc", "damaged"))
    (tmp_path / "trunc1").write_bytes(data[:-1])
    cases.append((tmp_path / "trunc1", "truncated"))
    (tmp_path / "short").write_bytes(data[:5])
    cases.append((tmp_path / "short", "damaged"))
    (tmp_path / "empty").write_bytes(b"")
    cases.append((tmp_path / "empty", "damaged"))
    (tmp_path / "header").write_bytes(b"\xff" * 8 + data[8:])
    cases.append((tmp_path / "header", "damaged"))
    (tmp_path / "json").write_bytes(data[:8] + b"[" + data[9:])
    cases.append((tmp_path / "json", "damaged"))
    save_file({"a": np.zeros(2)}, str(tmp_path / "plain"))
    cases.append((tmp_path / "plain", "not an fw model file"))
    case("format", "not an fw model file", meta={"format": "onnx"})
    case("version", "version '3' is not supported", meta={"version": "3"})
    case("noprog", "no 'program'", meta={"program": None})
    case("notext", "does not parse", meta={"program": "__import__('os').system('echo x')"})
    case("badprog", "does not parse", meta={"program": "program { block 0 () { return %x } }"})
    prog = str(_mlp())
    case("invalid", "not valid", meta={"program": prog.replace("tanh(%1) : f32[-1,8]",
                                                               "tanh(%1) : f32[-1,9]")})
    case("table", "'tensors' is not JSON", meta={"tensors": "{"})
    case("table2", "malformed", meta={"tensors": json.dumps({"fc1.bias": {"label": 3}})})
    case("wrongshape", "the program needs f32[8]",
         tensors={"fc1.bias": np.zeros(9, np.float32)},
         meta={"tensors": json.dumps({**json.loads(_meta(good)["tensors"]), "fc1.bias": {
             "label": "fc1.bias", "role": "param", "dtype": "float32", "shape": [9],
             "encoding": "native"}})})
    case("wrongdtype", "is float64[8]", tensors={"fc1.bias": np.zeros(8, np.float64)})
    case("missing", "do not match the metadata table", drop=("fc1.bias",))
    case("extra", "do not match the metadata table", tensors={"junk": np.zeros(1)})
    case("nolabel", "no tensor for the program's param 'fc1.bias'", drop=("fc1.bias",),
         meta={"tensors": json.dumps({k: v for k, v in json.loads(_meta(good)["tensors"]).items()
                                      if k != "fc1.bias"})})
    for path, pattern in cases:
        _expect_format_error(path, pattern)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.fwm")


def _meta(path):
    with safe_open(str(path), framework="np") as h:
        return h.metadata()


@pytest.fixture(scope="module")
def valid_bytes(tmp_path_factory):
    f = tmp_path_factory.mktemp("fuzz") / "m.fwm"
    save(_mlp(), f)
    return f.read_bytes()


@settings(deadline=datetime.timedelta(seconds=10))
@given(data=st.data())
def test_fuzzed_files_only_raise_model_format_error(valid_bytes, data, tmp_path_factory):
    kind = data.draw(st.sampled_from(["flip", "truncate", "random", "splice"]))
    b = bytearray(valid_bytes)
    if kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(b) - 1))
            b[i] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "truncate":
        b = b[:data.draw(st.integers(0, len(b) - 1))]
    elif kind == "random":
        b = bytearray(data.draw(st.binary(max_size=256)))
    else:  # damage the header's JSON text (where the program lives)
        i = data.draw(st.integers(8, min(len(b) - 1, 8 + 2000)))
        b[i:i + 1] = data.draw(st.binary(min_size=0, max_size=3))
    f = tmp_path_factory.mktemp("f") / "m.fwm"
    f.write_bytes(bytes(b))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ser.UnverifiedModelWarning)
            prog, params = load(f)
    except ModelFormatError as e:
        assert str(f) in str(e)
        return
    assert prog.captured is params  # the damage left a loadable model...
    if prog.meta["format_version"] == ser.VERSION:  # ...and, checksummed, the same model
        want, wparams = load_valid(valid_bytes, tmp_path_factory)
        assert str(prog) == str(want)
        for k, t in wparams.items():
            assert _bits(params[k].numpy()) == _bits(t.numpy()), k


def load_valid(valid_bytes, tmp_path_factory):
    f = tmp_path_factory.mktemp("v") / "m.fwm"
    f.write_bytes(valid_bytes)
    return load(f)


@settings(deadline=datetime.timedelta(seconds=10))
@given(data=st.data())
def test_fuzzed_programs_behind_a_valid_checksum(valid_bytes, data, tmp_path_factory):
    # the checksum stops damaged text before the parser: re-sign it so the parser, the
    # verifier and the later checks are what this fuzzes
    d = tmp_path_factory.mktemp("p")
    src = d / "src.fwm"
    src.write_bytes(valid_bytes)
    text = _meta(src)["program"]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        k = data.draw(st.integers(0, 3))
        text = text[:i] + data.draw(st.text("%(){}[],:=\"-0123456789abf \n", max_size=3)) + \
            text[i + k:]
    f = _rewrite(src, d / "m.fwm", meta={"program": text})
    try:
        prog, params = load(f)
    except ModelFormatError as e:
        assert str(f) in str(e)
        return
    assert prog.captured is params  # a loaded program is a valid one, and prints back
    fw.core.ir.verifier.verify(prog, strict_types=True)
    assert str(fw.core.ir.parse(str(prog))) == str(prog)
