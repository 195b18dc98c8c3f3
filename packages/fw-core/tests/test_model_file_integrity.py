"""Model files: integrity (checksums), bounds (LoadLimits), a lying result type,
and purity (state updates refused or stripped when loading for inference).
docs/reliability.md, "Model files: integrity and purity", cites these tests."""

import hashlib
import json
import logging
import struct

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

import fw
from fw.core import checksum
from fw.core.ir import TensorType, building, load, parse, run, save, trace
from fw.core.ir import serialize as ser
from fw.core.ir.serialize import LoadLimits, ModelFormatError, ModelLimitError
from fw.core.ir.verifier import VerificationError

T = TensorType
X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def _mlp():
    rng = np.random.default_rng(0)
    w1 = fw.to_tensor(rng.standard_normal((4, 8)).astype(np.float32))
    w1.name, w1.trainable = "fc1.weight", True
    b1 = fw.to_tensor(rng.standard_normal(8).astype(np.float32))
    b1.name, b1.trainable = "fc1.bias", True
    return trace(lambda x: fw.matmul(x, w1).add(b1).tanh(), [T([-1, 4], "float32")], ["x"])


@pytest.fixture
def good(tmp_path):
    p = _mlp()
    f = tmp_path / "good.fwmodel"
    save(p, f)
    return p, f


def _header(data: bytes):
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), 8 + n


def _tensor_pos(data: bytes, name: str) -> int:
    h, start = _header(data)
    return start + h[name]["data_offsets"][0]


def _copy_with(src, dst, meta=None, resign=True):
    """`src` with its metadata changed (checksum recomputed unless resign=False)."""
    with safe_open(str(src), framework="np") as h:
        m = dict(h.metadata())
        ts = {k: h.get_tensor(k) for k in h.keys()}
    m.update(meta or {})
    m = {k: v for k, v in m.items() if v is not None}
    if resign:
        m["checksum"] = ser._checksums(m["program"], m["tensors"], ts)
    save_file(ts, str(dst), metadata=m)
    return dst


def _error(path, **kw) -> str:
    with pytest.raises(ModelFormatError) as info:
        load(path, **kw)
    msg = str(info.value)
    assert str(path) in msg, msg
    return msg


# ---------------------------------------------------------------- the checksum helper
def test_checksum_helper_covers_name_dtype_shape_and_bytes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = hashlib.sha256(b"w" + b"float32" + b"[2, 3]" + a.tobytes()).hexdigest()
    assert checksum.array_digest("w", a) == want
    assert checksum.array_digest("w", np.asfortranarray(a)) == want  # bytes in C order
    assert checksum.array_digest("v", a) != want
    assert checksum.array_digest("w", a.reshape(3, 2)) != want
    assert checksum.array_digest("w", a.view(np.int32)) != want
    assert checksum.text_digest("abc") == hashlib.sha256(b"abc").hexdigest()
    both = checksum.digest("s", {"w": a})
    assert both == hashlib.sha256(b"s" + b"w" + b"float32" + b"[2, 3]" + a.tobytes()).hexdigest()


# ---------------------------------------------------------------- integrity
def test_a_good_file_loads_and_carries_its_checksums(good):
    p, f = good
    q, params = load(f)
    assert str(q) == str(p) and q.meta["format_version"] == "2"
    np.testing.assert_array_equal(run(q, X).numpy(), run(p, X).numpy())
    with safe_open(str(f), framework="np") as h:
        sums = json.loads(h.metadata()["checksum"])
        for name in h.keys():
            assert sums["tensors"][name] == checksum.array_digest(name, h.get_tensor(name))


@pytest.mark.parametrize("name", ["fc1.weight", "fc1.bias"])
def test_a_flipped_weight_byte_names_the_tensor(good, tmp_path, name):
    _, f = good
    data = bytearray(f.read_bytes())
    data[_tensor_pos(bytes(data), name) + 5] ^= 0x01  # a low mantissa bit: a quiet change
    bad = tmp_path / "bad.fwmodel"
    bad.write_bytes(bytes(data))
    msg = _error(bad)
    assert f"tensor {name!r}" in msg and "does not match its checksum" in msg, msg


def test_a_flipped_program_byte_names_the_program(good, tmp_path):
    p, f = good
    data = bytearray(f.read_bytes())
    i = bytes(data).index(b"tanh(")
    data[i + 3] ^= 0x20  # tanh -> tanH: still JSON, a different program
    bad = tmp_path / "bad.fwmodel"
    bad.write_bytes(bytes(data))
    msg = _error(bad)
    assert "the program does not match its checksum" in msg, msg
    # a change the parser would accept is caught just the same
    data = bytearray(f.read_bytes())
    i = bytes(data).index(b"f32[4,8]")
    data[i + 6] = ord("9")
    bad.write_bytes(bytes(data))
    assert "the program does not match its checksum" in _error(bad)


def test_a_changed_tensor_table_is_caught(good, tmp_path):
    _, f = good
    data = f.read_bytes()
    pat = b'\\"role\\": \\"param\\"'  # (the table is a JSON string inside the JSON header)
    i = data.index(pat)
    bad = tmp_path / "bad.fwmodel"
    bad.write_bytes(data[:i] + pat.replace(b"param", b"const") + data[i + len(pat):])
    assert "the tensor table (metadata 'tensors') does not match its checksum" in _error(bad)


def test_a_truncated_file_says_so(good, tmp_path):
    _, f = good
    data = f.read_bytes()
    _, start = _header(data)
    bad = tmp_path / "bad.fwmodel"
    for cut in (1, 4, len(data) - start):  # inside the last tensor, ..., all the data
        bad.write_bytes(data[:-cut])
        msg = _error(bad)
        assert "truncated" in msg and f"{len(data) - start - cut} follow the header" in msg, msg
    bad.write_bytes(data[:start - 10])  # inside the header
    assert "truncated or damaged" in _error(bad)
    bad.write_bytes(data + b"\0" * 3)  # bytes the header does not account for
    assert "3 bytes follow the tensor data" in _error(bad)


def test_checksum_metadata_must_be_there_and_whole(good, tmp_path):
    _, f = good
    assert "no 'checksum'" in _error(_copy_with(f, tmp_path / "a", {"checksum": None},
                                                resign=False))
    assert "'checksum' is not JSON" in _error(_copy_with(f, tmp_path / "b", {"checksum": "{"},
                                                         resign=False))
    with safe_open(str(f), framework="np") as h:
        sums = json.loads(h.metadata()["checksum"])
    sums["tensors"].pop("fc1.bias")
    msg = _error(_copy_with(f, tmp_path / "c", {"checksum": json.dumps(sums)}, resign=False))
    assert "no checksum for ['fc1.bias']" in msg
    sums["algorithm"] = "md5"
    assert "algorithm 'md5'" in _error(_copy_with(f, tmp_path / "d",
                                                  {"checksum": json.dumps(sums)}, resign=False))


def test_version_1_files_still_load_with_a_warning(good, tmp_path):
    p, f = good
    old = _copy_with(f, tmp_path / "v1.fwmodel", {"version": "1", "checksum": None},
                     resign=False)
    with pytest.warns(ser.UnverifiedModelWarning, match="version 1 has no checksum"):
        q, _ = load(old)
    assert q.meta["format_version"] == "1"
    np.testing.assert_array_equal(run(q, X).numpy(), run(p, X).numpy())
    save(q, tmp_path / "again.fwmodel")  # saving it again writes version 2
    assert load(tmp_path / "again.fwmodel")[0].meta["format_version"] == "2"


# ---------------------------------------------------------------- a lying result type
def test_a_lying_result_type_is_blamed_on_the_file(good, tmp_path):
    _, f = good
    with safe_open(str(f), framework="np") as h:
        text = h.metadata()["program"]
    assert "tanh(%1) : f32[-1,8]" in text
    lie = _copy_with(f, tmp_path / "lie.fwmodel",
                     {"program": text.replace("tanh(%1) : f32[-1,8]", "tanh(%1) : f32[3,8]")})
    msg = _error(lie)
    assert "the program is not valid" in msg and "tanh" in msg
    assert "recorded as f32[3,8] but the operand types give f32[-1,8]" in msg, msg
    # the same text is a valid program for passes, which may refine sizes
    fw.core.ir.verify(parse(text.replace("tanh(%1) : f32[-1,8]", "tanh(%1) : f32[3,8]")))
    # what fw writes always passes (save checks the same)
    with pytest.raises(VerificationError, match=r"recorded as f32\[3,8\]"):
        save(parse(text.replace("tanh(%1) : f32[-1,8]", "tanh(%1) : f32[3,8]")),
             tmp_path / "x.fwmodel", params={})


# ---------------------------------------------------------------- bounds
def _chain(n_ops):
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        for _ in range(n_ops):
            x = fw.tanh(x)
        b.set_outputs([x])
    return b.program


def _nested(depth):
    """`depth` conds nested in each other (blocks at depths 1..depth)."""
    from fw.core.ir.control import cond

    def body(x, d):
        if d == 0:
            return x + 1.0
        return cond(x.sum() > 0, lambda: body(x, d - 1), lambda: x)

    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        b.set_outputs([body(x, depth)])
    return b.program


def test_limits_on_operations_depth_tensors_header_and_value_size(tmp_path):
    f = tmp_path / "chain.fwmodel"
    save(_chain(50), f)
    load(f, limits=LoadLimits(max_ops=50))
    with pytest.raises(ModelLimitError) as info:
        load(f, limits=LoadLimits(max_ops=49))
    e = info.value
    assert e.limit == "max_ops" and str(f) in str(e)
    assert "the number of operations (50) exceeds the limit max_ops=49" in str(e)
    assert "LoadLimits().replace(max_ops=...)" in str(e) and "set_model_limits" in str(e)

    g = tmp_path / "nested.fwmodel"
    save(_nested(3), g)
    load(g, limits=LoadLimits(max_block_depth=3))
    with pytest.raises(ModelLimitError, match=r"nesting depth of blocks \(3\) exceeds the limit "
                                              r"max_block_depth=2"):
        load(g, limits=LoadLimits(max_block_depth=2))

    p = _mlp()  # two tensors
    h = tmp_path / "mlp.fwmodel"
    save(p, h)
    with pytest.raises(ModelLimitError, match=r"number of tensors \(2\) exceeds the limit "
                                              r"max_tensors=1"):
        load(h, limits=LoadLimits(max_tensors=1))
    with pytest.raises(ModelLimitError, match="max_header_bytes=100"):
        load(h, limits=LoadLimits(max_header_bytes=100))
    with pytest.raises(ModelLimitError, match="max_value_bytes=16"):
        load(h, limits=LoadLimits(max_value_bytes=16))  # f32[-1,8]: 32 bytes per row
    load(h, limits=LoadLimits(max_value_bytes=32))
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="positive int"):
        LoadLimits(max_ops=0)
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="has no"):
        LoadLimits().replace(max_opps=1)
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="at most 64"):
        LoadLimits(max_block_depth=65)  # the executor could not compile it


def test_a_hostile_full_op_is_refused_before_it_runs(good, tmp_path):
    _, f = good
    with safe_open(str(f), framework="np") as h:
        text = h.metadata()["program"]
    huge = "%9 = full() {shape=[100000,100000,10], fill_value=0.0, dtype=f32} : " \
           "f32[100000,100000,10]\n    return"
    bomb = _copy_with(f, tmp_path / "bomb.fwmodel", {"program": text.replace("return", huge)})
    with pytest.raises(ModelLimitError) as info:
        load(bomb)
    assert info.value.limit == "max_value_bytes" and "full" in str(info.value)


def test_huge_op_counts_stop_while_parsing(good, tmp_path):
    _, f = good
    with safe_open(str(f), framework="np") as h:
        text = h.metadata()["program"]
    many = "".join(f"%n{i} = tanh(%x) : f32[-1,4]\n" for i in range(20_000)) + "    return"
    big = _copy_with(f, tmp_path / "big.fwmodel", {"program": text.replace("return", many)})
    with pytest.raises(ModelLimitError) as info:
        load(big, limits=LoadLimits(max_ops=1000))
    assert "operations (1001) exceeds max_ops=1000" in str(info.value.__cause__)


# ---------------------------------------------------------------- purity
def _echo_program():
    """y = x + last; last <- x: each run returns the previous caller's input."""
    last = fw.to_tensor(np.zeros(2, np.float32))
    last.name, last.persistable = "last", True
    with building() as b:
        x = b.add_input(T([2], "float32"), "x")
        y = x + last
        b.record_update(last, x * 1.0)
        b.set_outputs([y])
    return b.program


def test_state_updates_are_refused_for_inference(tmp_path):
    f = tmp_path / "echo.fwmodel"
    save(_echo_program(), f)
    q, params = load(f)  # a plain load keeps them (training programs have them)
    assert list(q.updates.labels) == ["last"]
    msg = _error(f, for_inference=True)
    assert "state updates of ['last']" in msg and "strip_updates=True" in msg, msg


def test_state_updates_can_be_stripped_with_a_report(tmp_path, caplog):
    f = tmp_path / "echo.fwmodel"
    save(_echo_program(), f)
    with caplog.at_level(logging.WARNING, logger="fw.core.ir"):
        q, params = load(f, for_inference=True, strip_updates=True)
    assert not q.updates and "update" not in str(q)
    assert q.meta["stripped_updates"] == ["last"]
    assert "multiply" not in str(q)  # the ops only the update used are gone
    rec = [r for r in caplog.records if r.name == "fw.core.ir"]
    assert rec and str(f) in rec[0].getMessage() and "['last']" in rec[0].getMessage()
    a, b = np.array([1.0, 2.0], np.float32), np.array([5.0, 7.0], np.float32)
    np.testing.assert_array_equal(run(q, a).numpy(), a)
    np.testing.assert_array_equal(run(q, b).numpy(), b)  # never the other input
    np.testing.assert_array_equal(params["last"].numpy(), [0.0, 0.0])
