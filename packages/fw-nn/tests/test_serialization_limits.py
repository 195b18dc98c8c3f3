"""fw.load on hostile input (issue 10, items 5-6): only regular files are opened, every
read is bounded by the file's size, parsing depth and tensor ranks are limited, and every
malformed file (forged ones with a recomputed checksum included) raises CheckpointError
naming the file."""

import json
import os
import signal
import struct
from contextlib import contextmanager

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.errors import FwError, InvalidArgumentError
from fw.nn import serialization
from fw.nn.serialization import CheckpointError


@contextmanager
def no_hang(seconds=10):
    """Turn a hang (the bug) into a test failure instead of a stuck test run."""
    def fire(*_):
        raise TimeoutError("fw.load hung")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _split(raw):
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _join(header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def _forge(tmp_path, structure, obj=None):
    """A checkpoint whose structure is `structure` (JSON text), with the checksum
    recomputed, so only the structure's own checks can catch it."""
    p = tmp_path / "ok.pdparams"
    fw.save(obj if obj is not None else {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, p)
    header, data = _split(p.read_bytes())
    arrays = fw.load(p, return_numpy=True)
    entries = {k: arrays[k] if k in arrays else None for k in header if k != "__metadata__"}
    meta = header["__metadata__"]
    meta["fw.structure"] = structure
    meta["fw.checksum"] = serialization._digest(structure, entries)
    f = tmp_path / "forged.pdparams"
    f.write_bytes(_join(header, data))
    return f


def test_checkpoint_error_is_an_fw_error():
    assert issubclass(CheckpointError, InvalidArgumentError)
    assert issubclass(CheckpointError, FwError) and issubclass(CheckpointError, ValueError)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    p = tmp_path / "pipe.pdparams"
    os.mkfifo(p)
    with no_hang(), pytest.raises(CheckpointError, match="FIFO") as e:
        fw.load(p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused_without_reading_it(dev):
    if not os.path.exists(dev):
        pytest.skip(f"no {dev}")
    with no_hang(), pytest.raises(CheckpointError, match="device") as e:
        fw.load(dev)
    assert dev in str(e.value)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="directory"):
        fw.load(tmp_path)


def test_declared_sizes_past_the_end_of_the_file_are_refused_before_reading(tmp_path):
    p = tmp_path / "ok.pdparams"
    fw.save({"w": np.ones(4, np.float32)}, p)
    header, data = _split(p.read_bytes())
    header["w"]["data_offsets"] = [0, 1 << 40]
    header["w"]["shape"] = [1 << 38]
    (tmp_path / "big.pdparams").write_bytes(_join(header, data))
    with pytest.raises(CheckpointError, match="inconsistent with the file"):
        fw.load(tmp_path / "big.pdparams")


def test_a_deep_header_is_refused(tmp_path):
    deep = b"[" * 100_000 + b"]" * 100_000
    p = tmp_path / "deep.pdparams"
    p.write_bytes(struct.pack("<Q", len(deep)) + deep)
    with pytest.raises(CheckpointError, match="nests 100000 levels") as e:
        fw.load(p)
    assert str(p) in str(e.value)


def test_a_deep_structure_with_a_valid_checksum_is_refused(tmp_path):
    f = _forge(tmp_path, '{"__list__":[' * 50_000 + "]}" * 50_000)
    with pytest.raises(CheckpointError, match="structure nests") as e:
        fw.load(f)
    assert str(f) in str(e.value)


@pytest.mark.parametrize("structure", [
    '{"__dict__":5}', '{"__dict__":[[1]]}', '{"__dict__":[[[1,2],3]]}',
    '{"__dict__":[[{"__list__":[]},3]]}', '{"__list__":{"a":1}}', '{"__tuple__":"ab"}',
    '{"__float__":"abc"}', '{"__float__":5}', '{"__tensor__":5}', '{"__tensor__":"nope"}',
    '{"__tensor__":"w","stop_gradient":"yes"}', '{"__tensor__":"w","name":[1]}',
    '{"__npscalar__":"w"}', '{"__ndarray__":["w"]}', '{"what":1}', '[1,2]',
    '{"__dict__":[[{"__float__":"x"},1]]}',
    '{"__dict__":[[{"__tuple__":5},1]]}', '{"__dict__":[[{"x":1},1]]}', "not json",
])
def test_forged_structures_with_a_recomputed_checksum_raise_checkpoint_error(tmp_path, structure):
    f = _forge(tmp_path, structure)
    with pytest.raises(CheckpointError) as e:
        fw.load(f)
    assert str(f) in str(e.value)


@pytest.mark.parametrize("shape,dtype", [([1] * 65, "F32"), ([0, 1 << 70], "F32"),
                                         ([0, 1 << 62, 1 << 62], "U8")])
def test_too_many_or_too_large_dims_are_refused(tmp_path, shape, dtype):
    header = {"t": {"dtype": dtype, "shape": shape,
                    "data_offsets": [0, 4 if 0 not in shape else 0]}}
    p = tmp_path / "dims.safetensors"
    p.write_bytes(_join(header, b"\0" * header["t"]["data_offsets"][1]))
    with pytest.raises(CheckpointError, match="dims") as e:
        fw.load(p)
    assert str(p) in str(e.value)


def test_a_bad_dtype_record_raises_checkpoint_error(tmp_path):
    p = tmp_path / "c.pdparams"
    fw.save({"z": np.ones(2, np.complex128)}, p)
    header, data = _split(p.read_bytes())
    for rec in ("[1]", '{"z":"complex128"', '{"z":"complex128","q":"complex128"}', "5"):
        header["__metadata__"]["fw.dtypes"] = rec
        (tmp_path / "bad.pdparams").write_bytes(_join(header, data))
        with pytest.raises(CheckpointError):
            fw.load(tmp_path / "bad.pdparams")


def test_dropping_the_complex_record_is_caught_by_the_checksum(tmp_path):
    p = tmp_path / "c.pdparams"
    z = np.array([1 + 2j, 3 - 4j])
    fw.save({"z": z}, p)
    header, data = _split(p.read_bytes())
    del header["__metadata__"]["fw.dtypes"]  # would load float64 pairs in its place
    (tmp_path / "bad.pdparams").write_bytes(_join(header, data))
    with pytest.raises(CheckpointError, match="checksum"):
        fw.load(tmp_path / "bad.pdparams")
    # a file written before the record was covered still loads
    header, data = _split(p.read_bytes())
    meta = header["__metadata__"]
    arrays = {"z": np.stack([z.real, z.imag], -1)}
    meta["fw.checksum"] = serialization._digest(meta["fw.structure"], arrays)
    (tmp_path / "old.pdparams").write_bytes(_join(header, data))
    np.testing.assert_array_equal(fw.load(tmp_path / "old.pdparams", return_numpy=True)["z"], z)


def test_a_model_file_points_to_fw_jit_load(tmp_path):
    import fw.jit

    layer = nn.Linear(2, 3)
    fw.jit.save(layer, str(tmp_path / "m"),
                input_spec=[fw.jit.InputSpec([None, 2], "float32")])
    with pytest.raises(CheckpointError, match="fw.jit.load") as e:
        fw.load(tmp_path / "m.fwmodel")
    assert "m.fwmodel" in str(e.value)


def test_save_refuses_what_load_would_refuse_and_writes_nothing(tmp_path):
    obj = 1
    for _ in range(80):
        obj = {"k": obj}
    p = tmp_path / "deep.pdparams"
    with pytest.raises(InvalidArgumentError, match="nests too deeply"):
        fw.save(obj, p)
    assert os.listdir(tmp_path) == []
    very = []
    for _ in range(5000):  # past the interpreter's recursion limit
        very = [very]
    with pytest.raises(InvalidArgumentError, match="nests too deeply"):
        fw.save(very, p)
    shallow = 1
    for _ in range(35):  # 5 JSON levels each
        shallow = {"k": [shallow]}
    fw.save(shallow, p)
    assert fw.load(p) == shallow
