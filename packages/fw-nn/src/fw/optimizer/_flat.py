"""Flat buffers: many parameters updated by one kernel call.

A `FlatGroup` holds parameters that share a dtype, device and every per-parameter
hyper-parameter (learning-rate multiplier, regularizer, clipping, optimizer
specifics). It owns

- ``flat``: one contiguous 1-D buffer; each parameter's array is replaced by a
  view into it ("packed"), so the update kernel writes the parameters directly;
- ``gflat``: the gradients, one slot per parameter. A gradient array that is not
  already its slot is copied in and then *adopted*: the gradient tensor's array
  becomes the slot view, so after ``clear_grad(set_to_zero=True)`` the next
  backward accumulates straight into the buffer and no copy is needed;
- ``state``: the optimizer's per-element state (moments), one flat buffer each;
- ``scalars``: per-parameter scalar state (beta powers, step counters) as small
  arrays indexed by parameter;
- ``master``: float32 master weights of float16/bfloat16 parameters
  (``multi_precision``).

A parameter whose array is shared with something else at packing time (another
parameter, a tensor created from it) is not packed: its values are copied into
its slot before the update and back afterwards, so sharing is never broken.
When a parameter's array is replaced behind the optimizer's back (``layer.to``,
``_replace_data``) the group notices (the view identity check) and re-adopts the
new values, or asks to be rebuilt when the dtype or shape changed.
"""

from __future__ import annotations

import sys

import numpy as np

from fw.core.internal import xp_of
from fw.core.tensor import Tensor, bump_version, version_of

_ndarray = np.ndarray


def _like(a, buf):
    """`a` on `buf`'s device (a copy through the host when they differ; the buffers are
    made on the first parameter's device, so this happens only for mixed models)."""
    if type(a) is type(buf):
        return a
    from fw.core import place as _pl

    host = a if type(a) is _ndarray else _pl.backend_of(a).to_numpy(a)
    return host if type(buf) is _ndarray else _pl.backend_of(buf).asarray(host)
_LOW = ("float16", "bfloat16")


def _refs_ok(a) -> bool:
    """Nothing but the tensor refers to array `a` (so replacing it by a view of the
    flat buffer cannot break sharing). Counted references: the tensor's slot, the
    caller's local, this function's argument and getrefcount's own."""
    return sys.getrefcount(a) <= 4


class FlatGroup:
    """See the module docstring. `specs` lists the optimizer's states as
    ``(name, kind, init)``: kind "tensor" (one value per element), "rows" (a
    ``[init, n]`` table), "scalar" (one float per parameter) or "count" (one int
    per parameter); `init` is the initial value or a function of the group."""

    def __init__(self, params, key, specs, master: bool, shared: set):
        self.params = list(params)
        self.key = key
        self.master_on = master
        n = 0
        self.offsets, self.sizes, self.shapes = [], [], []
        for p in self.params:
            s = int(p._data.size)
            self.offsets.append(n)
            self.sizes.append(s)
            self.shapes.append(p._data.shape)
            n += s
        self.n = n
        self.dtype = self.params[0]._data.dtype
        self.flat = xp_of(self.params[0]._data).empty(n, dtype=self.dtype)
        self.like = self.flat
        self.pviews = []
        self.packed = []
        for p, o, s, shape in zip(self.params, self.offsets, self.sizes, self.shapes):
            a = p._data
            view = self.flat[o:o + s].reshape(shape)
            np.copyto(view, a)
            ok = type(a) is type(view) and id(p) not in shared and _refs_ok(a)
            del a
            if ok:
                p._data = view
            self.pviews.append(view)
            self.packed.append(ok)
        self.all_packed = all(self.packed)
        self.gflat = xp_of(self.flat).zeros(n, dtype=self.dtype)
        self.gviews = [self.gflat[o:o + s].reshape(shape)
                       for o, s, shape in zip(self.offsets, self.sizes, self.shapes)]
        # the dtype the kernel sees for param and grad: the float32 master copy of a
        # low-precision parameter, or the parameter's own dtype
        if master:
            self.master = self.flat.astype(np.float32)
            self.kdtype = np.dtype(np.float32)
        else:
            self.master = None
            self.kdtype = self.dtype
        sd = self.kdtype
        self.state_dtype = sd
        self.state = {}
        self.scalars = {}
        for name, kind, init in specs:
            if kind == "tensor":
                v = init(self) if callable(init) else init
                self.state[name] = xp_of(self.flat).full(n, v, dtype=sd)
            elif kind == "rows":  # [k, n] state (asgd's gradient table)
                rows = init(self)
                self.state[name] = xp_of(self.flat).zeros((rows, n), dtype=sd)
            else:
                v = init(self) if callable(init) else init
                pd = np.dtype(np.float32) if sd.name in _LOW else sd
                if kind == "count":
                    pd = np.dtype(np.int64)
                self.scalars[name] = np.full(len(self.params), v, dtype=pd)
        self.work = None
        self.version = None  # the parameters' version after our last update
        self.seg_starts = np.asarray(self.offsets, dtype=np.intp)
        self.present = [True] * len(self.params)
        self.all_present = True
        self.in_sync = True  # every parameter's scalar state is the same

    # ------------------------------------------------------------ parameters
    def check_storage(self):
        """True when every packed parameter still lives in `flat`; re-adopts a
        replaced array of the same shape and dtype; returns False when the group
        must be rebuilt (dtype/shape/device changed)."""
        params = self.params
        pviews = self.pviews
        if self.master is not None and self.version is not None and \
                version_of(params[0]) != self.version:
            # a parameter was written in place (set_value, set_state_dict): the
            # master copy follows the new values
            np.copyto(self.master, self.flat, casting="unsafe")
        for i, p in enumerate(params):
            a = p._data
            if a is pviews[i]:
                continue
            if not self.packed[i]:
                continue
            if type(a) is not type(pviews[i]) or a.dtype != self.dtype or \
                    a.shape != self.shapes[i]:
                return False
            np.copyto(pviews[i], a)
            if self.master is not None:
                o, s = self.offsets[i], self.sizes[i]
                np.copyto(self.master[o:o + s], pviews[i].reshape(-1), casting="unsafe")
            if _refs_ok(a):
                p._data = pviews[i]
            else:
                self.packed[i] = False
                self.all_packed = False
        return True

    def sync_in(self):
        """Copy unpacked parameters' values into their slots."""
        for i, p in enumerate(self.params):
            if not self.packed[i]:
                np.copyto(self.pviews[i], _like(p._data, self.pviews[i]), casting="unsafe")
                if self.master is not None:
                    o, s = self.offsets[i], self.sizes[i]
                    np.copyto(self.master[o:o + s], self.pviews[i].reshape(-1),
                              casting="unsafe")

    def sync_out(self):
        """Copy updated slots back into unpacked parameters; bump versions."""
        bumped = False
        for i, p in enumerate(self.params):
            if not self.packed[i]:
                p._data[...] = self.pviews[i]
                bump_version(p)
            elif not bumped and self.present[i]:
                bump_version(p)  # one counter per storage root: the whole buffer
                bumped = True
        if self.packed[0]:
            self.version = version_of(self.params[0])

    # ------------------------------------------------------------ gradients
    def gather(self) -> int:
        """Bring this step's gradients into `gflat`; returns how many parameters have
        one. Slots of parameters without a gradient are zeroed (they must not count
        in norms)."""
        count = 0
        gviews = self.gviews
        present = self.present
        for i, p in enumerate(self.params):
            g = p._grad
            if g is None:
                if present[i]:
                    present[i] = False
                gviews[i][...] = 0
                continue
            present[i] = True
            count += 1
            a = g._data
            if a is gviews[i]:
                continue
            if a.shape != self.shapes[i]:
                raise ValueError(f"the gradient of parameter '{p.name}' has shape "
                                 f"{list(a.shape)} but the parameter has shape "
                                 f"{list(self.shapes[i])}")
            np.copyto(gviews[i], _like(a, gviews[i]), casting="unsafe")
            if g._node is None and type(g._data) is type(gviews[i]) and a.dtype == self.dtype \
                    and type(g) is Tensor:
                g._data = gviews[i]
        self.all_present = count == len(self.params)
        return count

    def write_back_grads(self):
        """After modifying `gflat` in place (GradScaler.unscale_): make sure every
        gradient tensor that is not adopted sees the new values."""
        for i, p in enumerate(self.params):
            g = p._grad
            if g is not None and g._data is not self.gviews[i]:
                g._data[...] = self.gviews[i]

    def zero_grads(self):
        """``clear_grad(set_to_zero=True)``: one fill for the adopted gradients."""
        self.gflat.fill(0)
        bumped = False
        for i, p in enumerate(self.params):
            g = p._grad
            if g is None:
                continue
            if g._data is not self.gviews[i]:
                g._data[...] = 0
                bump_version(g)
            elif not bumped:
                bump_version(g)
                bumped = True

    def workspace(self):
        w = self.work
        if w is None:
            w = self.work = xp_of(self.like).empty(self.n, dtype=self.kdtype)
        return w

    # ------------------------------------------------------------ runs
    def runs(self, select=None):
        """[(first param index, end index, start offset, end offset)]: maximal runs of
        consecutive parameters that have a gradient and identical scalar state, so one
        kernel call can update each run. `select` (a bool per parameter, or None for
        all) restricts the runs to the selected parameters (a partial step)."""
        if select is None and self.all_present and self.in_sync:
            return [(0, len(self.params), 0, self.n)]
        keys = None
        if self.scalars:
            cols = list(self.scalars.values())
            keys = [tuple(c[i] for c in cols) for i in range(len(self.params))]
        out = []
        start = None
        for i in range(len(self.params) + 1):
            ok = i < len(self.params) and self.present[i] and (select is None or select[i])
            if start is not None and (not ok or (keys is not None and keys[i] != keys[start])):
                o0 = self.offsets[start]
                o1 = self.offsets[i - 1] + self.sizes[i - 1]
                out.append((start, i, o0, o1))
                start = None
            if ok and start is None:
                start = i
        return out

    def resync(self):
        if not self.scalars:
            self.in_sync = True
            return
        self.in_sync = all(bool((c == c[0]).all()) for c in self.scalars.values())

    # ------------------------------------------------------------ per-parameter state
    def param_state(self, i, name):
        """The state `name` of parameter `i`: an array view (tensor state) or a
        one-element array (scalar state)."""
        o, s = self.offsets[i], self.sizes[i]
        if name in self.state:
            st = self.state[name]
            if st.ndim == 2:
                return st[:, o:o + s].reshape((st.shape[0],) + tuple(self.shapes[i]))
            return st[o:o + s].reshape(self.shapes[i])
        return self.scalars[name][i:i + 1]

    def set_param_state(self, i, name, value):
        o, s = self.offsets[i], self.sizes[i]
        if isinstance(value, Tensor):
            value = value.numpy()
        value = np.asarray(value)
        if name in self.state:
            st = self.state[name]
            if st.ndim == 2:
                want = (st.shape[0],) + tuple(self.shapes[i])
                if value.shape != want:
                    raise ValueError(f"state '{name}' of parameter '{self.params[i].name}' "
                                     f"must have shape {list(want)}, got {list(value.shape)}")
                st[:, o:o + s] = value.reshape(st.shape[0], s)
            else:
                if value.size != s:
                    raise ValueError(f"state '{name}' of parameter '{self.params[i].name}' "
                                     f"must have shape {list(self.shapes[i])}, got "
                                     f"{list(value.shape)}")
                np.copyto(st[o:o + s], value.reshape(-1), casting="unsafe")
        else:
            if value.size != 1:
                raise ValueError(f"state '{name}' of parameter '{self.params[i].name}' must "
                                 f"hold one value, got shape {list(value.shape)}")
            self.scalars[name][i] = value.reshape(-1)[0]
        self.resync()

    def master_of(self, i):
        o, s = self.offsets[i], self.sizes[i]
        return self.master[o:o + s].reshape(self.shapes[i])
