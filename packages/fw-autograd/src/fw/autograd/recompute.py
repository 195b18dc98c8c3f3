"""Gradient checkpointing: `recompute(function, *args, **kwargs)`.

The forward of `function` runs once, recorded, only to find which tensors from
outside the segment it reads (its tensor arguments, parameters and other
tensors it closes over); that temporary graph is dropped when `recompute`
returns, so none of the segment's intermediates stay in memory. One tape node
stands for the whole segment, with an edge to each of those outside tensors.

When the backward reaches that node, it runs `function` again — with the RNG
state it had the first time, so dropout draws the same masks — and
differentiates the recomputed graph with a nested backward that stops at the
outside tensors (the "frontier") and hands their gradients back to the outer
pass. Hooks, ``.grad`` accumulation, ``fw.grad`` with respect to parameters and
``create_graph=True`` therefore work as without recompute.

The segment must be deterministic apart from its random ops: the recomputation
must read the same outside tensors (which must not be modified in place in
between — that raises).
"""

from __future__ import annotations

import numpy as np

from fw.autograd import _graph, _mode
from fw.autograd._engine import run_backward
from fw.autograd._graph import _FLOATISH, Node, Port
from fw.autograd.errors import GradientError
from fw.core import random as _random
from fw.core.internal import grad_state, make_tensor, version_of
from fw.core.tensor import Tensor, wrap

__all__ = ["recompute"]


def _rng_kinds():
    kinds = ["cpu"]
    try:
        from fw.core.place import is_compiled_with_cuda

        if is_compiled_with_cuda():
            kinds.append("gpu")
    except Exception:  # pragma: no cover - a broken gpu stack must not break recompute
        pass
    return kinds


def _get_rng():
    return {k: _random.default_generator(k).get_state() for k in _rng_kinds()}


def _set_rng(states):
    for k, st in states.items():
        _random.default_generator(k).set_state(st)


def _flat(x, out):
    if isinstance(x, Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for e in x:
            _flat(e, out)
    elif isinstance(x, dict):
        for e in x.values():
            _flat(e, out)
    return out


def _rebuild(x, it):
    if isinstance(x, Tensor):
        return next(it)
    if isinstance(x, (list, tuple)):
        return type(x)(_rebuild(e, it) for e in x)
    if isinstance(x, dict):
        return {k: _rebuild(v, it) for k, v in x.items()}
    return x


def _trace(function, args, kwargs):
    """Run `function` recorded; returns (result, ids of the nodes it created)."""
    created = set()
    gs = grad_state
    inner = gs.record

    def collect(op, a, attrs, outputs):
        inner(op, a, attrs, outputs)
        for o in outputs:
            n = o._node
            if n is not None:
                created.add(id(n.node if type(n) is Port else n))

    gs.record = collect
    prev_link = _graph._link_observer[0]
    _graph._link_observer[0] = created
    try:
        with _mode.enable_grad():
            result = function(*args, **kwargs)
    finally:
        gs.record = inner
        _graph._link_observer[0] = prev_link
    return result, created


def _frontier(outs, created):
    """The edges of the traced graph that leave it: [(edge, meta)], unique."""
    slots = []
    seen_edges = set()
    seen_nodes = set()
    stack = []
    for o in outs:
        n = o._node
        if n is None:
            continue
        node = n.node if type(n) is Port else n
        if id(node) in created and id(node) not in seen_nodes:
            seen_nodes.add(id(node))
            stack.append(node)
    while stack:
        node = stack.pop()
        for e, m in zip(node.edges, node.meta):
            if e is None:
                continue
            if type(e) is Node or type(e) is Port:
                inner = e.node if type(e) is Port else e
                if id(inner) in created:
                    if id(inner) not in seen_nodes:
                        seen_nodes.add(id(inner))
                        stack.append(inner)
                    continue
                key = (id(inner), e.index if type(e) is Port else 0)
            else:
                key = id(e)
            if key not in seen_edges:
                seen_edges.add(key)
                slots.append((e, m))
    return slots


def _target_tensor(edge, meta):
    """A stand-in tensor naming `edge` as a target of the nested backward."""
    if isinstance(edge, Tensor):
        return edge
    return make_tensor(np.empty(0, dtype=meta[1]), edge, stop_gradient=False)


def recompute(function, *args, preserve_rng_state=True, use_reentrant=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate results
    for backward; they are recomputed when the backward pass needs them.

    Args:
        function: the segment to checkpoint (a function or a Layer).
        *args, **kwargs: its arguments.
        preserve_rng_state: restore the RNG state for the recomputation, so
            random ops (dropout) draw the same values as in the forward pass.
        use_reentrant: accepted for compatibility with Paddle; fw has one
            implementation, which supports ``fw.grad`` and ``create_graph``.

    Returns:
        What `function` returns.

    Examples:
        >>> import fw
        >>> w = fw.to_tensor([2.0], stop_gradient=False)
        >>> x = fw.to_tensor([3.0], stop_gradient=False)
        >>> y = fw.autograd.recompute(lambda t: t * w * w, x)
        >>> y.sum().backward()
        >>> float(w.grad), float(x.grad)
        (12.0, 4.0)
    """
    if not _mode.is_grad_enabled():
        return function(*args, **kwargs)
    rng = _get_rng() if preserve_rng_state else None
    result, created = _trace(function, args, kwargs)
    outs = _flat(result, [])
    slots = _frontier(outs, created)
    if not slots:  # nothing outside requires grad: an ordinary no-grad result
        detached = [wrap(o._data) for o in outs]
        return _rebuild(result, iter(detached))
    arg_tensors = _flat((args, kwargs), [])
    name = getattr(function, "__name__", type(function).__name__)
    out_meta = [(o._data.shape, o._data.dtype, o._data.dtype.kind in _FLOATISH and not o._sg)
                for o in outs]
    attrs = {"function": function, "args": args, "kwargs": kwargs, "rng": rng,
             "versions": [(t, version_of(t)) for t in arg_tensors], "name": name}
    node = _graph.custom_node(f"recompute({name})", _segment_backward, attrs, out_meta,
                              edges=[e for e, _ in slots], meta=[m for _, m in slots])
    new_outs = [make_tensor(o._data, Port(node, i), stop_gradient=False) if fl
                else wrap(o._data) for i, (o, (_, _, fl)) in enumerate(zip(outs, out_meta))]
    # the caller gets the result's structure with new output tensors; the traced
    # graph goes away with `result`
    return _rebuild(result, iter(new_outs))


def _segment_backward(node, g):
    st = node.attrs
    for t, v in st["versions"]:
        if version_of(t) != v:
            raise GradientError(
                f"recompute({st['name']}): an argument ({t.dtype.name}{t.shape}) was modified "
                f"in place after the forward pass; the recomputation would use the new values")
    gs = g if isinstance(g, tuple) else (g,)
    cur = None
    if st["rng"] is not None:
        cur = _get_rng()
        _set_rng(st["rng"])
    try:
        result, created = _trace(st["function"], st["args"], st["kwargs"])
    finally:
        if cur is not None:
            _set_rng(cur)
    outs = _flat(result, [])
    if len(outs) != len(gs):
        raise GradientError(f"recompute({st['name']}): the recomputation returned {len(outs)} "
                            f"tensors, the forward pass {len(gs)}")
    roots, seeds = [], []
    for o, gi in zip(outs, gs):
        if gi is not None and not o._sg:
            roots.append(o)
            seeds.append(gi)
    want = node.want
    targets = []
    pos = []
    for s, (e, m) in enumerate(zip(node.edges, node.meta)):
        if e is not None and want[s]:
            targets.append(_target_tensor(e, m))
            pos.append(s)
    res = [None] * len(node.edges)
    if roots and targets:
        frontier = set()
        for e in node.edges:
            if type(e) is Node:
                frontier.add(e)
            elif type(e) is Port:
                frontier.add(e.node)
        cg = _mode.is_grad_enabled()  # the outer pass runs rules in grad mode = create_graph
        grads = run_backward(roots, seeds, retain_graph=cg, create_graph=cg, inputs=targets,
                             allow_unused=True, frontier=frontier)
        for s, gr in zip(pos, grads):
            res[s] = gr
    return (res,)
