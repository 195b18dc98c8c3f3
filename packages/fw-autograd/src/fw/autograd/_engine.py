"""The eager backward pass over the tape of `fw.autograd._graph`.

`run_backward` works in three steps:

1. Seed: each root tensor gets its gradient (ones when none is given, as in
   Paddle, also for a non-scalar root).
2. Plan: a depth-first walk from the roots' nodes counts, for every node and
   every leaf, how many edges from reachable nodes lead into it (``deps``), and
   fixes each node's ``want`` mask (which of its input slots need a gradient).
   For `fw.grad` with explicit ``inputs`` the mask is pruned to edges that lead
   to one of the inputs, so the rest of the graph is not differentiated.
3. Run: nodes whose gradients are complete (deps = 0) are processed from a
   stack: output hooks run, ``retain_grads`` tensors get their ``.grad``, the
   VJP rule maps output gradients to input gradients, which are cast to the
   input dtype, summed over broadcast dimensions and added into the buffers of
   the nodes/leaves they flow to. A leaf's gradient is delivered (hooks, then
   accumulation into ``.grad``) as soon as its last contribution arrives, so
   a hook on a parameter fires while the rest of the backward still runs.

Without ``retain_graph`` each node drops what it saved once it has run; a later
pass through it raises `GradientError`. With ``create_graph`` the rules run
with grad mode on, so the backward is itself recorded (higher derivatives).
"""

from __future__ import annotations

import numpy as np

from fw.autograd import _mode
from fw.autograd._graph import _FLOATISH, Node, Port, _raise_freed
from fw.autograd._hooks import between_ops as _between_ops
from fw.autograd._shapes import unbroadcast
from fw.autograd.errors import AnomalyError, GradientError
from fw.core import place as _pl
from fw.core.errors import InternalError, UnsupportedError
from fw.core.internal import array_version, bump_version, device_scope, version_of
from fw.core.tensor import Tensor, wrap

__all__ = ["run_backward", "fit_grad"]


def _target(e):
    """edge -> (node, output index) or (leaf tensor, -1)."""
    t = type(e)
    if t is Node:
        return e, 0
    if t is Port:
        return e.node, e.index
    return e, -1


def _describe(t) -> str:
    return f"{t.dtype.name}{list(t._data.shape)}"


def _seed(root, g, i):
    """The initial gradient of `root` (ones when `g` is None)."""
    import fw

    if g is None:
        return wrap(np.ones_like(root._data))
    if not isinstance(g, Tensor):
        g = fw.to_tensor(g, dtype=root.dtype)
    if list(g._data.shape) != list(root._data.shape):
        raise GradientError(f"grad_tensors[{i}] has shape {list(g._data.shape)} but the tensor "
                            f"it is the gradient of has shape {list(root._data.shape)}")
    if g._data.dtype != root._data.dtype:
        g = g.astype(root.dtype)
    return g


def run_backward(roots, grads, *, retain_graph=False, create_graph=False, inputs=None,
                 allow_unused=False, no_grad_vars=None, frontier=None):
    """Differentiate `roots` (seeded with `grads`) back through the tape.

    With ``inputs=None`` gradients are accumulated into the ``.grad`` of every
    leaf reached (``Tensor.backward``). Otherwise the gradients of `inputs` are
    returned (a list, None for unreached inputs when `allow_unused`) and no
    ``.grad`` is touched (``fw.grad``). Nodes in `frontier` are not differentiated
    through (the nested backward of `recompute` stops at the graph outside it)."""
    prev_mode = _mode._set(bool(create_graph))
    try:
        return _run(roots, grads, retain_graph, create_graph, inputs, allow_unused,
                    no_grad_vars, frontier)
    finally:
        _mode._set(prev_mode)


def _run(roots, grads, retain_graph, create_graph, inputs, allow_unused, no_grad_vars,
         frontier):
    functional = inputs is not None
    buf: dict = {}  # node -> [grad per output]
    leaf_buf: dict = {}  # id(leaf) -> grad
    leaves: dict = {}  # id(leaf) -> leaf
    handed: set = set()  # ids of gradient tensors stored somewhere already (aliasing guard)
    root_nodes = []
    for i, (r, g) in enumerate(zip(roots, grads)):
        if not isinstance(r, Tensor):
            raise GradientError(f"outputs[{i}] must be a Tensor, got {type(r).__name__}")
        if r._sg:
            raise GradientError(
                f"outputs[{i}] ({_describe(r)}) does not require grad: it has "
                f"stop_gradient=True, so nothing it was computed from requires grad (or it was "
                f"computed under fw.no_grad())")
        g = _seed(r, g, i)
        handed.add(id(g))
        n = r._node
        if n is None:
            k = id(r)
            leaves[k] = r
            leaf_buf[k] = g if k not in leaf_buf else leaf_buf[k] + g
            continue
        node, idx = _target(n)
        b = buf.get(node)
        if b is None:
            b = buf[node] = [None] * (1 if node.out_meta is None else len(node.out_meta))
            root_nodes.append(node)
        b[idx] = g if b[idx] is None else b[idx] + g

    # ---- targets of fw.grad and blocked tensors
    leaf_targets: dict = {}  # id(leaf) -> position in inputs
    port_targets: dict = {}  # (node, idx) -> [positions]
    if functional:
        for j, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise GradientError(f"inputs[{j}] must be a Tensor, got {type(x).__name__}")
            if x._node is None:
                leaf_targets.setdefault(id(x), []).append(j)
                leaves[id(x)] = x
            else:
                port_targets.setdefault(_target(x._node), []).append(j)
    blocked_leaves = set()
    blocked_ports = set()
    for x in no_grad_vars or ():
        if x._node is None:
            blocked_leaves.add(id(x))
        else:
            blocked_ports.add(_target(x._node))

    # ---- plan
    nested = frontier is not None
    frontier = frontier or ()
    deps: dict = {}
    leaf_deps: dict = {}
    if not functional and not blocked_leaves and not blocked_ports and not frontier:
        # a plain backward(): every edge is wanted; one walk counts the incoming edges
        wants = leads = None
        stack = list(root_nodes)
        seen = set(root_nodes)
        while stack:
            node = stack.pop()
            for e in node.edges:
                if e is None:
                    continue
                te = type(e)
                if te is Node:
                    t = e
                elif te is Port:
                    t = e.node
                else:
                    k = id(e)
                    leaf_deps[k] = leaf_deps.get(k, 0) + 1
                    leaves[k] = e
                    continue
                deps[t] = deps.get(t, 0) + 1
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
    else:
        wants, leads = _plan(root_nodes, frontier, functional, leaf_targets, port_targets,
                             blocked_leaves, blocked_ports)
        # count the incoming gradients of the nodes and leaves reached by wanted edges
        stack = list(root_nodes)
        visited = set(root_nodes)
        while stack:
            node = stack.pop()
            for e, w in zip(node.edges, wants[node]):
                if not w:
                    continue
                t, idx = _target(e)
                if idx < 0:
                    k = id(t)
                    leaf_deps[k] = leaf_deps.get(k, 0) + 1
                    leaves[k] = t
                else:
                    deps[t] = deps.get(t, 0) + 1
                    if t not in visited:
                        visited.add(t)
                        stack.append(t)

    results = [None] * len(inputs) if functional else None
    anomaly = _mode._anomaly_any[0] and _mode._tls.anomaly

    def deliver_leaf(k):
        t = leaves[k]
        g = leaf_buf.pop(k, None)
        if g is None:
            return
        # (a nested pass of recompute leaves the hooks to the outer pass)
        hooks = t._hooks if not nested else None
        if hooks:
            for h in list(hooks.values()):
                r = h(g)
                if r is not None:
                    g = _as_grad(r, t, "a hook")
        if functional:
            for j in leaf_targets.get(k, ()):
                results[j] = g
            return
        _accumulate(t, g, create_graph, handed)

    ready = [n for n in root_nodes if deps.get(n, 0) == 0]
    between = _between_ops  # (register_backward_op_callback; empty: one test per op)
    while ready:
        if between:
            for f in list(between.values()):
                f()
        node = ready.pop()
        gs = buf.pop(node, None)
        at_frontier = node in frontier
        if gs is not None:
            if node.extra is not None and not at_frontier:
                _output_hooks(node, gs, create_graph, handed)
            if port_targets:
                for idx in range(len(gs)):
                    for j in port_targets.get((node, idx), ()):
                        results[j] = gs[idx]
        edges = node.edges
        if wants is None:
            want = [e is not None for e in edges]
            lead = True
        else:
            want = wants[node]
            lead = leads.get(node)
        if gs is not None and lead and (gs[0] is not None if len(gs) == 1 else
                                        any(g is not None for g in gs)):
            node.want = want
            in_grads = _apply_rule(node, gs, anomaly)
        else:
            in_grads = None
        if not retain_graph and not at_frontier:
            node.args = node.outs = node._out_cache = None  # free what backward needed
        meta = node.meta
        for s in range(len(edges)):
            if not want[s]:
                continue
            e = edges[s]
            te = type(e)
            if te is Node:
                t, idx = e, 0
            elif te is Port:
                t, idx = e.node, e.index
            else:
                t, idx = e, -1
            gi = in_grads[s] if in_grads is not None else None
            if gi is not None:
                gi = fit_grad(gi, meta[s], node, s)
                if gi is not None and (anomaly or node.loc is not None):
                    _check_finite(gi, node, s)
            if idx < 0:
                k = id(t)
                if gi is not None:
                    cur = leaf_buf.get(k)
                    leaf_buf[k] = gi if cur is None else cur + gi
                c = leaf_deps[k] - 1
                leaf_deps[k] = c
                if c == 0:
                    deliver_leaf(k)
            else:
                if gi is not None:
                    b = buf.get(t)
                    if b is None:
                        b = buf[t] = [None] * (1 if t.out_meta is None else len(t.out_meta))
                    cur = b[idx]
                    b[idx] = gi if cur is None else cur + gi
                c = deps[t] - 1
                deps[t] = c
                if c == 0:
                    ready.append(t)
    # leaves seeded directly (a root that is a leaf) and never reached by an edge
    for k in list(leaf_buf):
        if leaf_deps.get(k, 0) == 0:
            deliver_leaf(k)
    if functional:
        for j, x in enumerate(inputs):
            if results[j] is None and not allow_unused:
                raise GradientError(
                    f"inputs[{j}] ({_describe(x)}) is not reachable from the outputs (it was not "
                    f"used to compute them, or only through stop_gradient tensors); pass "
                    f"allow_unused=True to get None for it")
        return results
    return None


def _plan(root_nodes, frontier, functional, leaf_targets, port_targets, blocked_leaves,
          blocked_ports):
    """Which input slots of each reachable node need a gradient (`wants`) and which
    nodes must run at all (`leads`), for fw.grad's pruning, blocked tensors and a
    recompute frontier: a depth-first walk gives the nodes in post-order, so each
    producer is decided before its consumers."""
    order = []
    seen = set(root_nodes)
    stack = [(n, iter(() if n in frontier else n.edges)) for n in root_nodes]
    while stack:
        node, it = stack[-1]
        for e in it:
            if e is None:
                continue
            t, idx = _target(e)
            if idx >= 0 and t not in seen:
                seen.add(t)
                stack.append((t, iter(() if t in frontier else t.edges)))
                break
        else:
            stack.pop()
            order.append(node)
    leads: dict = {}
    wants: dict = {}
    for node in order:
        if node in frontier:
            wants[node] = [False] * len(node.edges)
            leads[node] = False
            continue
        want = []
        any_want = False
        for e in node.edges:
            w = False
            if e is not None:
                t, idx = _target(e)
                if idx < 0:
                    k = id(t)
                    w = k not in blocked_leaves and (not functional or k in leaf_targets)
                elif (t, idx) not in blocked_ports:
                    w = leads.get(t, False) or (t, idx) in port_targets
            want.append(w)
            any_want = any_want or w
        wants[node] = want
        leads[node] = any_want
    return wants, leads


def _as_grad(r, t, what):
    if not isinstance(r, Tensor):
        import fw

        r = fw.to_tensor(r, dtype=t.dtype)
    if list(r._data.shape) != list(t._data.shape):
        raise GradientError(f"{what} returned a gradient of shape {list(r._data.shape)} for a "
                            f"tensor of shape {list(t._data.shape)}")
    return r


def _output_hooks(node, gs, create_graph, handed):
    ex = node.extra
    if ex is None:
        return
    hooks = ex.hooks
    if hooks:
        for idx, hs in hooks.items():
            g = gs[idx]
            if g is None:
                continue
            for h in list(hs.values()):
                r = h(g)
                if r is not None:
                    g = r if isinstance(r, Tensor) else wrap(np.asarray(r, dtype=g._data.dtype))
            gs[idx] = g
    retain = ex.retain
    if retain:
        for idx, ref in retain.items():
            t = ref()
            if t is not None and gs[idx] is not None:
                _accumulate(t, gs[idx], create_graph, handed)


def _device_of(gs):
    """The device of a node's incoming gradients (None for the cpu, the common case)."""
    for g in gs:
        if g is not None and type(g._data) is not np.ndarray:
            return _pl.place_of(g._data)
    return None


def _accumulate(t, g, create_graph, handed):
    """Add `g` into ``t.grad``: in place when that is safe and no graph is being built."""
    old = t._grad
    if old is None:
        if create_graph:
            t._grad = g.clone() if id(g) in handed else g
        else:
            a = g._data
            if id(g) in handed or a.base is not None or not getattr(a.flags, "writeable", True):
                g = wrap(a.copy())
            g._sg = True
            g._node = None
            t._grad = g
        handed.add(id(t._grad))
        return
    if not create_graph and old._node is None:
        a = old._data
        if getattr(a.flags, "writeable", True) and a.shape == g._data.shape and \
                a.dtype == g._data.dtype:
            a += g._data
            bump_version(old)
            return
    t._grad = old + g
    handed.add(id(t._grad))


def _apply_rule(node, gs, anomaly):
    rule = node.rule
    op = node.op
    if rule is None:
        raise UnsupportedError(
            f"{op.name}: no gradient rule is registered for this op, so it cannot be "
            f"differentiated (fw-autograd never returns zeros in place of a missing rule). Add "
            f"a VJP rule with @vjp({op.name!r}) in fw/autograd/rules/, or compute this part "
            f"under fw.no_grad() / with stop_gradient=True inputs")
    args, outs = node.args, node.outs
    if (rule.inputs and args is None) or (rule.outputs and outs is None):
        _raise_freed(node)
    if args is not None and node.versions or outs is not None:
        _check_versions(node)
    om = node.out_meta
    dev = _device_of(gs)
    if om is None:
        g = gs[0]
    else:
        g = []
        for i, (shape, dtype, fl) in enumerate(om):
            gi = gs[i]
            if gi is None and fl:
                gi = wrap(np.zeros(shape, dtype) if dev is None else
                          _pl.get_backend(dev.kind).xp.zeros(shape, dtype))
            g.append(gi)
        g = tuple(g)
    node._out_cache = None
    try:
        if dev is None or dev == _pl.current_place():  # (a scope costs 2-3 us a node)
            res = rule.fn(node, g)
        else:  # constants a rule builds (fw.to_tensor(...)) go to the device
            with device_scope(dev):
                res = rule.fn(node, g)
    finally:
        node._out_cache = None
    # the common shapes first: a fixed number of inputs, one gradient or a tuple of them
    if op.variadic < 0:
        n_in = len(op.inputs)
        tr = type(res)
        if n_in == 1:
            if tr is not tuple and tr is not list:
                return (res,)
        elif tr is tuple and len(res) == n_in:
            return res
    return _flatten_result(node, res)


def _flatten_result(node, res):
    op = node.op
    n_in = len(op.inputs)
    v = op.variadic
    if n_in == 1:
        if v == 0:
            # a list of gradients for the items, possibly wrapped as the op's one input
            if isinstance(res, (tuple, list)) and len(res) == 1 and \
                    isinstance(res[0], (list, tuple)):
                res = res[0]
            res = list(res)
            if len(res) != node.nvar:
                raise InternalError(f"the VJP rule of '{op.name}' returned {len(res)} "
                                    f"gradients for {node.nvar} inputs")
            return res
        if isinstance(res, (tuple, list)):
            if len(res) != 1:
                raise InternalError(f"the VJP rule of '{op.name}' returned {len(res)} gradients "
                                    f"for an op with one input")
            res = res[0]
        return [res]
    if not isinstance(res, (tuple, list)) or len(res) != n_in:
        raise InternalError(f"the VJP rule of '{op.name}' must return {n_in} gradients (one per "
                            f"input, None for none), got {res!r:.200}")
    if v < 0:
        return list(res)
    out = []
    for i, r in enumerate(res):
        if i == v:
            items = list(r) if r is not None else [None] * node.nvar
            if len(items) != node.nvar:
                raise InternalError(f"the VJP rule of '{op.name}' returned {len(items)} "
                                    f"gradients for {node.nvar} items of input "
                                    f"'{op.input_names[v]}'")
            out.extend(items)
        else:
            out.append(r)
    return out


def _check_versions(node):
    if node.args is not None and node.versions:
        vs = node.versions
        k = 0
        op = node.op
        for i, a in enumerate(node.args):
            items = a if type(a) is list else (a,)
            for x in items:
                if isinstance(x, Tensor):
                    now = version_of(x)
                    if now != vs[k]:
                        _raise_modified(node, f"input '{op.input_names[i]}' ({_describe(x)})",
                                        vs[k], now)
                    k += 1
    if node.outs is not None:
        ov = node.out_versions
        for i, a in enumerate(node.outs):
            now = array_version(a)
            if now != ov[i]:
                _raise_modified(node, f"output {i}", ov[i], now)


def _raise_modified(node, what, old, now):
    where = ""
    if node.loc is not None:
        where = f" (the op was called at {node.loc[0]}:{node.loc[1]}: {node.loc[2]})"
    raise GradientError(
        f"{node.op.name}: its {what} was saved for the gradient computation and has been "
        f"modified by an in-place operation since (version {old} -> {now}){where}; the "
        f"gradient would be wrong. Use the out-of-place op, or clone() the tensor before "
        f"modifying it")


def fit_grad(g, meta, node, slot):
    """Cast `g` to the input's dtype (real part for a real input) and sum it over
    the dimensions the op broadcast."""
    if type(g) is Tensor:  # the usual case: already the input's dtype and shape
        a = g._data
        shape, dtype = meta
        if a.dtype is dtype and a.shape == shape and dtype.kind in _FLOATISH:
            return g
    if not isinstance(g, Tensor):
        if type(g).__name__ == "Value":
            raise InternalError(f"the VJP rule of '{node.op.name}' returned a symbolic value "
                                f"while differentiating eagerly")
        import fw

        g = fw.to_tensor(g, dtype=meta[1])
    shape, dtype = meta
    if dtype.kind not in _FLOATISH:
        return None  # an integer input (with stop_gradient=False) gets no gradient
    a = g._data
    if a.dtype != dtype:
        if a.dtype.kind == "c" and dtype.kind != "c":
            import fw

            g = fw.real(g)
            a = g._data
        if a.dtype != dtype:
            g = g.astype(dtype)
            a = g._data
    if a.shape != shape:
        g = unbroadcast(g, shape, node.op.name)
    return g


def _check_finite(g, node, slot):
    a = g._data
    if a.dtype.kind not in _FLOATISH or a.size == 0:
        return
    if _mode._tls.anomaly_check_nan is False:
        return
    if bool(np.isfinite(np.asarray(a, dtype=np.complex128 if a.dtype.kind == "c"
                                   else np.float64)).all()):
        return
    op = node.op
    v = op.variadic
    if v < 0 or slot < v:
        name = op.input_names[slot]
    elif slot < v + node.nvar:
        name = f"{op.input_names[v]}[{slot - v}]"
    else:
        name = op.input_names[slot - node.nvar + 1]
    bad = "NaN" if np.isnan(np.asarray(a, dtype=np.complex128)).any() else "Inf"
    if node.loc is not None:
        fn, line, text, stack = node.loc
        where = f"\nthe forward op was called at {fn}:{line}:\n    {text}\nforward stack:\n{stack}"
    else:
        where = (" (its source line is unknown: the op was recorded before anomaly mode was "
                 "turned on)")
    raise AnomalyError(f"the backward of '{op.name}' produced {bad} in the gradient of its input "
                       f"'{name}'{where}")
