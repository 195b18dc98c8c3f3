"""Eager SPMD: an op on distributed tensors runs on every rank's local block.

fw-core's dispatcher calls `run` (installed as ``fw.core.internal.dist_state``)
for every op while distributed tensors exist. For an op with a DistTensor input:

1. every tensor input gets a `Spec` (global shape, placements; a dense Tensor is
   Replicate on the mesh);
2. the op's rule (`spmd_rules.RULES[op.name]`) picks the placements its inputs
   must have and those of its outputs (a `Plan`); without a rule, or when the
   rule declines, the *replicate fallback* gathers every input whole, runs the op
   on every rank and counts it (`fallback_report()`, and a warning once per op);
3. the inputs are resharded (`_reshard`), the op runs on the local blocks through
   the ordinary dispatcher (so autograd records it), and the outputs are wrapped
   as DistTensors; each output's local shape is checked against its placements.

Gradients: a Replicate input of an op whose output is not Replicate along a mesh
axis gets a different gradient on each rank of that axis; it passes through
`_comm.grad_all_reduce` (identity forward, sum backward), so the gradient of a
Replicate tensor is whole on every rank (Megatron's "f" operator, generalised)."""

from __future__ import annotations

import warnings
from collections import Counter

from fw.core import dtypes as _dt
from fw.core.internal import build_state, dist_state
from fw.core.ir.types import TensorType
from fw.core.tensor import Tensor
from fw.distributed.auto_parallel import _comm
from fw.distributed.auto_parallel._layout import local_shape
from fw.distributed.auto_parallel._reshard import reshard_local
from fw.distributed.auto_parallel.dist_tensor import DistTensor, make_dist
from fw.distributed.auto_parallel.placement import Replicate

__all__ = ["Spec", "Plan", "run", "fallback_report", "reset_fallback_report", "install"]

_FALLBACKS: Counter = Counter()
_WARNED: set = set()
_PLANS: dict = {}
_MESHES: dict = {}


class Spec:
    """A tensor input as a rule sees it: global ``shape`` and ``placements``."""

    __slots__ = ("shape", "placements", "dtype")

    def __init__(self, shape, placements, dtype):
        self.shape = list(shape)
        self.placements = list(placements)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)


class Plan:
    """A rule's answer: the placements each input must have (None for non-tensors),
    those of each output; optionally ``attrs`` for the local op (a reshape's local
    target), ``op`` (another op name to run locally), ``shapes`` (the global output
    shapes, when the rule knows them better than the op's infer), ``post`` (a
    function applied to the local outputs) and ``local`` (``local(args, attrs) ->
    outputs``: the local computation composed of fw ops, run instead of the op —
    it works on eager Tensors and, while a program is built, on IR Values, so one
    function serves eager SPMD and dist.to_static; a vocabulary-parallel lookup)."""

    __slots__ = ("inputs", "outputs", "attrs", "op", "shapes", "post", "local")

    def __init__(self, inputs, outputs, attrs=None, op=None, shapes=None, post=None,
                 local=None):
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.op = op
        self.shapes = shapes
        self.post = post
        self.local = local


class Ctx:
    """What a rule gets: the op, its attrs, one Spec (or None) per input, the mesh,
    the global output shapes from the op's infer (None if it failed) and this
    rank's mesh coordinate."""

    __slots__ = ("op", "attrs", "specs", "mesh", "out_shapes", "coord")

    def __init__(self, op, attrs, specs, mesh, out_shapes, coord):
        self.op, self.attrs, self.specs, self.mesh = op, attrs, specs, mesh
        self.out_shapes, self.coord = out_shapes, coord

    def local_shape(self, shape, placements):
        return local_shape(shape, placements, self.mesh, self.coord)


def fallback_report() -> dict:
    """``{op name: times}`` the replicate fallback ran in this process (ops on
    distributed tensors without an SPMD rule: their inputs were gathered whole).

    Returns:
        dict.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto_parallel import fallback_report
            >>> isinstance(fallback_report(), dict)
            True
    """
    return dict(_FALLBACKS)


def reset_fallback_report() -> None:
    """Forget the counts of `fallback_report`.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto_parallel import fallback_report, reset_fallback_report
        >>> reset_fallback_report()
        >>> fallback_report()
        {}
    """
    _FALLBACKS.clear()


def _has_dist(args) -> bool:
    for a in args:
        if isinstance(a, DistTensor):
            return True
        if type(a) in (list, tuple):
            for x in a:
                if isinstance(x, DistTensor):
                    return True
    return False


def run(op, args, attrs):
    """The dispatcher hook: NotImplemented unless an input is a DistTensor."""
    if not _has_dist(args):
        return NotImplemented
    if build_state.builder is not None:
        raise NotImplementedError(f"{op.name}: distributed tensors are eager-only for now; "
                                  f"they cannot be used while a program is being built "
                                  f"(fw.jit.to_static / fw.static)")
    return _run(op, args, attrs)


def _spec_of(a, mesh):
    if isinstance(a, DistTensor):
        return Spec(a.shape, a.placements, a.dtype)
    if isinstance(a, Tensor):
        return Spec(a.shape, [Replicate()] * mesh.ndim, a.dtype)
    return None


def _type_of(a, spec):
    if spec is not None:
        return TensorType(spec.shape, spec.dtype)
    if a is None:
        return None
    if isinstance(a, (bool, int, float, complex)):
        return TensorType((), _dt.scalar_dtype(a))
    return None


def _mesh_of(op, args):
    mesh = None
    for a in args:
        items = a if type(a) in (list, tuple) else (a,)
        for x in items:
            if isinstance(x, DistTensor):
                if mesh is None:
                    mesh = x.process_mesh
                elif x.process_mesh != mesh:
                    raise ValueError(f"{op.name}: distributed inputs live on different meshes "
                                     f"({mesh} and {x.process_mesh}); reshard them onto one mesh "
                                     f"first")
    return mesh


def _infer_shapes(op, args, specs, attrs):
    try:
        types = []
        for i, a in enumerate(args):
            if i == op.variadic:
                types.append([_type_of(x, s) for x, s in zip(a, specs[i])])
            else:
                types.append(_type_of(a, specs[i]))
        out = op.infer(*types, **attrs)
    except Exception:
        return None
    outs = out if isinstance(out, (list, tuple)) else (out,)
    try:
        return [list(t.shape) for t in outs]
    except AttributeError:
        return None


def _run(op, args, attrs):
    from fw.core.internal import OPS

    mesh = _mesh_of(op, args)
    coord = _comm.my_coord(mesh)
    specs = []
    for i, a in enumerate(args):
        if i == op.variadic:
            specs.append([_spec_of(x, mesh) for x in a])
        else:
            specs.append(_spec_of(a, mesh))
    if op.canon is not None:
        attrs = op.canon(attrs)
    # plans depend only on the op, the inputs' specs, the attrs and the mesh: cached
    try:
        key = (op.name, id(mesh), _spec_key(specs), tuple(sorted(attrs.items())))
        hash(key)
    except TypeError:   # an unhashable attribute (a list): no caching
        key = (op.name, id(mesh), _spec_key(specs), repr(sorted(attrs.items())))
    hit = _PLANS.get(key)
    if hit is None:
        hit = _plan(op, args, attrs, specs, mesh, coord)
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[key] = hit
        _MESHES[id(mesh)] = mesh   # keeps id(mesh) from being reused while cached
    plan, shapes, fell_back = hit
    if fell_back:
        _count_fallback(op, specs)
    outs_pl = plan.outputs
    local_args = []
    for i, a in enumerate(args):
        if i == op.variadic:
            local_args.append([_localise(x, s, w, mesh, outs_pl)
                               for x, s, w in zip(a, specs[i], plan.inputs[i])])
        else:
            local_args.append(_localise(a, specs[i], plan.inputs[i], mesh, outs_pl))
    lop = OPS[plan.op] if plan.op is not None else op
    lattrs = plan.attrs if plan.attrs is not None else attrs
    from fw.core.dispatch import invoke

    out = plan.local(local_args, lattrs) if plan.local is not None \
        else invoke(lop, local_args, lattrs)
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    if plan.post is not None:
        outs = tuple(plan.post(outs))
    if shapes is None:  # no infer: only a fully replicated result has a known global shape
        shapes = [list(o.shape) for o in outs]
    if outs_pl is None:  # the fallback of an op with a variable number of outputs
        outs_pl = [[Replicate()] * mesh.ndim] * len(outs)
    res = []
    for k, (o, pl) in enumerate(zip(outs, outs_pl)):
        if not isinstance(o, Tensor):
            res.append(o)
            continue
        shape_k = shapes[k] if k < len(shapes) else [-1]
        if any(int(d) < 0 for d in shape_k):
            # a data-dependent size (nonzero, masked_select, unique): known only now;
            # only a whole (Replicate) result has the local block's shape as its own
            if any(not isinstance(p, Replicate) for p in pl):
                raise RuntimeError(
                    f"{op.name}: output {k} has a data-dependent global shape {shape_k}, "
                    f"but the SPMD rule gave it placements {pl}; such outputs must be "
                    f"Replicate (a bug in the rule of '{op.name}' in "
                    f"fw.distributed.auto_parallel.spmd_rules)")
            res.append(make_dist(o, mesh, pl, list(o.shape)))
            continue
        want = local_shape(shape_k, pl, mesh, coord)
        if list(o.shape) != want:
            raise RuntimeError(
                f"{op.name}: the SPMD rule gave output {k} placements {pl} of global shape "
                f"{shapes[k]}, which needs a local block of shape {want} on rank "
                f"{_comm.comm.world_rank()}, but the local op returned {list(o.shape)} (a bug "
                f"in the rule of '{op.name}' in fw.distributed.auto_parallel.spmd_rules)")
        res.append(make_dist(o, mesh, pl, shape_k))
    return res[0] if single else tuple(res)


def _localise(a, spec, want, mesh, outs_pl):
    if spec is None:
        return a
    if isinstance(a, DistTensor):
        x = reshard_local(a._local, spec.shape, spec.placements, want, mesh)
    else:
        x = reshard_local(a, spec.shape, spec.placements, want, mesh)
    if not x._sg:
        for ax in range(mesh.ndim):
            if isinstance(want[ax], Replicate) and any(
                    not isinstance(pl[ax], Replicate) for pl in (outs_pl or ())):
                x = _comm.grad_all_reduce(x, _comm.axis_group(mesh, ax))
    return x


def _spec_key(specs):
    out = []
    for s in specs:
        if isinstance(s, list):
            out.append(tuple(None if x is None else
                             (tuple(x.shape), tuple(x.placements), x.dtype) for x in s))
        else:
            out.append(None if s is None else (tuple(s.shape), tuple(s.placements), s.dtype))
    return tuple(out)


def _plan(op, args, attrs, specs, mesh, coord):
    """(plan, global output shapes or None, whether it is the fallback)."""
    from fw.distributed.auto_parallel.spmd_rules import RULES

    shapes = _infer_shapes(op, args, specs, attrs)
    plan = None
    rule = RULES.get(op.name)
    if rule is not None:
        plan = rule(Ctx(op, attrs, specs, mesh, shapes, coord))
    fell_back = plan is None
    if fell_back:
        plan = _fallback(op, specs, mesh)
    if plan.shapes is not None:
        shapes = plan.shapes
    return plan, shapes, fell_back


def _count_fallback(op, specs):
    _FALLBACKS[op.name] += 1
    moved = any(s is not None and any(not isinstance(p, Replicate) for p in s.placements)
                for ss in specs for s in (ss if isinstance(ss, list) else [ss]))
    if moved and op.name not in _WARNED:
        _WARNED.add(op.name)
        warnings.warn(f"fw.distributed.auto_parallel: op '{op.name}' has no SPMD rule for its "
                      f"input placements; its inputs are gathered whole (Replicate) and it runs "
                      f"on every rank (counted in auto_parallel.fallback_report())",
                      stacklevel=5)


def _fallback(op, specs, mesh):
    rep = [Replicate()] * mesh.ndim
    ins = [[rep if s is not None else None for s in ss] if isinstance(ss, list)
           else (rep if ss is not None else None) for ss in specs]
    n_out = op.num_outputs
    # a variable number of outputs (unbind, meshgrid, split): every one Replicate,
    # counted when the local op has run (`_run`)
    return Plan(ins, [rep] * n_out if n_out >= 0 else None)


def install():
    """Route ops on DistTensors here (idempotent)."""
    dist_state.run = run
    dist_state.active = True
