"""fw.core.internal — the internal ABI: what the other fw packages (fw-autograd,
fw-nn, fw-jit, fw-inference, …) may use of fw-core beyond its public API.

Users should not need anything here. Other fw packages use this module and
never fw-core's private modules (``fw.core._native``, ``fw.core.ops._registry``,
``fw.core.ops._api``, …) nor private names of its public modules
(``fw.core.tensor._new``, ``fw.core.ir.core._state``, …): import-linter (root
pyproject.toml) and ``packages/fw-core/tests/test_internal_abi.py`` enforce it.

Stability: every name here keeps its meaning within a release line of fw-core;
since all fw packages are released together with pinned versions, a change here
is made together with its users in one commit (grep the packages), never
silently. Adding a name is a design decision: document it below, say who uses
it, and prefer a public API where one fits.

The Tensor slot fields (part of this ABI, not wrapped in calls)
---------------------------------------------------------------
Every eager op reads them, so a function call per read would cost measurable
time on the hot paths (the autograd tape, the engine, the optimizers). Other
packages may therefore **read** these slots of any `Tensor` directly:

- ``t._data`` — the array (``numpy.ndarray`` on cpu, a CuPy array on gpu);
- ``t._sg`` — ``stop_gradient`` (bool);
- ``t._node`` — the autograd node that produced the tensor (an fw-autograd
  ``Node`` or ``Port``), None for a leaf.

fw-autograd (which owns the meaning of ``_node``) may also **store** ``_sg`` and
``_node`` of a tensor it records or rebases; fw-nn may store ``_data`` of a
parameter or buffer it updates in place (bumping its version, `bump_version`).
No package constructs a Tensor by hand (``object.__new__`` plus slot stores):
use `make_tensor` (or the public `fw.core.tensor.wrap` for a plain leaf).
"""

from __future__ import annotations

from fw.core import dispatch as _dispatch
from fw.core import tensor as _tensor
from fw.core.ir import core as _ir_core
from fw.core.kernels.cpu.collective import collectives
from fw.core.ops import OPS, get_op
from fw.core.tensor import array_version, bump_version, make_tensor, version_of

__all__ = [
    "make_tensor", "version_of", "array_version", "bump_version", "format_tensor",
    "tensor_hooks", "grad_state", "amp_state", "dist_state", "build_state", "OPS", "get_op",
    "native", "freeze", "xp_of", "device_scope", "replace_data", "collectives", "image_kernels",
]

# ---------------------------------------------------------------- tensors
# make_tensor(array, node=None, stop_gradient=True, cls=Tensor) -> Tensor
#   A Tensor (or subclass) over `array` (no copy) with autograd state. Users: fw-autograd
#   (outputs of PyLayer/recompute nodes, stand-ins for gradient targets), fw-nn
#   (Parameter), fw-jit. Defined next to `wrap` in fw.core.tensor; the public
#   `fw.core.tensor.wrap(array)` remains the spelling of a plain leaf.
# version_of(t) / array_version(array) / bump_version(t)
#   The in-place version counters: autograd saves `version_of` of the inputs it keeps
#   and raises if it moved before backward; whoever writes into a tensor's array in
#   place (optimizers, initializers, norm statistics, fw.jit's training step) calls
#   `bump_version` afterwards. Users: fw-autograd, fw-nn, fw-jit.


def format_tensor(t) -> str:
    """``repr`` of a tensor's values in Paddle's layout (``Tensor(shape=…, dtype=…,
    place=…, stop_gradient=…,\\n       [values])``), for subclasses that prefix it
    (fw-nn's ``Parameter``). Stable: the text follows Paddle's."""
    return _tensor._format_tensor(t)


def replace_data(t, array) -> None:
    """Give tensor `t` a new array (its storage changes: another shape, dtype or
    buffer), bumping its version so autograd and fw-nn's optimizers notice. Unlike
    an in-place write (``t._data[...] = v``), views of the old array no longer alias
    `t`. Users: fw-nn (``Layer.to`` casts, amp O2 decoration) and fw-distributed
    (ZeRO stage 3 frees a parameter's full array between steps and gathers it back).
    The array must be a device array of `t`'s backend (``numpy.ndarray`` on cpu)."""
    t._replace_data(array)


# ---------------------------------------------------------------- hook states
tensor_hooks = _tensor._autograd
"""The `Tensor` methods fw-autograd provides: ``backward``, ``register_hook``,
``retain_grads``, ``grad_enabled`` (class attributes, None until fw-autograd is
attached; ``Tensor.backward`` and friends forward to them). Filled in by
fw-autograd's ``_install``; read only by fw-core."""

grad_state = _dispatch.grad_state
"""The autograd hook of eager dispatch: ``enabled`` (grad mode: True, False or a
per-thread marker), ``record(op, args, attrs, outputs)`` (builds a tape node),
``rebase(x, out)`` (after an in-place op), ``available`` (fw-autograd attached).
Filled in by fw-autograd (which owns grad mode); read by fw-core's dispatch and
by fw-jit (is grad mode on?). Only fw-autograd writes it (fw-autograd's
recompute temporarily wraps ``record`` to learn which nodes a segment builds)."""

amp_state = _dispatch.amp_state
"""The automatic-mixed-precision hook of dispatch: while ``enabled``,
``cast_args(op, args) -> args`` may cast an op's inputs before it runs or is
emitted. Filled in by fw.amp (fw-nn's ``auto_cast``); read by fw-core's dispatch
and fw-jit (a traced function records the amp state it was traced under)."""

dist_state = _dispatch.dist_state
"""The distributed-tensor hook of dispatch: while ``active``, ``run(op, args, attrs)``
sees every op that reaches ``fw.core.dispatch.invoke`` first and returns its result,
or ``NotImplemented`` when no input is a distributed tensor. Filled in by
fw-distributed's auto-parallel (eager SPMD on ``DistTensor``s) when the first
distributed tensor is made; read only by fw-core's dispatch. Costs one attribute
test per dispatched op while inactive."""

build_state = _ir_core._state
"""The IR build state: ``builder`` (the `Builder` ops emit into; None while
eager — `fw.core.ir.core.current_builder()` reads it) and ``implicit`` (fw.static's
static mode: ``implicit(op, args, attrs)`` emits an op called eagerly on a
symbolic Value). Read on hot paths (hence an object, not a function); written by
fw-core's builders (`fw.core.ir.building`/`trace`), fw-jit and fw.static; fw-autograd
reads ``builder`` while emitting backward programs."""

# ---------------------------------------------------------------- collectives
collectives.__doc__ = """The communication hook of the collective ops (``c_allreduce``,
``c_broadcast``, ``c_reduce``, ``c_allgather``, ``c_reducescatter``; see
`fw.core.ops.collective`): ``collectives.register_backend(fn)`` makes
``fn(op_name, x, attrs) -> array`` run them (returns the previous backend),
``collectives.unregister_backend(fn=None)`` removes it, ``collectives.backend`` is
the current one (None: the ops run their one-rank references). fw-core never
imports a communication library. Users: fw-distributed registers its engine in
``init_parallel_env`` and removes it in ``destroy_process_group``."""

# ---------------------------------------------------------------- op table
# OPS: {name: OpDef}, the op table; get_op(name) -> OpDef (raises for an unknown name).
#   The same objects as `fw.core.ops.OPS` / `fw.core.ops.get_op`; listed here because
#   packages look ops up at import time to prebind them (fw-nn, fw-jit; fw-inference
#   emits them when it converts a Paddle model). Read-only for them: ops are declared
#   in fw-core, rules and lowerings live in each package's own registry.


# ---------------------------------------------------------------- native kernels
def native():
    """The native-kernel module (``fw.core._native``: ``available``,
    ``set_num_threads``/``get_num_threads``, ``set_cache_capacity``, ``cache_info``,
    ``clear_cache``), or None when this fw-core has no native extension. Users:
    fw-inference (thread count and oneDNN primitive cache of a predictor). The names
    listed are stable; the module's kernels themselves are fw-core's business."""
    try:
        from fw.core import _native
    except ImportError:
        return None
    return _native


def freeze(array) -> int:
    """Promise that `array` (a numpy array) never changes again: it becomes read-only
    and gets a stamp under which the native kernels keep it reordered into their
    preferred layout (weight prepacking; see :mod:`fw.core.kernels.frozen`). Returns
    the stamp, 0 when the array's bytes stay writeable through a base array. Users:
    fw-inference (a predictor's weights)."""
    from fw.core.kernels.frozen import freeze as _freeze

    return _freeze(array)


def image_kernels():
    """The native image kernels for fw-vision, or None when this fw-core has no native
    extension (or ``FW_DISABLE_NATIVE=1``); callers then run their NumPy reference.

    A namespace of five functions (csrc/image.cpp; each validates its arguments and
    raises TypeError / ValueError naming itself, then runs without the GIL):

    - ``nms(boxes, threshold, normalized=True, categories=None) -> int64 array``: greedy
      IoU suppression over float64 [N, 4] boxes already in priority order; with int64
      [N] ``categories`` a box suppresses only its own category. Kept positions, ascending.
    - ``resize(img, ty, wy, tx, wx, mode, out)``: separable resize of a C-contiguous
      uint8/float32 HWC image through [dst, k] tap tables (int64 indices; float32
      weights for ``mode="float"``, int32 fixed-point ones for ``"u8_linear"`` /
      ``"u8_wide"``), into ``out``.
    - ``resize_nearest(img, iy, ix, out)``: ``out = img[iy][:, ix]`` for any dtype.
    - ``warp(img, matrix, interpolation, border, out)``: constant-border warp of a
      uint8/float32 HWC image; ``matrix`` is the float64 [2, 3] inverse affine map or
      the float32 [3, 3] inverse homography, ``border`` float64 [C].
    - ``color(img, op, value, out)``: a uint8 HW3 (BGR) image's hue shifted by the
      integer ``value`` in 8-bit HSV_FULL (``op="hue"``, the only op), into ``out``.

    Users: fw-vision (``ops.nms``, the "cv2" transforms backend). The numerics are
    fw-vision's NumPy reference's, bit for bit (its tests compare them)."""
    from types import SimpleNamespace

    try:
        from fw.core import _native
    except ImportError:
        return None
    c = _native.C
    if c is None or not hasattr(c, "image_nms"):
        return None
    return SimpleNamespace(nms=c.image_nms, resize=c.image_resize,
                           resize_nearest=c.image_resize_nearest, warp=c.image_warp,
                           color=c.image_color)


# ---------------------------------------------------------------- devices
def xp_of(*arrays):
    """The array module (numpy, cupy, a plugin backend's) of the first device array
    among `arrays`; numpy when all are host values. Code that makes new arrays next to
    a tensor's (``xp_of(a).zeros(n)``) keeps them on its device. Users: fw-nn (the
    optimizers' flat buffers)."""
    from fw.core.ops._xp import xp_of as _xp_of

    return _xp_of(*arrays)


def device_scope(place):
    """A context manager making `place` the current device for its block (new tensors
    are created there) and restoring the previous one, for this thread's work. Users:
    fw-autograd (a VJP rule runs on its gradients' device, so the constants it makes
    go there too)."""
    from contextlib import contextmanager

    from fw.core import place as _pl

    @contextmanager
    def scope():
        old = _pl._current[0]
        _pl._current[0] = place
        try:
            yield place
        finally:
            _pl._current[0] = old

    return scope()
