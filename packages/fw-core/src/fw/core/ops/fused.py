"""Fused ops: what the compiler's fusion passes (``fw.core.ir.passes``) emit.

No user code calls these (``api=False, method=False``); the inference pipeline
rewrites chains of ordinary ops into them, and fast kernels (oneDNN primitives
with post-ops, a C++ elementwise interpreter) attach to exactly these
signatures with ``register_kernel``. The NumPy reference kernels below are the
specification those kernels are tested against (records in
``fw.core.testing.records.fused``). The ops are not differentiable: they exist
for inference programs, after training.

Precision. float32/float64 inputs are computed in their own dtype, with the
same NumPy calls, in the same order, as the unfused ops, so the reference is
bit-identical to the chain it replaces. float16/bfloat16 inputs are computed in
float32 and rounded once at the end (what oneDNN does with f32 accumulation and
post-ops), so they may differ from the unfused chain by the intermediate
roundings it skipped.

``fused_matmul(x, y, bias?, residual?) -> out``
    Attributes ``transpose_x=False, transpose_y=False, activation="none",
    alpha=1.0``::

        out = act(alpha * (op(x) @ op(y)) + bias) + residual

    in this order, which is oneDNN's: output scale ``alpha``, then ``bias`` as
    part of the matmul primitive, then the activation as an ``eltwise`` post-op,
    then the residual as a ``sum`` (or ``binary_add``) post-op. The other order
    (residual before the activation) is not an op form: the pass leaves that
    chain unfused.

    - x: ``[..., M, K]`` (``[..., K, M]`` with transpose_x) or ``[K]``; y:
      ``[..., K, N]`` (``[..., N, K]`` with transpose_y), at least 2-D. Batch
      dimensions broadcast as in ``matmul``. x and y have one real floating
      dtype.
    - bias: N elements, shape ``[N]`` or ``[1, ..., 1, N]`` (rank at most the
      result's), x's dtype; added to every row (broadcast over all but the last
      axis).
    - residual: x's dtype, broadcasting against the product (NumPy rules); the
      result has the broadcast shape. The pass only fuses a residual whose type
      has the product's shape, so a kernel may require ``residual.shape ==
      product shape`` at run time and fall back to the reference otherwise
      (dynamic dims can hide a broadcast until then).
    - activation: a name of the epilogue table ``fw.core._epilogue.TABLE``
      (``"none"``, or the fw op it stands for: relu, gelu's two forms as
      ``"gelu_erf"``/``"gelu_tanh"``, sigmoid, tanh, silu); canon also accepts its
      aliases (None, ``"gelu"`` for gelu_erf, ``"swish"`` for silu) in any case.
      Each computes exactly what its unfused op computes.
    - alpha: a Python float scaling the product before the bias (1.0: none).
    - result: the dtype of x.

``fused_conv(x, weight, bias?, residual?) -> out``
    Attributes ``stride=1, padding=0, dilation=1, groups=1, channel_last=False,
    activation="none"``: ``out = act(conv(x, weight) + bias) + residual``. x,
    weight, bias and every attribute but ``activation`` mean exactly what they
    mean for the ``conv`` op (``fw.core.ops.conv``: weight ``[C_out,
    C_in/groups, *K]``, bias ``[C_out]``, Paddle's padding forms resolved by
    ``conv_geometry``); activation and residual as for fused_matmul (the
    residual broadcasts against the conv result; the pass only fuses one of the
    conv result's shape).

``fused_elementwise(inputs*) -> out``
    Attributes ``program=(), out_dtype=None``. Runs a whole elementwise
    expression DAG over its inputs in one op. ``program`` is a tuple of
    instructions; values are numbered inputs first (``0 .. n_inputs-1``), then
    one value per instruction in order (instruction ``k`` defines value
    ``n_inputs + k``); the last instruction's value is the result. An
    instruction is a 4-tuple::

        (opcode: str, dtype: DType, operands: tuple[int, ...], scalars: tuple)

    ``dtype`` is the instruction's result dtype; ``operands`` are value numbers
    defined before it; ``scalars`` are the opcode's immediate arguments:

    =====================  ========  =========================================
    opcode                 operands  semantics (NumPy broadcasting)
    =====================  ========  =========================================
    add subtract multiply  2         a + b, a - b, a * b, a / b (true division)
    divide maximum minimum           max/min propagate NaN
    neg exp log tanh       1         -a, e^a, ln a, tanh a
    sigmoid sqrt rsqrt abs 1         1/(1+e^-a), sqrt a, 1/sqrt a, abs a
    relu silu              1         max(a, 0); a * sigmoid(a)
    gelu                   1         scalars ``(approximate: bool,)``: erf form
                                     (False) or tanh form (True), as ``gelu``
    pow                    1         scalars ``(exponent: float,)``: a ** e
    equal not_equal        2         comparisons; dtype must be bool
    less_than less_equal
    greater_than
    greater_equal
    where                  3         a ? b : c (a bool)
    cast                   1         a converted to ``dtype``
    const                  0         scalars ``(value,)``: a 0-d value of
                                     ``dtype`` (broadcast like any scalar)
    =====================  ========  =========================================

    Dtypes: values are bool, float16, bfloat16, float32 or float64. The
    operands of an arithmetic or comparison opcode share one floating dtype,
    which is also the result's (bool for comparisons); ``where`` takes a bool
    condition and two values of its result dtype; ``cast`` converts between any
    two of the allowed dtypes. Each opcode computes exactly what the fw op of
    the same name computes (the reference calls that op's kernel), including
    rounding the result to the instruction's dtype: a kernel that keeps
    float16/bfloat16 intermediates in float32 registers is within the records'
    tolerance but not bit-identical.

    Shapes: every input broadcasts (NumPy rules) to the result shape, which is
    the broadcast of all input shapes. The fusion pass only builds programs
    whose intermediate values all have the result's shape, with inputs of that
    shape or of fewer elements broadcasting into it (scalars, rows such as a
    bias); a kernel specialised to "same shape or one element" inputs may fall
    back to the reference for other broadcasts.

    Validity (checked by ``infer`` and the verifier): every value but the last
    is used by a later instruction, every input is used, the last instruction
    is not a ``const``, and ``out_dtype`` is the last instruction's dtype.

    Example: ``silu(x) * 0.5 + y`` over inputs ``(x, y)``::

        (("silu", f32, (0,), ()), ("const", f32, (), (0.5,)),
         ("multiply", f32, (2, 3), ()), ("add", f32, (4, 1), ()))
"""

from __future__ import annotations

import numpy as np

from fw.core import _epilogue
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, shp
from fw.core.ops._registry import OPS, defop
from fw.core.ops._xp import xp_of
from fw.core.ops.activation import down, require_real_float, up
from fw.core.ops.conv import _conv_canon, _conv_infer, _conv_ref
from fw.core.ops.linalg import _matmul_ref, _mm_shapes

__all__ = ["ACTIVATIONS", "OPCODES", "ELEMENTWISE_DTYPES", "activation_of", "check_program",
           "instruction_type"]

# ---------------------------------------------------------------- activations
# The names, aliases and formulas are the one table of fw.core._epilogue.
ACTIVATIONS = _epilogue.NAMES
_ACT_FNS = {a.name: a.numpy for a in _epilogue.TABLE}


def activation_of(op) -> str | None:
    """The fused-op activation name computing what IR operation `op` computes (a row of
    the ``fw.core._epilogue`` table: ``relu``, ``gelu`` with either form, ``sigmoid``,
    ``tanh``, ``silu``), or None."""
    return _epilogue.of_op(op.name, op.attrs)


def _canon_activation(a):
    v = _epilogue.canonical(a["activation"])
    if v is None:
        raise InvalidArgumentError(f"unknown activation {a['activation']!r}; expected one of "
                                   f"{list(ACTIVATIONS)}")
    a["activation"] = v
    return a


def _same_dtype(t, x, arg):
    if t.dtype is not x.dtype:
        raise InvalidTypeError(f"'{arg}' must have x's dtype {x.dtype.name}, got "
                               f"{t.dtype.name}{shp(t.shape)}")


def _check_bias(bias, n):
    """bias: N elements as [N] or [1, ..., 1, N]."""
    lead_ok = all(d in (1, DYN) for d in bias.shape[:-1])
    if len(bias.shape) < 1 or not lead_ok or (bias.shape[-1] != DYN and n != DYN and
                                              bias.shape[-1] != n):
        raise InvalidArgumentError(f"bias {shp(bias.shape)} must be [{n}] or [1, ..., 1, {n}] "
                                   f"(one value per output column)")


def _check_residual(residual, x, out_shape, what):
    _same_dtype(residual, x, "residual")
    return broadcast_shapes(out_shape, residual.shape, names=(what, "residual"))


# ---------------------------------------------------------------- fused_matmul
def _fm_canon(attrs):
    a = _canon_activation(dict(attrs))
    a["transpose_x"] = bool(a["transpose_x"])
    a["transpose_y"] = bool(a["transpose_y"])
    alpha = a["alpha"]
    a["alpha"] = float(alpha.item() if hasattr(alpha, "item") else alpha)
    return a


def _fm_infer(x, y, bias=None, residual=None, transpose_x=False, transpose_y=False,
              activation="none", alpha=1.0):
    require_real_float(x)
    _same_dtype(y, x, "y")
    if len(y.shape) < 2:
        raise InvalidArgumentError(f"y {shp(y.shape)} must have at least 2 dimensions (the "
                                   f"weight of a fused matmul)")
    shape = _mm_shapes(x.shape, y.shape, transpose_x, transpose_y)
    if bias is not None:
        _same_dtype(bias, x, "bias")
        if len(bias.shape) > len(shape):
            raise InvalidArgumentError(f"bias {shp(bias.shape)} has more dimensions than the "
                                       f"product {shp(shape)}")
        _check_bias(bias, shape[-1])
    if residual is not None:
        shape = _check_residual(residual, x, shape, "product")
    return TensorType(shape, x.dtype)


def _bias_row(bias, n):
    if bias.size != n or (bias.ndim and bias.shape[-1] != n):
        try:
            _check_bias(TensorType(bias.shape, _dt.from_numpy(bias.dtype)), n)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"fused_matmul: {e}") from None
    return bias.reshape(-1)


def _add_residual(out, residual):
    r = up(residual)
    if out.shape == np.broadcast_shapes(out.shape, r.shape):
        out += r  # `out` is a fresh array of this kernel
        return out
    return out + r


_F32_NP = _dt.float32.np
_FLOAT_NP = frozenset(d.np for d in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64))


def _types_ok(x, *others) -> bool:
    """The dtype rule of the fused matmul/conv kernels: one real floating dtype."""
    d = x.dtype
    return d in _FLOAT_NP and all(a is None or a.dtype == d for a in others)


def _raise_from_infer(name, arrays, attrs):
    """Re-run `name`'s infer on the arrays' types: it raises the precise error."""
    ts = [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]
    OPS[name].infer(*ts, **attrs)
    raise InvalidTypeError(f"{name}: unsupported inputs {[str(t) for t in ts]}")


def _fm_ref(x, y, bias=None, residual=None, transpose_x=False, transpose_y=False,
            activation="none", alpha=1.0):
    d = x.dtype
    if d is _F32_NP and y.dtype is d and y.ndim > 1 and residual is None and (
            bias is None or bias.dtype is d) and not transpose_x and not transpose_y:
        # the common case (a float32 layer), kept short: it runs per layer per call
        out = np.matmul(x, y)
        if alpha != 1.0:
            out *= alpha
        if bias is not None:
            n = out.shape[-1]
            out += bias if bias.shape == (n,) else _bias_row(bias, n)
        if activation == "relu":
            return np.maximum(out, 0, out=out)
        return out if activation == "none" else _ACT_FNS[activation](out)
    if y.ndim < 2 or not _types_ok(x, y, bias, residual):
        _raise_from_infer("fused_matmul", (x, y, bias, residual),
                          {"transpose_x": transpose_x, "transpose_y": transpose_y})
    out = _matmul_ref(up(x), up(y), transpose_x, transpose_y)
    if alpha != 1.0:
        out *= alpha
    if bias is not None:
        out += up(_bias_row(bias, out.shape[-1]))
    fn = _ACT_FNS[activation]
    if fn is not None:
        out = fn(out)
    if residual is not None:
        out = _add_residual(out, residual)
    return down(out, x.dtype)


defop("fused_matmul", ("x", "y", "bias?", "residual?"),
      {"transpose_x": False, "transpose_y": False, "activation": "none", "alpha": 1.0},
      infer=_fm_infer, reference=_fm_ref, canon=_fm_canon, promote=None,
      differentiable=False, family="fused", api=False, method=False,
      doc="act(alpha * (op(x) @ op(y)) + bias) + residual; see fw.core.ops.fused.")


# ---------------------------------------------------------------- fused_conv
def _fc_canon(attrs):
    return _canon_activation(_conv_canon(attrs))


def _fc_infer(x, weight, bias=None, residual=None, stride=1, padding=0, dilation=1, groups=1,
              channel_last=False, activation="none"):
    _same_dtype(weight, x, "weight")
    if bias is not None:
        _same_dtype(bias, x, "bias")
    t = _conv_infer(x, weight, bias, stride, padding, dilation, groups, channel_last)
    if residual is None:
        return t
    return TensorType(_check_residual(residual, x, t.shape, "conv result"), x.dtype)


def _fc_ref(x, weight, bias=None, residual=None, stride=1, padding=0, dilation=1, groups=1,
            channel_last=False, activation="none"):
    if not _types_ok(x, weight, bias, residual):
        _raise_from_infer("fused_conv", (x, weight, bias, residual),
                          {"stride": stride, "padding": padding, "dilation": dilation,
                           "groups": groups, "channel_last": channel_last})
    out = _conv_ref(up(x), up(weight), None if bias is None else up(bias), stride, padding,
                    dilation, groups, channel_last)
    fn = _ACT_FNS[activation]
    if fn is not None:
        out = fn(out)
    if residual is not None:
        out = _add_residual(out, residual)
    return down(out, x.dtype)


defop("fused_conv", ("x", "weight", "bias?", "residual?"),
      {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "channel_last": False,
       "activation": "none"},
      infer=_fc_infer, reference=_fc_ref, canon=_fc_canon, promote=None,
      differentiable=False, family="fused", api=False, method=False,
      doc="act(conv(x, weight) + bias) + residual; see fw.core.ops.fused.")


# ---------------------------------------------------------------- fused_elementwise
ELEMENTWISE_DTYPES = (_dt.bool_, _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_FLOATS = frozenset((_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64))

_ARITH = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
_MATH = ("neg", "exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "relu", "silu")
_COMPARE = ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal")

#: opcode -> (number of operands, scalar argument names)
OPCODES = {**{n: (2, ()) for n in _ARITH}, **{n: (1, ()) for n in _MATH},
           **{n: (2, ()) for n in _COMPARE},
           "gelu": (1, ("approximate",)), "pow": (1, ("exponent",)), "where": (3, ()),
           "cast": (1, ()), "const": (0, ("value",))}


def _canon_scalar(opcode, dtype, scalars):
    if opcode == "gelu":
        return (bool(scalars[0]),)
    if opcode == "pow":
        return (float(scalars[0]),)
    if opcode == "const":
        v = scalars[0]
        v = v.item() if hasattr(v, "item") else v
        if dtype is _dt.bool_:
            return (bool(v),)
        return (float(v),)
    return tuple(scalars)


def _fe_canon(attrs):
    a = dict(attrs)
    prog = a["program"]
    if not isinstance(prog, (list, tuple)):
        raise InvalidArgumentError(f"'program' must be a tuple of instructions, got "
                                   f"{type(prog).__name__}")
    out = []
    for k, ins in enumerate(prog):
        if not isinstance(ins, (list, tuple)) or len(ins) != 4:
            raise InvalidArgumentError(f"instruction {k} must be (opcode, dtype, operands, "
                                       f"scalars), got {ins!r}")
        opcode, dtype, operands, scalars = ins
        spec = OPCODES.get(opcode)
        if spec is None:
            raise InvalidArgumentError(f"instruction {k}: unknown opcode {opcode!r}; known: "
                                       f"{sorted(OPCODES)}")
        try:
            dtype = _dt.convert_dtype(dtype)
        except TypeError as e:
            raise InvalidArgumentError(f"instruction {k} ({opcode}): {e}") from None
        if not isinstance(operands, (list, tuple)) or not isinstance(scalars, (list, tuple)):
            raise InvalidArgumentError(f"instruction {k} ({opcode}): operands and scalars must "
                                       f"be tuples, got {operands!r} and {scalars!r}")
        if len(scalars) != len(spec[1]):
            raise InvalidArgumentError(f"instruction {k} ({opcode}) takes the scalars "
                                       f"{list(spec[1])}, got {list(scalars)}")
        ops_ = []
        for i in operands:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise InvalidArgumentError(f"instruction {k} ({opcode}): operand {i!r} is not a "
                                           f"value number")
            ops_.append(int(i))
        out.append((opcode, dtype, tuple(ops_), _canon_scalar(opcode, dtype, scalars)))
    a["program"] = tuple(out)
    d = a["out_dtype"]
    a["out_dtype"] = None if d is None else _dt.convert_dtype(d)
    return a


_S0 = ()


def instruction_type(k, ins, types):
    """The TensorType instruction `k` computes from operand `types` (checked)."""
    opcode, dtype, operands, scalars = ins
    n, _ = OPCODES[opcode]
    if dtype not in ELEMENTWISE_DTYPES:
        raise InvalidTypeError(f"instruction {k} ({opcode}): dtype {dtype.name} is not one of "
                               f"{[d.name for d in ELEMENTWISE_DTYPES]}")
    if len(operands) != n:
        raise InvalidArgumentError(f"instruction {k} ({opcode}) takes {n} operand(s), got "
                                   f"{list(operands)}")
    for i in operands:
        if not 0 <= i < len(types):
            raise InvalidArgumentError(f"instruction {k} ({opcode}): operand {i} is not defined "
                                       f"before it (values 0..{len(types) - 1} are)")
    ts = [types[i] for i in operands]
    ds = [t.dtype for t in ts]

    def need(cond, what):
        if not cond:
            got = ", ".join(f"%{i}: {d.name}" for i, d in zip(operands, ds))
            raise InvalidTypeError(f"instruction {k} ({opcode} -> {dtype.name}): {what} "
                                   f"(operands {got})")

    if opcode == "const":
        return TensorType(_S0, dtype)
    if opcode == "cast":
        return TensorType(ts[0].shape, dtype)
    if opcode == "where":
        need(ds[0] is _dt.bool_ and ds[1] is dtype and ds[2] is dtype,
             "needs a bool condition and two values of the result dtype")
        return TensorType(broadcast_shapes(*(t.shape for t in ts)), dtype)
    if opcode in _COMPARE:
        need(dtype is _dt.bool_ and ds[0] is ds[1] and ds[0] in _FLOATS,
             "compares two values of one floating dtype into bool")
    else:
        need(dtype in _FLOATS and all(d is dtype for d in ds),
             "computes on values of its own floating dtype")
    return TensorType(broadcast_shapes(*(t.shape for t in ts)), dtype)


def check_program(input_types, program, out_dtype):
    """Validate a fused_elementwise program over inputs of `input_types`; returns the
    result type."""
    if not program:
        raise InvalidArgumentError("'program' is empty")
    types = list(input_types)
    for i, t in enumerate(types):
        if t.dtype not in ELEMENTWISE_DTYPES:
            raise InvalidTypeError(f"input {i} is {t.dtype.name}; inputs must be one of "
                                   f"{[d.name for d in ELEMENTWISE_DTYPES]}")
    used = [False] * (len(types) + len(program))
    for k, ins in enumerate(program):
        t = instruction_type(k, ins, types)
        for i in ins[2]:
            used[i] = True
        types.append(t)
    unused = [i for i in range(len(used) - 1) if not used[i]]
    if unused:
        raise InvalidArgumentError(f"values {unused} are never used (value i < "
                                   f"{len(input_types)} is input i); every input and every "
                                   f"value but the last must be used")
    if program[-1][0] == "const":
        raise InvalidArgumentError("the last instruction must not be a const")
    res = types[-1]
    if out_dtype is not res.dtype:
        raise InvalidTypeError(f"'out_dtype' is {getattr(out_dtype, 'name', out_dtype)} but the "
                               f"program computes {res.dtype.name}")
    return res


def _fe_infer(inputs, program=(), out_dtype=None):
    return check_program(inputs, program, out_dtype)


# programs already validated for these input dtypes and ranks, keyed by the program's
# identity (the executor passes the same tuple on every run; hashing it each time
# would cost as much as an instruction), the program kept to make the id unambiguous
_checked: dict = {}


def _fe_ref(inputs, program=(), out_dtype=None):
    key = (id(program), out_dtype, tuple((a.dtype, a.ndim) for a in inputs))
    if _checked.get(key) is not program:
        check_program([TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in inputs], program,
                       out_dtype)
        if len(_checked) > 4096:
            _checked.clear()
        _checked[key] = program
    vals = list(inputs)
    like = inputs[0] if inputs else None
    for opcode, dtype, operands, scalars in program:
        if opcode == "const":
            v = xp_of(like).full((), scalars[0], dtype=dtype.np)
        elif opcode == "cast":
            v = OPS["cast"].reference(vals[operands[0]], dtype=dtype)
        elif opcode == "gelu":
            v = OPS["gelu"].reference(vals[operands[0]], approximate=scalars[0])
        elif opcode == "pow":
            v = OPS["pow"].reference(vals[operands[0]],
                                     xp_of(like).full((), scalars[0], dtype=dtype.np))
        else:
            v = OPS[opcode].reference(*[vals[i] for i in operands])
        if isinstance(v, np.generic):
            v = np.asarray(v)
        if v.dtype != dtype.np:  # each step has its dtype (CuPy computes some bfloat16 in
            v = v.astype(dtype.np)  # float32)
        vals.append(v)
    return vals[-1]


defop("fused_elementwise", ("inputs*",), {"program": (), "out_dtype": None},
      infer=_fe_infer, reference=_fe_ref, canon=_fe_canon, promote=None,
      differentiable=False, family="fused", api=False, method=False,
      doc="A DAG of elementwise ops over the inputs in one op; see fw.core.ops.fused.")
