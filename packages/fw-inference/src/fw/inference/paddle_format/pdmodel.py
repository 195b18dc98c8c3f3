"""Paddle 2.x's program file: the ProgramDesc protobuf of ``prefix + ".pdmodel"``,
decoded by hand (wire.py) into a `PaddleGraph` in PIR form.

The messages and field numbers used, as observed in files written by Paddle
3.3.1 with ``FLAGS_enable_pir_api=0`` (tests/fixtures/paddle/legacy) and named
after Paddle's public ``framework.proto``:

    ProgramDesc  1: blocks (BlockDesc)
    BlockDesc    3: vars (VarDesc), 4: ops (OpDesc)
    VarDesc      1: name, 2: type (VarType), 3: persistable
    VarType      1: kind (7 dense tensor, 9 feed list, 10 fetch list),
                 3: dense tensor desc {1: TensorDesc {1: data type, 2: dims}}
    OpDesc       1: inputs, 2: outputs (each {1: slot, 2: [var names]}),
                 3: type, 4: attrs
    Attr         1: name, 2: kind, then the value in the field of its kind
                 (3 int, 4 float, 5 string, 6 ints, 7 floats, 8 strings,
                 10 bool, 11 bools, 13 long, 15 longs, 19 double)

Only block 0 is read (a program with control flow has more blocks: refused).
Each 2.x op is renamed to its PIR counterpart by `LEGACY` (slot order, attribute
renames, attributes that PIR passes as constant operands), so `ops.py` has one
entry per op for both formats.
"""

from __future__ import annotations

import os
import struct

from fw.core.errors import FwError
from fw.inference.paddle_format import wire
from fw.inference.paddle_format.convert import unknown_ops
from fw.inference.paddle_format.graph import PaddleGraph, PaddleOp, Spec
from fw.inference.paddle_format.pdiparams import BF16, DTYPES

__all__ = ["read_pdmodel", "LEGACY"]

_UNARY = (("X",), ("Out",))

# 2.x name -> (PIR name, input slots, output slots, {2.x attr: PIR attr},
#              attrs passed as operands: ((2.x attr, "ints" | "float"), ...))
LEGACY = {
    "conv2d": ("conv2d", ("Input", "Filter"), ("Output",), {}, ()),
    "depthwise_conv2d": ("depthwise_conv2d", ("Input", "Filter"), ("Output",), {}, ()),
    "batch_norm": ("batch_norm", ("X", "Mean", "Variance", "Scale", "Bias"), ("Y",),
                   {"data_layout": "data_format"}, ()),
    "layer_norm": ("layer_norm", ("X", "Scale", "Bias"), ("Y",), {}, ()),
    "relu": ("relu",) + _UNARY + ({}, ()),
    "relu6": ("relu6",) + _UNARY + ({}, ()),
    "sigmoid": ("sigmoid",) + _UNARY + ({}, ()),
    "tanh": ("tanh",) + _UNARY + ({}, ()),
    "gelu": ("gelu",) + _UNARY + ({}, ()),
    "hard_swish": ("hardswish",) + _UNARY + ({}, ()),
    "softmax": ("softmax",) + _UNARY + ({}, ()),
    "pool2d": ("pool2d",) + _UNARY + ({}, (("ksize", "ints"),)),
    "elementwise_add": ("add", ("X", "Y"), ("Out",), {}, ()),
    "elementwise_sub": ("subtract", ("X", "Y"), ("Out",), {}, ()),
    "elementwise_mul": ("multiply", ("X", "Y"), ("Out",), {}, ()),
    "elementwise_div": ("divide", ("X", "Y"), ("Out",), {}, ()),
    "matmul_v2": ("matmul", ("X", "Y"), ("Out",),
                  {"trans_x": "transpose_x", "trans_y": "transpose_y"}, ()),
    "flatten_contiguous_range": ("flatten",) + _UNARY + ({}, ()),
    "reshape2": ("reshape",) + _UNARY + ({}, (("shape", "ints"),)),
    "transpose2": ("transpose",) + _UNARY + ({"axis": "perm"}, ()),
    "lookup_table_v2": ("embedding", ("Ids", "W"), ("Out",), {}, ()),
    "scale": ("scale",) + _UNARY + ({}, (("scale", "float"),)),
    "concat": ("concat",) + _UNARY + ({}, (("axis", "ints"),)),
    "dropout": ("dropout", ("X", "Seed"), ("Out",),
                {"dropout_implementation": "mode"}, (("dropout_prob", "float"),)),
}

_LIST_INPUT = {"concat"}  # ops whose first slot is a list of tensors

# attributes every 2.x op carries for Paddle's own bookkeeping
_IGNORED_ATTRS = {"op_callstack", "op_namescope", "op_role", "op_role_var", "op_device",
                  "with_quant_attr", "struct_name", "use_cudnn", "use_mkldnn", "is_test"}


def _attr(m):
    kind = m[2][0][1] if 2 in m else -1

    def one(num, default=None):
        return m[num][0][1] if num in m else default

    if kind == 0:
        return wire.as_int64(one(3, 0))
    if kind == 9:
        return wire.as_int64(one(13, 0))
    if kind == 1:
        return wire.f32(one(4, 0))
    if kind == 15:
        return struct.unpack("<d", struct.pack("<q", one(19, 0)))[0]
    if kind == 2:
        return wire.text(one(5, b""))
    if kind == 6:
        return bool(one(10, 0))
    if kind in (3, 11):
        return wire.repeated_ints(m.get(6 if kind == 3 else 15, []))
    if kind == 4:
        out = []
        for wt, v in m.get(7, []):
            if wt == 2:  # packed
                out.extend(struct.unpack(f"<{len(v) // 4}f", bytes(v)))
            else:
                out.append(wire.f32(v))
        return out
    if kind == 5:
        return [wire.text(v) for _, v in m.get(8, [])]
    if kind == 7:
        return [bool(x) for x in wire.repeated_ints(m.get(11, []))]
    return None  # block / var / scalar attributes: not needed by the ops mapped


def _dtype_name(code, fail, var):
    if code == BF16:
        return "bfloat16"
    if code not in DTYPES:
        raise fail(f"variable {var!r}: unknown data type enum {code}")
    return DTYPES[code].name


def read_pdmodel(path, limits, fail, over) -> PaddleGraph:
    size = os.path.getsize(path)
    if size > limits.max_header_bytes:
        raise over("the program file's size in bytes", size, limits.max_header_bytes,
                   "max_header_bytes")
    with open(path, "rb") as f:
        buf = f.read()
    try:
        return _decode(path, buf, limits, fail, over)
    except FwError:  # already names the file and the problem
        raise
    except wire.WireError as e:
        raise fail(f"not a Paddle ProgramDesc (.pdmodel): {e}") from e
    except (KeyError, IndexError, TypeError, ValueError) as e:  # a required field is absent
        raise fail(f"not a Paddle ProgramDesc (.pdmodel), or a damaged one: a message lacks "
                   f"a field it needs ({type(e).__name__}: {e})") from e


def _slots(entries):
    out = {}
    for _, v in entries:
        m = wire.message(v)
        out[wire.text(m[1][0][1]) if 1 in m else ""] = [wire.text(a) for _, a in m.get(2, [])]
    return out


def _decode(path, buf, limits, fail, over):
    top = wire.message(buf)
    blocks = top.get(1, [])
    if not blocks or any(wt != 2 for wt, _ in blocks):
        raise fail("not a Paddle ProgramDesc (.pdmodel): no program blocks")
    if len(blocks) > 1:
        raise fail(f"{len(blocks)} blocks: programs with control flow are not supported")
    blk = wire.message(blocks[0][1])
    raw_ops = blk.get(4, [])
    if len(raw_ops) > limits.max_ops:
        raise over("the number of operations", len(raw_ops), limits.max_ops, "max_ops")
    specs, persistable = {}, []
    for _, v in blk.get(3, []):
        m = wire.message(v)
        name = wire.text(m[1][0][1])
        vt = wire.message(m[2][0][1]) if 2 in m else {}
        kind = vt[1][0][1] if 1 in vt else -1
        if kind == 7 and 3 in vt:
            td = wire.message(wire.message(vt[3][0][1])[1][0][1])
            specs[name] = Spec(_dtype_name(td[1][0][1] if 1 in td else -1, fail, name),
                               tuple(wire.repeated_ints(td.get(2, []))))
            if 3 in m and m[3][0][1]:
                persistable.append(name)
    feeds, fetches, ops, unknown = [], [], [], []
    n_const = 0
    for _, v in raw_ops:
        m = wire.message(v)
        typ = wire.text(m[3][0][1]) if 3 in m else ""
        ins, outs = _slots(m.get(1, [])), _slots(m.get(2, []))
        attrs = {}
        for _, a in m.get(4, []):
            am = wire.message(a)
            an = wire.text(am[1][0][1]) if 1 in am else ""
            if an not in _IGNORED_ATTRS:
                attrs[an] = _attr(am)
        if typ == "feed":
            (name,) = outs.get("Out", [None])
            feeds.append((attrs.get("col", len(feeds)), name))
            continue
        if typ == "fetch":
            (name,) = ins.get("X", [None])
            fetches.append((attrs.get("col", len(fetches)), name))
            continue
        if typ not in LEGACY:
            unknown.append(typ)
            continue
        pir, in_slots, out_slots, renames, operands = LEGACY[typ]
        args = [(ins.get(s) or [None])[0] for s in in_slots]
        if typ in _LIST_INPUT:  # a list operand: PIR builds it with combine
            key = f"%combine{len(ops)}"
            ops.append(PaddleOp("combine", list(ins.get(in_slots[0], [])), {}, [key]))
            args[0] = key
        for attr, kind in operands:
            key = f"%const{n_const}"
            n_const += 1
            value = attrs.pop(attr, None)
            if kind == "ints":
                value = list(value) if isinstance(value, (list, tuple)) else [value]
                ops.append(PaddleOp("full_int_array", [], {"value": value}, [key]))
            else:
                ops.append(PaddleOp("full", [], {"value": float(value), "shape": [1],
                                                 "dtype": "float32"}, [key]))
            args.append(key)
        attrs = {renames.get(k, k): v for k, v in attrs.items()}
        if typ == "dropout":  # PIR order: x, seed tensor, p
            args = [args[0], None, args[2]]
        ops.append(PaddleOp(pir, args, attrs, [(outs.get(s) or [None])[0] for s in out_slots],
                            [specs.get((outs.get(s) or [None])[0]) for s in out_slots]))
    err = unknown_ops(path, unknown, LEGACY)
    if err is not None:
        raise err
    feed_list = []
    for _, name in sorted(feeds, key=lambda c: c[0]):
        if name not in specs:
            raise fail(f"the feed {name!r} has no tensor variable")
        feed_list.append((name, name, specs[name]))
    feed_names = {n for _, n, _ in feed_list}
    params = [(n, n, specs[n]) for n in persistable if n not in feed_names]
    return PaddleGraph(os.fspath(path), feed_list, params, ops,
                       [n for _, n in sorted(fetches, key=lambda c: c[0])])
