"""Request decoding and answer encoding of fw.inference.serving (no server): the
conversion rules of JSON numbers, the checks of names, shapes and dtypes with
their messages, Paddle Serving's feed/fetch body, .npy and safetensors."""

import io
import json

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from fw.inference.serving.codec import JSON, NPY, SAFETENSORS, answer_type, decode, encode  # noqa: E402
from fw.inference.serving.errors import RequestError  # noqa: E402
from fw.inference.serving.model import ModelSpec, TensorSpec, model_name  # noqa: E402

F32 = np.dtype("float32")
SPEC = ModelSpec("m", (TensorSpec("x", (-1, 3), F32), TensorSpec("ids", (-1, 2),
                                                                  np.dtype("int64"))),
                 (TensorSpec("output_0", (-1, 4), F32), TensorSpec("output_1", (-1,), F32)))
ONE = ModelSpec("one", (TensorSpec("x", (-1, 3), F32),), (TensorSpec("output_0", (-1, 2), F32),))


def body(doc) -> bytes:
    return json.dumps(doc).encode()


def bad(raw, spec=SPEC, ctype="application/json", query=None, status=400) -> str:
    with pytest.raises(RequestError) as e:
        decode(raw, ctype, spec, query or {})
    assert e.value.status == status, e.value.message
    return e.value.message


def npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


# ---------------------------------------------------------------- JSON
def test_json_inputs_become_arrays_of_the_input_dtypes_in_model_order():
    d = decode(body({"inputs": {"ids": [[1, 2]], "x": [[1, 2.5, 3]]}}), JSON, SPEC, {})
    assert [a.dtype for a in d.arrays] == [F32, np.dtype("int64")]
    assert d.arrays[0].tolist() == [[1.0, 2.5, 3.0]] and d.arrays[1].tolist() == [[1, 2]]
    assert d.fetch == ["output_0", "output_1"] and d.protocol == "v1"


def test_json_ints_into_a_float_input_are_fine_floats_into_an_int_input_are_not():
    d = decode(body({"inputs": {"x": [[1, 2, 3]], "ids": [[1, 2]]}}), JSON, SPEC, {})
    assert d.arrays[0].dtype == F32
    msg = bad(body({"inputs": {"x": [[1, 2, 3]], "ids": [[1, 2.5]]}}))
    assert "input 'ids' expects int64 integers" in msg and "2.5" in msg
    # a whole number written as a float is a float too
    assert "input 'ids'" in bad(body({"inputs": {"x": [[1, 2, 3]], "ids": [[1.0, 2]]}}))


@pytest.mark.parametrize("value, words", [
    ([[1, 2, 3], [4, 5]], "ids[0] has 3 elements, ids[1] has 2"),  # ragged
    ([[1, 2, 3], 4], "mixes lists and numbers"),
    ([[True, False]], "got booleans"),
    ([["a", "b"]], "got strings"),
    ([[1, None]], "nulls"),
    ([[2 ** 70, 1]], "out-of-range integers"),
    ([[2 ** 63, 1]], "in [-9223372036854775808, 9223372036854775807]"),
])
def test_bad_json_values_of_an_int_input_name_the_input(value, words):
    msg = bad(body({"inputs": {"x": [[1, 2, 3]], "ids": value}}))
    assert "'ids'" in msg and words in msg, msg


def test_json_float_beyond_float32_and_nan_are_refused():
    msg = bad(body({"inputs": {"x": [[1e39, 0, 0]], "ids": [[1, 2]]}}))
    assert "input 'x' expects float32 numbers" in msg and "range" in msg
    msg = bad(b'{"inputs": {"x": [[NaN, 0, 0]], "ids": [[1, 2]]}}')
    assert "NaN is not a JSON number" in msg
    assert "Infinity" in bad(b'{"inputs": {"x": [[Infinity, 0, 0]], "ids": [[1, 2]]}}')


def test_wrong_names_and_shapes_name_the_input_with_expected_and_got():
    msg = bad(body({"inputs": {"x": [[1, 2, 3]], "idz": [[1, 2]]}}))
    assert "no input(s) ['idz']" in msg and "['x', 'ids']" in msg
    msg = bad(body({"inputs": {"x": [[1, 2, 3]]}}))
    assert "lacks input(s) ['ids']" in msg
    msg = bad(body({"inputs": {"x": [[1, 2]], "ids": [[1, 2]]}}))
    assert msg == "input 'x' expects shape [-1, 3] (-1: any size), got [1, 2]"
    msg = bad(body({"inputs": {"x": [1, 2, 3], "ids": [[1, 2]]}}))
    assert "expects shape [-1, 3]" in msg and "got [3]" in msg


@pytest.mark.parametrize("raw, words", [
    (b"{not json", "malformed JSON body"),
    (b"[1, 2]", "got a list"),
    (b'{"inputs": [[1, 2, 3]]}', "'inputs' maps input names"),
    (b'{"inputz": {}}', "no 'inputs'"),
    (b'{"inputs": {}, "extra": 1}', "unknown key(s) ['extra']"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"", "malformed JSON body"),
])
def test_malformed_json_bodies_are_400(raw, words):
    assert words in bad(raw)


def test_outputs_key_selects_outputs():
    d = decode(body({"inputs": {"x": [[1, 2, 3]], "ids": [[1, 2]]}, "outputs": ["output_1"]}),
               JSON, SPEC, {})
    assert d.fetch == ["output_1"]
    msg = bad(body({"inputs": {"x": [[1, 2, 3]], "ids": [[1, 2]]}, "outputs": ["nope"]}))
    assert "no output(s) ['nope']" in msg and "['output_0', 'output_1']" in msg


# ---------------------------------------------------------------- Paddle Serving's feed/fetch
def test_feed_samples_are_stacked_into_a_batch_and_fetch_selects_outputs():
    d = decode(body({"feed": [{"x": [1, 2, 3], "ids": [5, 6]}, {"x": [4, 5, 6], "ids": [7, 8]}],
                     "fetch": ["output_1"]}), JSON, SPEC, {})
    assert d.arrays[0].tolist() == [[1, 2, 3], [4, 5, 6]]
    assert d.arrays[1].tolist() == [[5, 6], [7, 8]]
    assert d.fetch == ["output_1"] and d.protocol == "paddle"
    # an entry with the input's full rank is a batch already
    d = decode(body({"feed": [{"x": [[1, 2, 3], [4, 5, 6]], "ids": [[5, 6], [7, 8]]}],
                     "fetch": ["output_0"]}), JSON, SPEC, {})
    assert d.arrays[0].shape == (2, 3)


def test_bad_feed_names_the_entry_and_the_input():
    msg = bad(body({"feed": [{"x": [1, 2, 3], "ids": [5, 6]}, {"x": [1, 2], "ids": [5, 6]}],
                    "fetch": ["output_0"]}))
    assert msg.startswith("feed[1]: input 'x' expects shape [-1, 3]")
    assert "feed[0] lacks input(s) ['ids']" in bad(body({"feed": [{"x": [1, 2, 3]}]}))
    assert "'fetch' is a non-empty list" in bad(body({"feed": [{"x": [1, 2, 3], "ids": [5, 6]}],
                                                      "fetch": []}))


# ---------------------------------------------------------------- binary bodies
def test_npy_body_for_a_one_input_model():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = decode(npy(a), NPY, ONE, {})
    assert np.array_equal(d.arrays[0], a) and d.arrays[0].dtype == F32 and d.protocol == NPY
    # sniffed by its magic whatever the content type says
    assert decode(npy(a), "application/octet-stream", ONE, {}).protocol == NPY
    # a lossless dtype is converted; a lossy one is refused, naming both
    assert decode(npy(a.astype(np.int8)), NPY, ONE, {}).arrays[0].dtype == F32
    msg = bad(npy(a.astype(np.float64)), ONE, NPY)
    assert "input 'x' expects float32 data, got float64" in msg
    assert "expects shape [-1, 3] (-1: any size), got [3, 2]" in bad(npy(a.reshape(3, 2)), ONE,
                                                                      NPY)


def test_npy_body_problems_are_400():
    a = np.zeros((2, 3), np.float32)
    assert "malformed .npy body for input 'x'" in bad(npy(a)[:-5], ONE, NPY)  # truncated
    assert "malformed .npy body" in bad(npy(np.array([object()], dtype=object)), ONE, NPY)
    assert "malformed .npy body" in bad(b"\x93NUMPY\x01\x00garbage", ONE, NPY)
    assert "carries one array" in bad(npy(a), SPEC, NPY)
    assert "no input 'y'" in bad(npy(a), ONE, NPY, query={"input": "y"})


def test_safetensors_body_and_its_problems():
    from safetensors.numpy import save

    x, ids = np.ones((2, 3), np.float32), np.ones((2, 2), np.int64)
    d = decode(save({"x": x, "ids": ids}), SAFETENSORS, SPEC, {"output": "output_1"})
    assert d.arrays[1].dtype == np.int64 and d.fetch == ["output_1"]
    assert "lacks input(s) ['ids']" in bad(save({"x": x}), ctype=SAFETENSORS)
    assert "expects int64 data, got float32" in bad(save({"x": x, "ids": x[:, :2].copy()}),
                                                    ctype=SAFETENSORS)
    assert "malformed safetensors body" in bad(b"\x10\x00\x00\x00\x00\x00\x00\x00{bad",
                                               ctype=SAFETENSORS)
    assert "malformed safetensors body" in bad(b"", ctype=SAFETENSORS)


# ---------------------------------------------------------------- answers
def test_answers_in_each_format():
    y = np.array([[0.1, 0.2]], np.float32)
    doc = json.loads(encode({"output_0": y}, JSON, "v1", "m"))
    assert np.array_equal(np.array(doc["outputs"]["output_0"], np.float32), y)  # exact
    assert list(json.loads(encode({"output_0": y}, JSON, "paddle", "m"))) == ["result"]
    assert np.array_equal(np.load(io.BytesIO(encode({"output_0": y}, NPY, NPY, "m"))), y)
    from safetensors.numpy import load

    both = load(encode({"a": y, "b": y * 2}, SAFETENSORS, SAFETENSORS, "m"))
    assert sorted(both) == ["a", "b"] and np.array_equal(both["b"], y * 2)
    with pytest.raises(RequestError, match="an .npy answer holds one array"):
        encode({"a": y, "b": y}, NPY, NPY, "m")
    with pytest.raises(RequestError, match="holds NaN or Inf") as e:
        encode({"a": np.array([np.nan], np.float32)}, JSON, "v1", "m")
    assert e.value.status == 500


def test_answer_type_follows_accept_then_the_request():
    assert answer_type("", "v1") == JSON and answer_type("*/*", NPY) == NPY
    assert answer_type("application/json", NPY) == JSON
    assert answer_type("application/x-safetensors", "v1") == SAFETENSORS


def test_model_names_default_to_the_file_stem_and_must_fit_in_a_url(tmp_path):
    assert model_name(None, "a/b/lenet_digits.fwmodel") == "lenet_digits"
    assert model_name("mine", object()) == "mine"
    with pytest.raises(ValueError, match="does not fit in a URL"):
        model_name("a/b:c", "x.fwmodel")
    with pytest.raises(ValueError, match="needs a name"):
        model_name(None, object())
