"""A compiled GPU program replayed as one CUDA graph (``FW_GPU_GRAPHS=1``).

A to_static train step of a small model is launch-bound: each of its ~100 kernels
costs 10-20 us of Python and a launch, more than the GPU needs to run it. Captured
once into a CUDA graph (``cupy.cuda.Stream.begin_capture``/``end_capture``), the
whole step is one ``cudaGraphLaunch`` (PyTorch's ``torch.cuda.graphs`` follows the
same plan: warm-up, a private memory pool, static input buffers).

How a program runs here (`GraphedProgram`):

1. the first `WARMUP` calls run normally, so CuPy has compiled every kernel;
2. the next call captures. Every array the graph reads must stay at one address:
   - the inputs are copied into static buffers made for the graph;
   - the device parameters are the captured tensors' own arrays (kept by identity:
     a parameter whose array is replaced, ``set_value`` with another shape or a
     load, makes the next call capture again);
   - other input shapes (a last, smaller batch) get a graph of their own, up to
     `MAX_GRAPHS` per program;
   - host values among the parameters (the learning rate, an optimizer's beta
     powers, which the eager path passes to the kernels by value) get device
     buffers, one per dtype, refilled before every launch, so a learning-rate
     schedule is seen.
   That call runs normally, on its own stream with a private ``cupy.cuda.MemoryPool``
   (its results are the call's: a train step updates once), then the same run is
   captured there, reusing the pool's blocks. The graph's temporaries live in that
   pool only: nothing outside can be handed memory the graph writes on replay;
   CuPy refuses cuBLAS calls during a capture, so the captured run's matrix
   products go through fw's own cuBLAS handle (`capture_blas`);
3. later calls copy the inputs in, refill the host values, launch the graph on the
   current stream and return copies of the outputs (the graph's own output buffers
   are rewritten by the next launch). State updates of host tensors (the beta
   powers) come back in one device-to-host copy per dtype: the one wait per step.

Programs with ``cond``/``while`` (a host decision per run), random ops (their state
advances on the host) or host inputs are not captured. If capturing raises (an op
reads a device value on the host, which a capture cannot contain), the program
runs normally from then on, with one warning naming the reason.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

__all__ = ["enabled", "eligible", "GraphedProgram", "for_program", "WARMUP", "HostPack"]

WARMUP = 2
MAX_GRAPHS = 4  # graphs kept per program, one per input shapes (a last, smaller batch)
# what one capture makes (swapped in and out of the runner by input shapes)
_STATE = ("static_in", "dev_ps", "host_ps", "hpack", "h_np", "h_dev", "static_ps", "outs",
          "graph", "pool", "stream", "blas", "hu", "upack", "u_dev")
_NOT_CAPTURED = frozenset({"cond", "while"})


def enabled() -> bool:
    """``FW_GPU_GRAPHS=1``: replay compiled gpu programs as CUDA graphs."""
    return os.environ.get("FW_GPU_GRAPHS", "0").strip() in ("1", "true", "True")


def eligible(program) -> str | None:
    """None when `program` can be captured, else why not (control flow, random ops)."""
    for op in program.walk():
        if op.name in _NOT_CAPTURED:
            return f"it has a {op.name} op (a host decision on every run)"
        d = getattr(op, "opdef", None)
        if d is not None and (d.random or d.side_effect):
            return f"its op {op.name} is {'random' if d.random else 'a side effect'}"
    return None


def for_program(compiled):
    """A `GraphedProgram` for a gpu `Compiled`, or None (graphs off, or the program
    cannot be captured)."""
    if not enabled() or compiled.op_check is not None:
        return None
    if eligible(compiled.program) is not None:
        return None
    from fw.core import place as _pl

    return GraphedProgram(compiled._run, _pl.get_backend("gpu").cp, compiled.host_update_index,
                          move=compiled._to_device, explain=compiled._explain)


class HostPack:
    """Host arrays of several shapes packed into one flat buffer per dtype, so that
    they cross to the device (or back) in one copy per dtype. `layout` is
    ``[(dtype, [(position, shape, offset, size)...], total)...]``."""

    def __init__(self, items):
        """`items`: ``[(position, array-like)]`` in any order."""
        groups: dict = {}
        for pos, a in items:
            a = np.asarray(a)
            groups.setdefault(a.dtype, []).append((pos, a.shape, a.size))
        self.layout = []
        for dt, entries in groups.items():
            placed, off = [], 0
            for pos, shape, size in entries:
                placed.append((pos, shape, off, size))
                off += size
            self.layout.append((dt, placed, off))

    def pack(self, values, outs):
        """Write `values[position]` into the flat host arrays `outs` (one per dtype)."""
        for (dt, placed, _), flat in zip(self.layout, outs):
            for pos, _shape, off, size in placed:
                flat[off:off + size] = np.asarray(values[pos], dtype=dt).reshape(-1)

    def unpack(self, flats) -> dict:
        """{position: array} cut out of the flat arrays `flats` (copies)."""
        got = {}
        for (_dt, placed, _), flat in zip(self.layout, flats):
            for pos, shape, off, size in placed:
                got[pos] = np.array(flat[off:off + size]).reshape(shape)
        return got


class GraphedProgram:
    """`run(arrays, params) -> outputs` of a compiled program, replayed as a CUDA graph
    after `WARMUP` normal calls (see the module doc). It is called with the params as
    captured (host constants on the host); `move(params)` gives them as `run` takes
    them when it runs op by op. `host_updates(params)` gives the output positions whose
    values the caller stores into host tensors; `explain(exc)` names the op an error
    came from."""

    def __init__(self, run, cp, host_updates=None, move=None, explain=None):
        self.run = run
        self.cp = cp
        self.host_updates = host_updates
        self.move = move or (lambda ps: ps)
        self.explain = explain or (lambda e: e)
        self.calls = 0
        self.graph = None
        self.key = None  # the input shapes the current graph was captured for
        self.others: dict = {}  # key -> the state of a graph captured for other shapes
        self.disabled = None  # why graphs were given up, once they are
        self.captures = 0
        self.replays = 0

    # ------------------------------------------------------------------ running
    def __call__(self, arrays, ps):
        if self.disabled is not None:
            return self.run(arrays, self.move(ps))
        self.calls += 1
        if self.calls <= WARMUP:
            return self.run(arrays, self.move(ps))
        key = self._key(arrays, ps)
        if key != self.key:
            self._switch(key)
        if self.graph is not None and not self._same_params(ps):
            self.others.clear()  # a parameter's array was replaced: every graph is stale
            self._drop()
        if self.graph is None:
            try:
                return self._capture(arrays, ps)
            except Exception as e:  # noqa: BLE001 - any failure: run without graphs
                self._give_up(e)
                return self.run(arrays, self.move(ps))
        return self._replay(arrays, ps)

    def _give_up(self, e):
        self._drop()
        try:
            e = self.explain(e)  # which op of the program
        except Exception:  # noqa: BLE001 - the original error says enough
            pass
        self.disabled = f"{type(e).__name__}: {e}"
        warnings.warn(f"fw: this compiled program is not replayed as a CUDA graph "
                      f"(FW_GPU_GRAPHS=1): capturing it failed with {self.disabled}; it runs "
                      f"op by op", RuntimeWarning, stacklevel=4)

    def _drop(self):
        for name in _STATE:
            setattr(self, name, None)
        self.key = None

    @staticmethod
    def _key(arrays, ps):
        """What a graph is specific to besides the parameter arrays: the shapes and
        dtypes of the inputs and of the host constants."""
        return (tuple((getattr(a, "shape", None), getattr(a, "dtype", None)) for a in arrays),
                tuple((a.shape, a.dtype) for a in ps if isinstance(a, (np.ndarray, np.generic))))

    def _switch(self, key):
        """Make the graph captured for `key` current (none yet: capture on this call),
        keeping the current one for its shapes."""
        if self.graph is not None:
            self.others[self.key] = {name: getattr(self, name) for name in _STATE}
            while len(self.others) > MAX_GRAPHS - 1:
                self.others.pop(next(iter(self.others)))
        self._drop()
        got = self.others.pop(key, None)
        if got is not None:
            for name, v in got.items():
                setattr(self, name, v)
        self.key = key

    def _same_params(self, ps) -> bool:
        """The device parameters are the arrays the graph was captured with."""
        sp = self.static_ps
        return all(ps[k] is sp[k] for k in self.dev_ps)

    # ------------------------------------------------------------------ capture
    def _capture(self, arrays, ps):
        """Run this call on a private pool (its results are returned: a train step's
        updates happen once), then capture the same run into a graph."""
        cp = self.cp
        nd = cp.ndarray
        if any(type(a) is not nd for a in arrays):
            raise TypeError("a program input is not a CuPy array")
        dev_ps, host_ps = [], []
        for k, a in enumerate(ps):
            if type(a) is nd:
                dev_ps.append(k)
            elif isinstance(a, (np.ndarray, np.generic)):
                host_ps.append(k)
            else:
                raise TypeError(f"parameter {k} is a {type(a).__name__}")
        self.dev_ps, self.host_ps = dev_ps, host_ps
        pool = cp.cuda.MemoryPool()
        stream = cp.cuda.Stream(non_blocking=True)
        cur = cp.cuda.get_current_stream()
        with cp.cuda.using_allocator(pool.malloc):
            with stream:
                stream.wait_event(cur.record())  # the inputs were made on `cur`
                self.static_in = [cp.empty_like(a) for a in arrays]
                for s, a in zip(self.static_in, arrays):
                    s[...] = a
                self.hpack = HostPack([(k, ps[k]) for k in host_ps])
                # pageable host staging: a copy from it is done when set() returns, so
                # the next call may rewrite it at once
                self.h_np = [np.empty(int(n), dt) for dt, _, n in self.hpack.layout]
                self.h_dev = [cp.empty(int(n), dt) for dt, _, n in self.hpack.layout]
                static_ps = list(ps)
                for (_dt, placed, _), buf in zip(self.hpack.layout, self.h_dev):
                    for pos, shape, off, size in placed:
                        static_ps[pos] = buf[off:off + size].reshape(shape)
                self.static_ps = static_ps
                self._refill(ps, stream)
                # this call's run, on the private pool: it also gives the pool the blocks
                # the capture reuses, and makes any lazily made handle or kernel now
                result = self.run(self.static_in, static_ps)
                # CuPy refuses cuBLAS calls while capturing: the products of the captured
                # run go through fw's own handle on this stream (capture_blas)
                from fw.core.kernels.gpu.capture_blas import CaptureBlas

                blas = CaptureBlas(cp, stream, cp.empty(CaptureBlas.workspace_bytes(),
                                                        cp.uint8))
            stream.synchronize()
            with stream:
                saved_matmul = cp.matmul
                cp.matmul = blas.matmul
                stream.begin_capture()
                try:
                    outs = self.run(self.static_in, static_ps)
                    hu = self.host_updates(ps) if self.host_updates is not None else ()
                    self.hu = [k for k in hu if type(outs[k]) is nd]
                    self.upack = HostPack([(k, np.empty(outs[k].shape, outs[k].dtype))
                                           for k in self.hu])
                    # the host updates, packed inside the graph: one copy back per dtype
                    # (one copy kernel each: cupy.concatenate sends its operand table
                    # to the device, which a capture refuses)
                    self.u_dev = []
                    for dt, placed, total in self.upack.layout:
                        u = cp.empty(int(total), dt)
                        for pos, _shape, off, size in placed:
                            u[off:off + size] = outs[pos].reshape(-1)
                        self.u_dev.append(u)
                except BaseException:
                    try:  # end the capture; the error that broke it is the one to report
                        stream.end_capture()
                    except Exception:  # noqa: BLE001
                        pass
                    raise
                else:
                    graph = stream.end_capture()
                finally:
                    cp.matmul = saved_matmul
            stream.synchronize()
        cur.wait_event(stream.record())
        self.outs, self.graph, self.pool, self.stream = outs, graph, pool, stream
        self.blas = blas  # its workspace is the graph's
        self.key = self._key(arrays, ps)
        self.captures += 1
        return tuple(result)

    def _refill(self, ps, stream):
        if not self.host_ps:
            return
        self.hpack.pack(ps, self.h_np)
        for host, dev in zip(self.h_np, self.h_dev):
            dev.set(host, stream=stream)

    # ------------------------------------------------------------------ replay
    def _replay(self, arrays, ps):
        cp = self.cp
        cur = cp.cuda.get_current_stream()
        for s, a in zip(self.static_in, arrays):
            s[...] = a
        self._refill(ps, cur)
        self.graph.launch(stream=cur)
        self.replays += 1
        outs = list(self.outs)
        if self.hu:
            flats = [d.get(stream=cur) for d in self.u_dev]  # waits for the step
            for k, v in self.upack.unpack(flats).items():
                outs[k] = v
        hu = set(self.hu)
        for k, o in enumerate(outs):
            if k not in hu and type(o) is cp.ndarray:
                outs[k] = o.copy()  # the next launch rewrites the graph's buffers
        return tuple(outs)
