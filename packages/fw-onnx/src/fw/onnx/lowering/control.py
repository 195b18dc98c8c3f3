"""Control flow (``fw.core.ops.control``): ``cond`` -> ONNX If, ``while`` -> ONNX Loop.

Nested blocks may read any value of the enclosing blocks; ONNX subgraphs see the
names of their enclosing graphs (outer scope), so those uses need nothing extra.

``while`` carries values through a cond block and a body block that both take the
loop variables. ONNX Loop instead tests a condition *produced by its body*: the
cond block is emitted once before the Loop (the initial condition, on the initial
values) and once at the end of the body (on the new values), so the body graph
is ``(iteration, cond_in, vars...) -> (cond block(new vars), new vars...)``.
There is no trip count (the M input is empty): the loop runs while the condition
holds (onnx Loop spec, "while cond" form).
"""

from __future__ import annotations

from fw.onnx.lowering._registry import lowers
from onnx import TensorProto, helper


@lowers("cond")
def _cond(op, ctx):
    pred = ctx.input(0)
    if op.operands[0].type.ndim:  # If wants a single-element bool; fw allows [1]
        pred = ctx.node("Reshape", [pred, ctx.ints([])])
    then_b, else_b = op.blocks
    then_g = ctx.block_graph(then_b, "then")
    else_g = ctx.block_graph(else_b, "else")
    if not op.results:
        # a cond with no results (only side effects, which an exported program has
        # none of): nothing to compute
        return []
    return ctx.node("If", [pred], outputs=len(op.results), then_branch=then_g,
                    else_branch=else_g) if len(op.results) > 1 else ctx.node(
        "If", [pred], then_branch=then_g, else_branch=else_g)


def _scalar_bool(ctx, name, value):
    return name if value.type.ndim == 0 else ctx.node("Reshape", [name, ctx.ints([])])


@lowers("while")
def _while(op, ctx):
    cond_b, body_b = op.blocks
    init = [ctx.name(v) for v in op.operands]
    # the initial condition, in the enclosing graph
    for a, n in zip(cond_b.args, init):
        ctx.bind(a, n)
    ctx.lower_block(cond_b)
    cond0 = _scalar_bool(ctx, ctx.name(cond_b.outputs[0]), cond_b.outputs[0])
    # the body graph: (iteration number, condition in, carried values...)
    it, cin = ctx.fresh("iter"), ctx.fresh("cond_in")
    formal = [(None, it, helper.make_tensor_value_info(it, TensorProto.INT64, [])),
              (None, cin, helper.make_tensor_value_info(cin, TensorProto.BOOL, []))]
    formal += [(a, ctx.fresh("carried"), a.type) for a in body_b.args]

    def build():
        ctx.lower_block(body_b)
        new = body_b.outputs
        # the condition of the next iteration, on the new values
        for a, v in zip(cond_b.args, new):
            ctx.bind(a, ctx.name(v))
        ctx.lower_block(cond_b)
        c = _scalar_bool(ctx, ctx.name(cond_b.outputs[0]), cond_b.outputs[0])
        cout = ctx.node("Identity", [c])
        return [helper.make_tensor_value_info(cout, TensorProto.BOOL, [])] + ctx.outputs(new)

    body = ctx.subgraph("body", formal, build)
    outs = ctx.node("Loop", ["", cond0] + init, outputs=len(op.results), body=body)
    return [outs] if len(op.results) == 1 else outs
