"""fw.nn.safe_pickle and fw.load on Paddle-style pickles: plain name -> array dicts load,
anything that would import or call something else is refused by name, and no code from
a file ever runs (a sentinel file is never created). Files written by real Paddle are
checked in fw-hub's tests (tests/test_checkpoints.py, committed fixtures)."""

import io
import os
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
from fw.nn import safe_pickle
from fw.nn.safe_pickle import UnsafePickleError
from fw.nn.serialization import CheckpointError


def _paddle_like(protocol=4):
    # the layout paddle.save writes for a state dict (see paddle/framework/io.py)
    sd = {"0.weight": np.arange(12, dtype=np.float32).reshape(3, 4),
          "0.bias": np.array([1.5, -2.0, 0.25], np.float32),
          "1._mean": np.zeros(3, np.float64),
          "steps": np.array(7, np.int64)}
    sd["StructuredToParameterName@@"] = {k: f"p_{k}" for k in list(sd)}
    return sd, pickle.dumps(sd, protocol=protocol)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_fw_load_reads_paddle_state_dict_pickles(tmp_path, protocol):
    sd, data = _paddle_like(protocol)
    p = tmp_path / "m.pdparams"
    p.write_bytes(data)
    out = fw.load(str(p))
    assert list(out) == ["0.weight", "0.bias", "1._mean", "steps"]
    for k in out:
        assert isinstance(out[k], fw.Tensor)
        np.testing.assert_array_equal(out[k].numpy(), sd[k])
        assert out[k].numpy().dtype == sd[k].dtype
    raw = fw.load(str(p), return_numpy=True, keep_name_table=True)
    assert isinstance(raw["0.weight"], np.ndarray)
    assert raw["StructuredToParameterName@@"]["0.bias"] == "p_0.bias"


def test_fw_load_merges_paddle_big_param_slices(tmp_path):
    # paddle.save(protocol<4) splits arrays over 1 GiB into "<key>@@.<i>" slices
    full = np.arange(10, dtype=np.float32).reshape(2, 5)
    obj = {"w@@.0": full.reshape(-1)[:6], "w@@.1": full.reshape(-1)[6:],
           "UnpackBigParamInfor@@": {"w": {"OriginShape": (2, 5), "slices": ["w@@.0", "w@@.1"]}}}
    p = tmp_path / "big.pdparams"
    p.write_bytes(pickle.dumps(obj, protocol=2))
    out = fw.load(str(p), return_numpy=True)
    assert list(out) == ["w"]
    np.testing.assert_array_equal(out["w"], full)


def test_nested_plain_values_and_tensor_pairs(tmp_path):
    obj = {"epoch": 3, "lr": {"last_lr": 0.1}, "t": ("generated_tensor_0", np.ones(2)),
           "tags": ["a", "b"]}
    p = tmp_path / "n.pdopt"
    p.write_bytes(pickle.dumps(obj, protocol=4))
    out = fw.load(str(p))
    assert out["epoch"] == 3 and out["lr"] == {"last_lr": 0.1} and out["tags"] == ["a", "b"]
    assert isinstance(out["t"], fw.Tensor) and out["t"].numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("obj", [[np.ones(2)], np.ones(2), "text", {1: np.ones(2)}])
def test_non_state_dict_pickles_refused(tmp_path, obj):
    p = tmp_path / "x.pdparams"
    p.write_bytes(pickle.dumps(obj, protocol=4))
    with pytest.raises(CheckpointError, match="not a Paddle state dict"):
        fw.load(str(p))


def test_object_arrays_refused(tmp_path):
    p = tmp_path / "o.pdparams"
    p.write_bytes(pickle.dumps({"w": np.array([1, "x"], dtype=object)}, protocol=4))
    with pytest.raises(UnsafePickleError, match="dtype object"):
        fw.load(str(p))


class _Fake:
    """Stands for the global module.name in a pickle written by `_HostilePickler`; the
    real object is never imported by the test."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle requires a callable; the test never calls it
        raise AssertionError("called")


class _Call:
    def __init__(self, module, name, args):
        self.fake, self.args = _Fake(module, name), args

    def __reduce__(self):
        return (self.fake, self.args)


class _HostilePickler(pickle._Pickler):
    """Python's pickler, writing `_Fake` globals as plain GLOBAL/STACK_GLOBAL opcodes
    (what an attacker's file holds) without looking the name up."""

    def save_fake(self, obj):
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Fake] = save_fake


def _dumps_with_global(module, name, args, protocol=4, nest=lambda x: x):
    buf = io.BytesIO()
    _HostilePickler(buf, protocol=protocol).dump(nest(_Call(module, name, args)))
    return buf.getvalue()


HOSTILE = [("os", "system"), ("posix", "system"), ("builtins", "eval"), ("builtins", "exec"),
           ("builtins", "getattr"), ("builtins", "__import__"), ("builtins", "open"),
           ("subprocess", "Popen"), ("numpy", "load"), ("numpy", "frombuffer"),
           ("numpy.lib.npyio", "load"), ("shutil", "rmtree"), ("pickle", "loads"),
           ("torch", "load"), ("copyreg", "_reconstructor"), ("builtins", "bytearray"),
           ("_codecs", "decode"), ("collections", "defaultdict"), ("nt", "system")]


@pytest.mark.parametrize("module,name", HOSTILE)
def test_hostile_globals_refused_by_name(tmp_path, module, name):
    sentinel = tmp_path / "pwned"
    data = _dumps_with_global(module, name, (f"touch {sentinel}",))
    with pytest.raises(UnsafePickleError, match=f"global {module}.{name}"):
        safe_pickle.loads(data)
    p = tmp_path / "evil.pdparams"
    p.write_bytes(data)
    with pytest.raises(CheckpointError, match=f"{module}.{name}") as e:
        fw.load(str(p))
    assert str(p) in str(e.value)
    assert not sentinel.exists()


def test_real_reduce_payload_never_runs(tmp_path):
    sentinel = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {sentinel}",))

    for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps({"w": np.ones(2), "x": [{"deep": Evil()}]}, protocol=proto)
        with pytest.raises(UnsafePickleError, match="system"):
            safe_pickle.loads(data)
    assert not sentinel.exists()


def test_codecs_encode_only_latin1():
    ok = _dumps_with_global("_codecs", "encode", ("abc", "latin1"))
    assert safe_pickle.loads(ok) == b"abc"
    for args in [("abc", "rot13"), ("abc", "hex"), (b"abc", "latin1")]:
        with pytest.raises(UnsafePickleError, match="_codecs.encode"):
            safe_pickle.loads(_dumps_with_global("_codecs", "encode", args))


def test_numpy_reconstruct_restricted():
    from fw.nn.safe_pickle import ALLOWED_GLOBALS

    assert ("numpy.core.multiarray", "_reconstruct") in ALLOWED_GLOBALS
    big = _dumps_with_global("numpy.core.multiarray", "_reconstruct",
                             (np.ndarray, (1 << 40,), b"b"))
    with pytest.raises(UnsafePickleError, match="initial shape"):
        safe_pickle.loads(big)
    sub = _dumps_with_global("numpy.core.multiarray", "_reconstruct", (np.matrix, (0,), b"b"))
    with pytest.raises(UnsafePickleError):  # np.matrix itself is not an allowed global
        safe_pickle.loads(sub)


def test_persistent_ids_refused():
    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return "storage-0" if isinstance(obj, bytes) else None

    buf = io.BytesIO()
    P(buf, protocol=2).dump({"w": b"xx"})
    with pytest.raises(UnsafePickleError, match="persistent id"):
        safe_pickle.loads(buf.getvalue())


@pytest.mark.parametrize("cut", [1, 5, 20, 60, -5, -1])
def test_truncated_pickles(tmp_path, cut):
    _, data = _paddle_like(4)
    p = tmp_path / "t.pdparams"
    p.write_bytes(data[:cut])
    with pytest.raises(CheckpointError):
        fw.load(str(p))


_NEST = st.recursive(
    st.just(lambda x: x),
    lambda inner: st.one_of(
        st.builds(lambda f, k: (lambda x, f=f, k=k: {k: f(x), "ok": np.ones(1)}), inner,
                  st.text(min_size=1, max_size=4)),
        st.builds(lambda f: (lambda x, f=f: [np.zeros(2), f(x)]), inner),
        st.builds(lambda f: (lambda x, f=f: OrderedDict(a=(1, f(x)))), inner)),
    max_leaves=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(HOSTILE), nest=_NEST, protocol=st.integers(0, 5))
def test_fuzz_hostile_nested_payloads(tmp_path, target, nest, protocol):
    module, name = target
    sentinel = tmp_path / "pwned"
    data = _dumps_with_global(module, name, (f"touch {sentinel}",), protocol=protocol,
                              nest=nest)
    with pytest.raises(UnsafePickleError, match=f"{module}.{name}"):
        safe_pickle.loads(data)
    assert not sentinel.exists()


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_fuzz_corrupted_state_dict_pickles(data):
    _, raw = _paddle_like(data.draw(st.sampled_from([2, 4])))
    buf = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    try:
        out = safe_pickle.loads(bytes(buf))
    except UnsafePickleError:
        return
    safe_pickle.check_plain(out)  # whatever loads is plain data



def test_extension_registry_opcodes_refused(tmp_path):
    # CPython serves an extension code it resolved once from a process-wide cache,
    # bypassing find_class: such opcodes are refused before unpickling starts
    import copyreg

    sentinel = tmp_path / "pwned"
    copyreg.add_extension("os", "system", 241)
    try:
        pickle.loads(b"\x80\x02\x82\xf1.")  # resolves (and caches) code 241
        cmd = f"touch {sentinel}".encode()
        data = b"\x80\x02\x82\xf1X" + len(cmd).to_bytes(4, "little") + cmd + b"\x85R."
        with pytest.raises(UnsafePickleError, match="EXT1"):
            safe_pickle.loads(data)
    finally:
        copyreg.remove_extension("os", "system", 241)
        copyreg.clear_extension_cache()
    assert not sentinel.exists()


@pytest.mark.parametrize("n", [640, 896, 1152, 1408])
def test_safetensors_whose_length_starts_like_a_pickle_is_not_one(tmp_path, n):
    # a header of 640 bytes has the length 80 02 00 .. (little-endian), the same two
    # bytes as a protocol-2 pickle's PROTO opcode: fw.load must still read safetensors
    import json
    import struct

    a = np.arange(6, dtype=np.float32)
    header = {"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, a.nbytes]}}
    raw = json.dumps(header).encode()
    raw = raw + b" " * (n - len(raw))
    p = tmp_path / "w.safetensors"
    p.write_bytes(struct.pack("<Q", n) + raw + a.tobytes())
    assert p.read_bytes()[:1] == b"\x80" and 2 <= p.read_bytes()[1] <= 5
    np.testing.assert_array_equal(fw.load(str(p))["w"].numpy(), a)
