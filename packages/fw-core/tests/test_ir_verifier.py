"""The verifier accepts what the tracer builds and names every problem of a
broken program with the op's text line."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fw
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, parse, trace, verify
from fw.core.ir.control import cond, while_loop
from fw.core.ir.core import Operation, Program
from fw.core.ir.verifier import VerificationError
from fw.core.ops import OPS
from fw.core.ops._registry import OpDef
from fw.core.testing.programs import draw_program


def _prog():
    w = fw.to_tensor(np.ones((4, 3), np.float32))

    def f(x):
        h = fw.matmul(x, w).tanh()
        c = cond(h.sum() < 1.0, lambda: h + 1.0, lambda: -h)
        _, out = while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * 0.5),
                            [fw.to_tensor(np.int64(0)), c])
        return out

    return trace(f, [TensorType([-1, 4], "float32")], names=["x"])


def _problems(p):
    with pytest.raises(VerificationError) as info:
        verify(p)
    e = info.value
    assert isinstance(e, InvalidArgumentError)
    assert len(e.problems) >= 1
    return str(e), e.problems


def _op(p, name, k=0):
    return [o for o in p.walk() if o.name == name][k]


@given(st.data())
def test_traced_random_programs_verify(data):
    verify(draw_program(data.draw).trace())


def test_valid_program_verifies_and_parsed_text_too():
    p = _prog()
    verify(p)
    verify(parse(str(p)))


def test_use_before_definition_names_the_line():
    p = _prog()
    ops = p.block.ops
    ops[1], ops[2] = ops[2], ops[1]  # sum(%1) before tanh defines %1
    msg, probs = _problems(p)
    assert "not defined before it" in msg
    line = probs[0][0]
    text = __import__("fw.core.ir.printer", fromlist=["x"]).print_program(p, lenient=True)
    assert "sum(%<undefined>)" in text.splitlines()[line - 1]
    assert f"line {line}:" in msg and "at: %1 = sum(%<undefined>)" in msg


def test_value_of_another_program_and_of_a_closed_block():
    p = _prog()
    other = _prog()
    mul = _op(p, "multiply")
    mul.operands[1] = other.block.ops[0].results[0]
    msg, _ = _problems(p)
    assert "another program" in msg
    p = _prog()
    inner = _op(p, "neg")  # defined in the else block of cond
    last = p.block.ops[-1]
    p.block.outputs = [inner.results[0]]
    msg, _ = _problems(p)
    assert "return value 0 uses a value" in msg
    del last


def test_value_defined_twice():
    p = _prog()
    p.block.ops.append(p.block.ops[1])
    msg, _ = _problems(p)
    assert "defined twice" in msg


def test_operand_counts_and_required_operands():
    p = _prog()
    mm = p.block.ops[0]
    mm.operands.pop()
    msg, _ = _problems(p)
    assert "matmul takes 2 operands (x, y), got 1" in msg
    p = _prog()
    p.block.ops[0].operands[1] = None
    msg, _ = _problems(p)
    assert "operand 1 ('y') is required but is none" in msg


def test_optional_and_variadic_operands_are_accepted():
    p = trace(lambda x: fw.concat([fw.clip(x, None, 1.0), x], axis=0),
              [TensorType([3], "float32")])
    verify(p)
    p.block.ops[-1].operands[0] = None
    msg, _ = _problems(p)
    assert "variadic input 'x'" in msg


def test_unknown_and_unprintable_attributes():
    p = _prog()
    p.block.ops[0].attrs["bogus"] = 1
    p.block.ops[1].attrs["arr"] = np.zeros(2)
    msg, probs = _problems(p)
    assert "unknown attribute 'bogus' (the op has ['transpose_x', 'transpose_y'])" in msg
    assert "attribute 'arr' has a value of type ndarray" in msg
    assert len(probs) >= 2


def test_result_types_compatible_but_not_contradictory():
    p = _prog()
    tanh = p.block.ops[1]
    tanh.results[0].type = TensorType([5, 3], "float32")  # more precise than f32[-1,3]: fine
    verify(p)
    tanh.results[0].type = TensorType([-1, -1], "float32")  # less precise: fine
    verify(p)
    tanh.results[0].type = TensorType([-1, 4], "float32")
    msg, _ = _problems(p)
    assert "result 0 is recorded as f32[-1,4] but the operand types give f32[-1,3]" in msg
    tanh.results[0].type = TensorType([-1, 3], "float64")
    msg, _ = _problems(p)
    assert "recorded as f64[-1,3]" in msg
    tanh.results[0].type = TensorType([3], "float32")
    msg, _ = _problems(p)
    assert "recorded as f32[3]" in msg


def test_infer_rejecting_operands_is_reported():
    p = _prog()
    p.block.args[0].type = TensorType([-1, 5], "float32")
    msg, _ = _problems(p)
    assert "the op rejects its operand types: matmul:" in msg
    assert "contracted dimensions differ" in msg


def test_cond_structure():
    p = _prog()
    c = _op(p, "cond")
    c.operands[0] = p.block.ops[2].results[0]  # the f32 sum, not a bool
    msg, _ = _problems(p)
    assert "predicate of cond must be a bool scalar, got f32[]" in msg
    p = _prog()
    c = _op(p, "cond")
    c.blocks[1].outputs = []
    msg, _ = _problems(p)
    assert "the else block yields 0 values, expected 1" in msg
    p = _prog()
    c = _op(p, "cond")
    c.blocks[0].add_arg(TensorType([], "float32"))
    msg, _ = _problems(p)
    assert "the then block of cond takes no arguments, got 1" in msg
    p = _prog()
    c = _op(p, "cond")
    c.results[0].type = TensorType([-1, 7], "float32")
    msg, _ = _problems(p)
    assert "the then block yields f32[-1,3] for value 0, expected f32[-1,7]" in msg
    p = _prog()
    c = _op(p, "cond")
    c.blocks.pop()
    msg, _ = _problems(p)
    assert "cond holds two blocks (then, else), got 1" in msg


def test_while_structure():
    p = _prog()
    w = _op(p, "while")
    w.blocks[0].outputs = [w.blocks[0].args[1]]
    msg, _ = _problems(p)
    assert "the cond block yields f32[-1,3], expected a bool scalar" in msg
    p = _prog()
    w = _op(p, "while")
    w.blocks[1].outputs = list(reversed(w.blocks[1].outputs))
    msg, _ = _problems(p)
    assert "the body block yields f32[-1,3] for value 0, expected i64[]" in msg
    p = _prog()
    w = _op(p, "while")
    w.operands[1] = p.block.ops[2].results[0]
    msg, _ = _problems(p)
    assert "initial value 1 is f32[] but the loop carries f32[-1,3]" in msg
    p = _prog()
    w = _op(p, "while")
    w.blocks[1].args.pop()
    msg, _ = _problems(p)
    assert "the body block takes 1 arguments, expected the 2 carried values" in msg


def test_block_zero_arguments_and_labels():
    p = _prog()
    a = p.block.add_arg(TensorType([2], "float32"), "const", "_const_0")
    del a
    msg, _ = _problems(p)
    assert "const name '_const_0' is used by block 0 arguments 1 and 3" in msg
    p = _prog()
    p.block.args[1].role = "arg"
    msg, _ = _problems(p)
    assert "role 'arg'" in msg


def test_structure_of_ops():
    p = _prog()
    p.block.ops[1].parent = None
    msg, _ = _problems(p)
    assert "parent is not the block holding it" in msg
    p = _prog()
    fake = OpDef(name="tanh", inputs=("x",), attrs={}, outputs=("out",),
                 infer=lambda x: x, reference=np.tanh)
    p.block.ops[1].opdef = fake
    msg, _ = _problems(p)
    assert "op 'tanh' is not in the op table" in msg
    p = _prog()
    blk = p.block
    extra = Operation(OPS["neg"], [blk.args[0]], {}, [blk.args[0].type],
                      blocks=[__import__("fw.core.ir.core", fromlist=["Block"]).Block(p)])
    blk.append(extra)
    msg, _ = _problems(p)
    assert "neg does not take nested blocks" in msg


def test_every_problem_is_listed():
    p = _prog()
    p.block.ops[0].attrs["bogus"] = 1
    _op(p, "cond").blocks[1].outputs = []
    _op(p, "while").blocks[1].outputs = []
    _, probs = _problems(p)
    assert len(probs) == 3
    assert [ln for ln, _ in probs] == sorted(ln for ln, _ in probs)


def test_parsed_text_with_a_wrong_type_fails_at_its_line():
    text = """program {
  block 0 (%x: f32[2,3]) {
    %0 = tanh(%x) : f32[2,3]
    %1 = sum(%0) {axis=[0], dtype=none, keepdim=false} : f32[2]
    return %1
  }
}
"""
    msg, probs = _problems(parse(text))
    assert probs[0][0] == 4
    assert "recorded as f32[2] but the operand types give f32[3]" in msg


def test_empty_program_verifies():
    verify(Program())
