"""The text form: print -> parse -> print is the identity, and malformed text
gives a ParseError with line, column and what was expected."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir import Program, TensorType, parse, run, trace
from fw.core.ir.builder import Builder
from fw.core.ir.control import cond, while_loop
from fw.core.ir.parser import ParseError
from fw.core.ops import OPS
from fw.core.testing.programs import draw_program

F32 = TensorType([-1, 4], "float32")


def _roundtrip(p: Program) -> Program:
    text = str(p)
    q = parse(text)
    assert str(q) == text
    return q


def test_golden_text_with_params_consts_and_control_flow():
    w = fw.to_tensor(np.ones((4, 3), np.float32))
    w.name = "fc.weight"
    w.trainable = True
    k = fw.to_tensor(np.int64(0))

    def f(x):
        h = fw.matmul(x, w).tanh()
        c = cond(h.sum() < 1.0, lambda: h + 1.0, lambda: -h)
        _, out = while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * 0.5), [k, c])
        return out

    p = trace(f, [F32], names=["x"])
    assert str(p) == """\
program {
  block 0 (%x: f32[-1,4], %p0: f32[4,3] param "fc.weight", %c0: i64[] const "_const_0") {
    %0 = matmul(%x, %p0) {transpose_x=false, transpose_y=false} : f32[-1,3]
    %1 = tanh(%0) : f32[-1,3]
    %2 = sum(%1) {axis=none, dtype=none, keepdim=false} : f32[]
    %3 = full() {shape=[], fill_value=1.0, dtype=f32} : f32[]
    %4 = less_than(%2, %3) : bool[]
    %5 = cond(%4) : f32[-1,3] {
      block 1 () {
        %6 = full() {shape=[], fill_value=1.0, dtype=f32} : f32[]
        %7 = add(%1, %6) : f32[-1,3]
        yield %7
      }
      block 2 () {
        %8 = neg(%1) : f32[-1,3]
        yield %8
      }
    }
    %9, %10 = while(%c0, %5) : i64[], f32[-1,3] {
      block 3 (%11: i64[], %12: f32[-1,3]) {
        %13 = full() {shape=[], fill_value=2, dtype=i64} : i64[]
        %14 = less_than(%11, %13) : bool[]
        yield %14
      }
      block 4 (%15: i64[], %16: f32[-1,3]) {
        %17 = full() {shape=[], fill_value=1, dtype=i64} : i64[]
        %18 = add(%15, %17) : i64[]
        %19 = full() {shape=[], fill_value=0.5, dtype=f32} : f32[]
        %20 = multiply(%16, %19) : f32[-1,3]
        yield %18, %20
      }
    }
    return %10
  }
}
"""
    q = _roundtrip(p)
    assert q.captured == {}
    assert [a.role for a in q.block.args] == ["input", "param", "const"]
    assert [a.label for a in q.block.args] == ["x", "fc.weight", "_const_0"]
    assert not q.block.args[1].stop_gradient  # parameters need grad, as traced
    assert not q.block.ops[0].results[0].stop_gradient
    # the parsed program runs once given the values
    q.captured = dict(p.captured)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_array_equal(run(q, x).numpy(), run(p, x).numpy())


def test_none_operands_variadic_and_multiple_results():
    def f(x, y):
        a = fw.clip(x, None, 1.0)
        b = fw.concat([a, y, a], axis=0)
        v, i = fw.topk(b, 2)
        return v, i

    p = trace(f, [TensorType([3], "float32"), TensorType([-1], "float32")])
    text = str(p)
    assert "clip(%arg0, none, %0)" in text
    assert "concat(%1, %arg1, %1) {axis=0}" in text
    assert "%3, %4 = topk(%2)" in text and ": f32[2], i64[2]" in text
    q = _roundtrip(p)
    assert q.block.ops[1].operands[1] is None


def test_cond_with_no_results_and_nested_control_flow():
    def f(x):
        def outer(i, v):
            return i + 1, cond(v.sum() > 0.0, lambda: v * 2.0, lambda: v - 1.0)

        _, out = while_loop(lambda i, v: i < 3, outer, [fw.to_tensor(np.int64(0)), x])
        cond(out.sum() > 0.0, lambda: None, lambda: None)
        return out

    p = trace(f, [TensorType([2], "float64")])
    text = str(p)
    assert "cond(" in text and "block 6 ()" in text
    _roundtrip(p)


ATTR_VALUES = [
    None, True, False, 0, -7, 2**70, -(2**70), 0.0, -0.0, 1.5, 1e-300, 5e-324,
    1.7976931348623157e308,
    float("inf"), float("-inf"), float("nan"), 1e16, 123456789.0, complex(1.5, -0.0),
    complex(float("nan"), float("-inf")), "", "plain", 'quote " and \\ backslash', "tab\tnew\nline",
    "unicode: \u00e9\u4e2d\U0001f600", "\x00\x1f", (), (1, 2, 3), (1.0, -2, None, "a"),
    ((1, (2, ())), [3]), *_dt.ALL_DTYPES,
]


@pytest.mark.parametrize("value", ATTR_VALUES, ids=lambda v: repr(v)[:30])
def test_every_attribute_form_round_trips(value):
    # attribute text form: exact values of exact Python types (1 and 1.0 and True differ)
    from fw.core.ir.builder import _freeze

    b = Builder()
    with b:
        x = b.add_input(TensorType([2], "float32"), "x")
        op = b.append_op(OPS["assign"], [x], {"extra": _freeze(value)}, [x.type])
        b.program.block.outputs = [op.results[0]]
    q = _roundtrip(b.program)
    got = q.block.ops[0].attrs["extra"]

    def same(a, e):
        if isinstance(e, (list, tuple)):
            return isinstance(a, tuple) and len(a) == len(e) and all(map(same, a, e))
        if isinstance(e, float) and math.isnan(e):
            return isinstance(a, float) and math.isnan(a)
        if isinstance(e, complex):
            return isinstance(a, complex) and same(a.real, e.real) and same(a.imag, e.imag)
        if isinstance(e, float):
            return type(a) is float and a == e and math.copysign(1, a) == math.copysign(1, e)
        return type(a) is type(e) and a == e

    assert same(got, value), (got, value)


@pytest.mark.parametrize("labels", [
    ["x", "y"], ["arg1", "p0"], ["c0", None], ["x", "x"], ["in.put", "0"], [None, "ü"],
    ['a "quoted" name', "_ok"],
])
def test_input_labels_round_trip_exactly(labels):
    p = trace(lambda a, b: a + b, [TensorType([2], "float32")] * 2, names=labels)
    q = _roundtrip(p)
    assert [a.label for a in q.inputs()] == labels
    assert len({a for a in str(p).split("(")[1].split(")")[0].split(", ")}) == 2


@pytest.mark.parametrize("label", ["fc.weight", 'we"ird\\label', "ünï", "__metadata__", " "])
def test_param_labels_round_trip(label):
    w = fw.to_tensor(np.ones((2,), np.float32))
    w.name = label
    w.trainable = True
    p = trace(lambda x: x * w, [TensorType([2], "float32")])
    q = _roundtrip(p)
    assert q.parameters()[0].label == label


@given(st.data())
def test_random_programs_round_trip(data):
    rp = draw_program(data.draw)
    p = rp.trace()
    q = _roundtrip(p)
    assert str(q.clone()) == str(p)


BAD = [
    ("", 1, 1, "expected 'program'"),
    ("program", 1, 8, "expected '{' after 'program'"),
    ("program {\n  block 0 () {\n    return %x\n  }\n}", 3, 12, "undefined value %x"),
    ("program { block 0 (%x: f33[]) { return %x } }", 1, 24, "unknown dtype 'f33'"),
    ("program { block 0 (%x: f32[-2]) { return %x } }", 1, 28, "integer >= -1"),
    ("program { block 0 (%x: f32[1.5]) { return %x } }", 1, 28, "integer >= -1"),
    ("program { block 0 (%x: f32[]) {\n  %1 = nosuchop(%x) : f32[]\n  return %1 } }", 2, 8,
     "unknown op 'nosuchop'"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) return %1 } }", 1, 46,
     "names 1 results but gives 0 result types"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) : f32[] %1 = neg(%x) : f32[] return %1 } }",
     1, 54, "defined twice"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) {a=foo} : f32[] return %1 } }", 1, 49,
     "expected an attribute value"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) {a=1, a=2} : f32[] return %1 } }", 1, 52,
     "given twice"),
    ('program { block 0 (%x: f32[]) { %1 = neg(%x) {a="open} : f32[] return %1 } }', 1, 49,
     "unterminated string"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) {a=complex(1, none)} : f32[] return %1 } }",
     1, 0, "real number"),
    ("program { block 0 (%x: f32[]) { yield %x } }", 1, 33, "expected 'return'"),
    ("program { block 0 (%x: f32[]) { return %x } } trailing", 1, 47, "end of the text"),
    ("program { block 0 (%x: f32[] param \"a\") { %1 = cond(%x) : f32[] {\n block 1 (%y: f32[] "
     "const \"b\") { yield %y } } return %1 } }", 2, 21, "only block 0"),
    ("program { block 0 (%x: f32[] param \"a\", %y: f32[] const \"a\") { return %x } }", 1, 51,
     "used twice"),
    ("program { block 0 (%x: f32[]) {\n %1 = cond(%x) : f32[] {\n block 1 () { %2 = neg(%x) : "
     "f32[]\n yield %2 } block 2 () { yield %2 } }\n return %1 } }", 4, 32, "not visible here"),
    ("program { block 0 (%x: f32[]) { return %x } # comment", 1, 45, "unexpected character"),
    ("program { block 0 (%x: f32[]) { %1 = neg(%x) {a=" + "[" * 100 + "} : f32[] return %1 } }",
     1, 0, "nested more than"),
    ("program { block 0 (%x: f32[" + "9" * 5000 + "]) { return %x } }", 1, 28, "bad number"),
]


@pytest.mark.parametrize("text,line,col,msg", BAD, ids=[b[3] for b in BAD])
def test_malformed_text_gives_parse_error(text, line, col, msg):
    with pytest.raises(ParseError) as info:
        parse(text)
    e = info.value
    assert isinstance(e, InvalidArgumentError)
    assert msg in str(e), str(e)
    assert e.line == line
    if col:
        assert e.column == col, str(e)
    assert f"line {line}, column {e.column}" in str(e)


def test_parse_rejects_non_text():
    with pytest.raises(ParseError, match="str"):
        parse(b"program {}")


def _valid_text():
    w = fw.to_tensor(np.ones((4, 3), np.float32))
    return str(trace(lambda x: cond(x.sum() > 0.0, lambda: fw.matmul(x, w), lambda: -fw.matmul(
        x, w)), [F32]))


VALID = _valid_text()


@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.sampled_from(["del", "ins", "rep"]),
                          st.characters(codec="ascii")), min_size=1, max_size=4))
def test_mutated_text_parses_or_raises_parse_error(edits):
    text = VALID
    for pos, kind, ch in edits:
        pos = min(pos, len(text))
        if kind == "del":
            text = text[:pos] + text[pos + 1:]
        elif kind == "ins":
            text = text[:pos] + ch + text[pos:]
        else:
            text = text[:pos] + ch + text[pos + 1:]
    try:
        p = parse(text)
    except ParseError:
        return
    assert isinstance(p, Program)
