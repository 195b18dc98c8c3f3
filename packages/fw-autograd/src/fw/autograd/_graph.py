"""The eager tape: one `Node` per recorded op, built by `record`.

Layout (chosen so that recording ``a + b`` costs about a microsecond):

- A tensor computed by a recorded op has ``_sg=False`` and ``_node`` pointing
  at the Node (single-output ops) or at a `Port` ``(node, index)`` (one per
  output of a multi-output op). Leaves have ``_node=None``.
- ``node.edges`` has one entry per *tensor slot* of the op (the inputs, with a
  variadic input flattened): None when no gradient flows there, else the
  producer's ``_node`` (a Node or Port) or, for a leaf that requires grad, the
  leaf Tensor itself (its gradient is accumulated into ``.grad``). Edges are
  fixed at record time, so an in-place op that later rebases a tensor does not
  change the history of ops recorded before it.
- ``node.meta[slot]`` = (shape, numpy dtype) of that input: the engine casts and
  un-broadcasts the rule's gradient to it.
- What the rule reads is kept, nothing else: ``args`` (the inputs, with their
  version counters, when ``rule.inputs``) and ``outs`` (the output *arrays*,
  when ``rule.outputs`` — arrays, not Tensors, so the node does not keep its
  own outputs alive through a reference cycle).

A Node is also the ``ctx`` a VJP rule sees (see `fw.autograd._registry`).
"""

from __future__ import annotations

import numpy as np

from fw.autograd import _mode
from fw.autograd._registry import RULES, Rule
from fw.autograd._saved_hooks import ACTIVE as _HOOKS_ACTIVE
from fw.autograd._saved_hooks import PackedArgs
from fw.autograd._saved_hooks import current as _saved_hooks_current
from fw.autograd._saved_hooks import pack_args as _pack_args
from fw.autograd.errors import GradientError
from fw.core.internal import make_tensor, version_of
from fw.core.tensor import Tensor, wrap

# a Node is created without __init__: `record` stores every slot a rule or the engine reads
_new = object.__new__
_RULES_GET = RULES.get
_version_of = version_of
_ANOMALY_ANY = _mode._anomaly_any
# recompute's trace sets a set here to learn the ids of nodes built outside `record`
_link_observer = [None]

__all__ = ["Node", "Port", "record", "rebase", "node_of", "custom_node"]

_FLOATISH = frozenset("fcV")  # float, complex, and ml_dtypes' bfloat16 ('V')


class Port:
    """Output ``index`` of a multi-output `Node` (the ``_node`` of that output)."""

    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node = node
        self.index = index


class Node:
    # Set by `record`: op, rule, attrs, edges, meta, args, outs, out_meta, extra (and
    # versions / out_versions / nvar when used). Set by the engine before a rule runs:
    # want, _out_cache.
    __slots__ = ("op", "rule", "attrs", "args", "versions", "edges", "meta", "nvar", "outs",
                 "out_versions", "out_meta", "extra", "want", "_out_cache", "__weakref__")

    # ------------------------------------------------------------ ctx API for rules
    @property
    def name(self) -> str:
        return self.op.name

    @property
    def freed(self) -> bool:
        """Whether a backward without retain_graph released what the rule needs."""
        r = self.rule
        return r is not None and ((r.inputs and self.args is None)
                                  or (r.outputs and self.outs is None))

    @property
    def loc(self):
        ex = self.extra
        return None if ex is None else ex.loc

    @property
    def inputs(self) -> list:
        a = self.args
        if a is None:
            if self.freed:
                _raise_freed(self)
            raise GradientError(
                f"the VJP rule of '{self.op.name}' reads its inputs but is registered with "
                f"inputs=False (a bug in the rule's registration)")
        if a.__class__ is PackedArgs:  # saved under saved_tensors_hooks
            return a.unpacked()
        return a

    @property
    def outputs(self) -> tuple:
        c = self._out_cache
        if c is not None:
            return c
        outs = self.outs
        if outs is None:
            if self.freed:
                _raise_freed(self)
            raise GradientError(
                f"the VJP rule of '{self.op.name}' reads its outputs but is registered without "
                f"outputs=True (a bug in the rule's registration)")
        # With grad mode on (create_graph=True) the outputs carry this node as their
        # history, so a rule that uses them is differentiated through this op again.
        link = _mode._tls.enabled
        res = []
        for i, a in enumerate(outs):
            if link and a.dtype.kind in _FLOATISH:
                t = make_tensor(a, self if self.out_meta is None else Port(self, i), False)
            else:
                t = wrap(a)
            res.append(t)
        c = tuple(res)
        self._out_cache = c
        return c

    def _slot(self, i: int) -> int:
        v = self.op.variadic
        if v < 0 or i <= v:
            return i
        return i + self.nvar - 1

    def count(self, i: int) -> int:
        """The number of tensors in input `i` (the items of a variadic input)."""
        return self.nvar if i == self.op.variadic else 1

    def needs(self, i: int, j: int | None = None) -> bool:
        v = self.op.variadic
        want = self.want
        if v < 0:
            return i < len(want) and want[i]
        if i == v:
            if j is None:
                return any(want[v + k] for k in range(self.nvar))
            return want[v + j]
        s = self._slot(i)
        return s < len(want) and want[s]

    def shape(self, i: int, j: int | None = None) -> list:
        m = self.meta[self._slot(i) + (j or 0)]
        if m is None:
            a = self.args[i] if j is None else self.args[i][j]
            return list(np.shape(a._data if isinstance(a, Tensor) else a))
        return list(m[0])

    def dtype(self, i: int, j: int | None = None):
        from fw.core import dtypes as _dt

        m = self.meta[self._slot(i) + (j or 0)]
        if m is None:
            a = self.args[i] if j is None else self.args[i][j]
            return a.dtype if isinstance(a, Tensor) else _dt.from_numpy(np.asarray(a).dtype)
        return _dt.from_numpy(m[1])

    def __repr__(self) -> str:
        return f"<autograd Node {self.op.name}>"


def node_of(t):
    """(node, output index) of a non-leaf tensor, or None for a leaf."""
    n = t._node
    if n is None:
        return None
    if type(n) is Port:
        return n.node, n.index
    return n, 0


def _raise_freed(node):
    raise GradientError(
        f"trying to run backward through '{node.op.name}' a second time, but the tensors it "
        f"saved for backward were freed after the first backward. Pass retain_graph=True to "
        f"the first backward()/fw.grad() call if you need to differentiate the graph again")


def _edges(args, node):
    """Edges and metas of the tensor slots in `args` (general case)."""
    edges = []
    meta = []
    v = node.op.variadic
    for i, a in enumerate(args):
        if i == v:
            node.nvar = len(a)
            items = a
        else:
            items = (a,)
        for x in items:
            if isinstance(x, Tensor):
                d = x._data
                meta.append((d.shape, d.dtype))
                if x._sg:
                    edges.append(None)
                else:
                    n = x._node
                    edges.append(x if n is None else n)
            else:
                edges.append(None)
                meta.append(None)
    return edges, meta


def record(op, args, attrs, outputs):
    """fw-core's hook: an op ran with an input that requires grad."""
    if len(outputs) == 1:
        o = outputs[0]
        if o._data.dtype.kind not in _FLOATISH:
            return  # integer/bool results never require grad
    else:
        for o in outputs:
            if o._data.dtype.kind in _FLOATISH:
                break
        else:
            return
    node = _new(Node)
    node.op = op
    node.rule = rule = _RULES_GET(op.name)
    node.attrs = attrs
    node.extra = None
    # the common case, inlined: two plain inputs (binary ops, the fast paths)
    if len(args) == 2 and op.variadic < 0:
        a, b = args
        if type(a) is Tensor or isinstance(a, Tensor):
            d = a._data
            m0 = (d.shape, d.dtype)
            if a._sg:
                e0 = None
            else:
                n = a._node
                e0 = a if n is None else n
        else:
            e0 = m0 = None
        if type(b) is Tensor or isinstance(b, Tensor):
            d = b._data
            m1 = (d.shape, d.dtype)
            if b._sg:
                e1 = None
            else:
                n = b._node
                e1 = b if n is None else n
        else:
            e1 = m1 = None
        node.edges = (e0, e1)
        node.meta = (m0, m1)
    else:
        node.edges, node.meta = _edges(args, node)
    if rule is None or rule.inputs:
        # (an op without a rule keeps its inputs so the error at backward can describe them)
        node.args = args
        vs = []
        for a in args:
            if isinstance(a, Tensor):
                vs.append(_version_of(a))
            elif type(a) is list:
                for x in a:
                    if isinstance(x, Tensor):
                        vs.append(_version_of(x))
        node.versions = vs
        if _HOOKS_ACTIVE[0]:
            hooks = _saved_hooks_current()
            if hooks is not None:
                node.args = _pack_args(args, hooks)
    else:
        node.args = None
    if rule is not None and rule.outputs:
        node.outs = tuple(o._data for o in outputs)
        node.out_versions = [_version_of(o) for o in outputs]
    else:
        node.outs = None
    if len(outputs) == 1 and not op.variadic_out:
        node.out_meta = None
        o._sg = False
        o._node = node
    else:
        metas = []
        for i, o in enumerate(outputs):
            d = o._data
            fl = d.dtype.kind in _FLOATISH
            metas.append((d.shape, d.dtype, fl))
            if fl:
                o._sg = False
                o._node = Port(node, i)
        node.out_meta = metas
    if _ANOMALY_ANY[0] and _mode._tls.anomaly:
        node.extra = _Extra()
        node.extra.loc = _user_frames()


class CustomOp:
    """Stands in for an OpDef in a node whose backward is a Python function instead of
    a rule of the table (a PyLayer, a recomputed segment): one variadic input (the
    tensors it reads), any number of outputs."""

    inputs = ("inputs*",)
    input_names = ("inputs",)
    variadic = 0
    variadic_out = True
    differentiable = True
    optional = frozenset()

    def __init__(self, name):
        self.name = name


def custom_node(name, backward, attrs, out_meta, tensors=None, edges=None, meta=None):
    """A tape node named `name` whose VJP is ``backward(node, g)`` (PyLayer, recompute).

    Its inputs are either `tensors` (edges found as `record` finds them) or given as
    `edges` and their `meta` (recompute: the frontier of a traced segment). `out_meta`
    is ``[(shape, numpy dtype, differentiable)]`` per output; the caller links the
    outputs (``_node = Port(node, i)``). Honours anomaly mode and recompute's trace.
    """
    node = _new(Node)
    node.op = CustomOp(name)
    node.rule = Rule(name, backward, inputs=False, outputs=False)
    node.attrs = attrs
    node.extra = None
    node.args = None
    node.outs = None
    if tensors is not None:
        node.edges, node.meta = _edges([tensors], node)
    else:
        node.nvar = len(edges)
        node.edges = edges
        node.meta = meta
    node.out_meta = out_meta
    if _ANOMALY_ANY[0] and _mode._tls.anomaly:
        extra(node).loc = _user_frames()
    obs = _link_observer[0]
    if obs is not None:  # built inside a segment that recompute is tracing
        obs.add(id(node))
    return node


class _Extra:
    """Rarely present per-node state: tensor hooks, retain_grads, anomaly location."""

    __slots__ = ("hooks", "retain", "loc")

    def __init__(self):
        self.hooks = None
        self.retain = None
        self.loc = None


def extra(node) -> _Extra:
    ex = node.extra
    if ex is None:
        ex = node.extra = _Extra()
    return ex


def _user_frames():
    """(file, line, source text, the user's part of the stack) of the code that ran
    the op (anomaly mode only)."""
    import linecache
    import sys
    import traceback

    import fw

    fw_dirs = tuple(fw.__path__)
    frames = [f for f in traceback.extract_stack(sys._getframe(1))
              if not f.filename.startswith(fw_dirs) and not f.filename.startswith("<fw")]
    if not frames:
        return None
    last = frames[-1]
    text = linecache.getline(last.filename, last.lineno).strip()
    stack = "".join(traceback.format_list(frames[-6:]))
    return (last.filename, last.lineno, text, stack)


def rebase(x, out):
    """fw-core's hook after an in-place op ``x.op_()``: `out` (computed out of
    place and recorded) has been written into `x`; `x` takes over its history.
    Nodes recorded earlier keep their edges to x's old history, and a node that
    kept `out`'s array for backward keeps that array, not x's storage."""
    x._node = out._node
    x._sg = out._sg
