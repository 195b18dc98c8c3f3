"""`fw.DataParallel` (Paddle's ``paddle.DataParallel``): data parallelism with
gradient buckets all-reduced during backward.

Wrapping broadcasts the parameters and buffers of group rank 0 to every rank, so
all replicas start equal. Each forward (with gradients enabled and outside
`no_sync`) arms the reducer (`fw.distributed._buckets.Reducer`): as backward
delivers a parameter's gradient, fw-autograd calls the parameter's gradient hook,
which copies the gradient into its bucket; a full bucket's all-reduce starts at
once (asynchronously) while backward goes on computing the earlier layers; the last
gradient's hook waits for every bucket and writes the averages into ``.grad``. So
after ``loss.backward()`` every rank holds the gradient of the mean loss over the
global batch, exactly what one process computes on the whole batch.

Under `no_sync()` gradients accumulate locally; the next synchronised backward
all-reduces the accumulated sums (gradient accumulation without communication per
micro-batch). ``state_dict()`` is the wrapped layer's (no ``_layers.`` prefix), so
checkpoints load into the single-process model and back.

``overlap_optimizer=opt`` (fw's extension; Paddle has no such option) also updates
each bucket's parameters as soon as its all-reduce is averaged, inside backward,
while the later buckets are still in flight; ``opt.step()`` after backward then
completes the step (the parameters the buckets did not cover), bit-identical to an
ordinary step (see `fw.distributed._buckets`).
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np

import fw
from fw.distributed import _fleet_comm as comm
from fw.distributed._buckets import Reducer, reason_not_overlappable
from fw.nn import Layer

__all__ = ["DataParallel", "sync_params_buffers", "bind_to_core"]


def _local_rank_and_size():
    """(rank within the node, ranks on the node) from fw's launcher
    (``LOCAL_RANK``/``LOCAL_WORLD_SIZE``) or MPICH's hydra (``MPI_LOCALRANKID``/
    ``MPI_LOCALNRANKS``); None when neither says."""
    for rk, sk in (("LOCAL_RANK", "LOCAL_WORLD_SIZE"), ("MPI_LOCALRANKID", "MPI_LOCALNRANKS")):
        r, n = os.environ.get(rk), os.environ.get(sk)
        if r is not None and n is not None:
            try:
                return int(r), int(n)
            except ValueError:
                return None
    return None


def bind_to_core(mode=None):
    """Pin this process to one core: local rank ``r`` of ``n`` gets the ``r``-th of
    the cores it may run on (``os.sched_getaffinity``). `mode` (default
    ``FW_DIST_BIND_CORE``, else ``"auto"``): ``"auto"`` pins only when ``n`` ==
    the cores (one rank per core: a migrating rank could only land on its peer's
    core, and each migration costs it its cache), ``"1"`` whenever ``n`` <= the
    cores, ``"0"`` never. `DataParallel` calls it. Processes started afterwards
    (data-loader workers) inherit the one core: set ``FW_DIST_BIND_CORE=0`` to
    keep them free. Returns the core or None.

    Examples:
        >>> import fw
        >>> from fw.distributed.parallel import bind_to_core
        >>> bind_to_core("0") is None
        True
    """
    mode = os.environ.get("FW_DIST_BIND_CORE", "auto") if mode is None else str(mode)
    if mode not in ("0", "1", "auto"):
        raise ValueError(f"bind_to_core: FW_DIST_BIND_CORE must be '0', '1' or 'auto', got "
                         f"{mode!r}")
    if mode == "0" or not hasattr(os, "sched_setaffinity"):
        return None
    lr = _local_rank_and_size()
    if lr is None:
        return None
    r, n = lr
    cores = sorted(os.sched_getaffinity(0))
    if n > len(cores) or (mode == "auto" and n != len(cores)) or not 0 <= r < n:
        return None
    os.sched_setaffinity(0, {cores[r]})
    return cores[r]


def sync_params_buffers(layer, group=None, src_rank=0):
    """Broadcast `layer`'s parameters and buffers from group rank `src_rank` (in place)."""
    g = comm.world() if group is None else group
    if g.nranks <= 1 or not g.is_member():
        return
    tensors = list(layer.parameters()) + list(layer.buffers())
    seen = set()
    for t in tensors:
        if id(t) in seen:
            continue
        seen.add(id(t))
        a = t._data
        if not isinstance(a, np.ndarray):
            raise NotImplementedError(f"DataParallel: {t.name!r} is not a CPU tensor; this "
                                      f"build broadcasts CPU (NumPy) tensors over MPI only")
        if a.flags.c_contiguous and a.flags.writeable:
            comm.broadcast(a, src=src_rank, group=g)
        else:
            b = np.ascontiguousarray(a)
            comm.broadcast(b, src=src_rank, group=g)
            np.copyto(a, b)


class DataParallel(Layer):
    """Run `layers` on every rank of `group` (default: all ranks) with the gradients
    averaged over the ranks during backward.

    Args:
        layers: the model (an `fw.nn.Layer`).
        strategy: accepted for Paddle compatibility (the parallel environment is the
            launched job's); ignored.
        comm_buffer_size: the size in MB of a gradient bucket.
        last_comm_buffer_size: the size in MB of the first bucket backward fills
            (the model's last parameters): small, so communication starts early.
        find_unused_parameters: walk the autograd graph after each forward and treat
            parameters it does not reach as ready (with their gradient unchanged), so
            a forward that skips parameters does not stall the all-reduce.
        group: the data-parallel group (``fleet``'s dp group under hybrid parallel).
        overlap_optimizer (Optimizer, optional): fw's extension (Paddle has no such
            option). Step this optimizer on each gradient bucket's parameters as soon
            as the bucket's all-reduce is averaged, during backward, so the last
            bucket's all-reduce (ready only when backward ends) overlaps the other
            buckets' updates. After ``loss.backward()`` the parameters are already
            updated; ``opt.step()`` completes the step (it updates the parameters no
            bucket covered) and must be called once per backward, before the next
            one. Results equal an ordinary step bit for bit. Refused with a warning
            (the overlap stays off, results unchanged) for clipping by the global
            norm or a custom clip (they need every gradient before any update) and
            for Lamb/ASGD/LBFGS; loss scaling (``GradScaler``) raises. A learning-rate
            scheduler must be stepped after ``opt.step()``, as usual. Default: None.

    Returns:
        DataParallel: a Layer whose forward is the wrapped model's.

    Examples:
        Run as one process it is a transparent wrapper; launched on N ranks
        (``python -m fw.distributed.launch``) the same code averages the gradients:

        >>> import fw
        >>> model = fw.DataParallel(fw.nn.Linear(4, 2))
        >>> loss = model(fw.randn([8, 4])).mean()
        >>> loss.backward()
        >>> model._layers.weight.grad.shape
        [4, 2]
    """

    def __init__(self, layers, strategy=None, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, group=None, overlap_optimizer=None,
                 _grad_owners=None):
        super().__init__()
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: 'layers' must be an fw.nn.Layer, got "
                            f"{type(layers).__name__}")
        self._layers = layers
        g = group if group is not None else comm.world()
        self._group = g
        self.find_unused_parameters = bool(find_unused_parameters)
        self._grad_need_sync = True
        params, names = [], []
        seen = set()
        for name, p in layers.named_parameters():
            if not p.stop_gradient and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
                names.append(name)
        self._reducer = None
        if g.nranks > 1:
            bind_to_core()
            sync_params_buffers(layers, g, 0)
            owners = None
            if _grad_owners is not None:  # ZeRO stage 2 (sharding): reduce to owners
                owners = [_grad_owners[id(p)] for p in params]
            self._reducer = Reducer(params, g, comm_buffer_size, last_comm_buffer_size,
                                    find_unused_parameters, names, owners)
        if overlap_optimizer is not None and overlap_optimizer is not False:
            self.set_overlap_optimizer(overlap_optimizer)

    def set_overlap_optimizer(self, optimizer):
        """Step `optimizer` bucket by bucket during backward (see the class's
        ``overlap_optimizer``).

        Args:
            optimizer (Optimizer|None): the optimizer of this model's parameters; None
                turns the overlap off. One that cannot be stepped per bucket (global-norm
                clipping, Lamb, ASGD, LBFGS) gives a warning and leaves it off.

        Returns:
            bool: True when the overlap is on (always False in a one-rank group, where
            there is nothing to overlap).

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(4, 2)
            >>> opt = fw.optimizer.Adam(parameters=net.parameters())
            >>> model = fw.DataParallel(net)
            >>> model.set_overlap_optimizer(opt)   # one process: nothing to overlap
            False
        """
        from fw.optimizer import Optimizer

        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError(f"DataParallel: overlap_optimizer must be an fw.optimizer."
                            f"Optimizer, got {type(optimizer).__name__}")
        if optimizer is not None:
            why = reason_not_overlappable(optimizer)
            if why is not None:
                warnings.warn(f"DataParallel: overlap_optimizer is off for "
                              f"{type(optimizer).__name__}: {why}. Gradients are "
                              f"all-reduced as usual and opt.step() updates everything",
                              stacklevel=2)
                optimizer = None
        if self._reducer is None:
            return False
        self._reducer.set_optimizer(optimizer)
        return optimizer is not None

    # ------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        out = self._layers(*inputs, **kwargs)
        r = self._reducer
        if r is not None and self._grad_need_sync and fw.is_grad_enabled() and self.training:
            r.prepare(out)
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally with no
        communication; the first synchronised backward after it all-reduces the
        accumulated gradients (gradient accumulation without extra traffic).

        Returns:
            contextmanager: a context that suspends gradient synchronisation.

        Examples:
            >>> import fw
            >>> model = fw.DataParallel(fw.nn.Linear(4, 2))
            >>> with model.no_sync():
            ...     model(fw.randn([8, 4])).mean().backward()
            >>> model(fw.randn([8, 4])).mean().backward()   # synchronised step
            >>> model._layers.weight.grad.shape
            [4, 2]
        """
        prev = self._grad_need_sync
        self._grad_need_sync = False
        try:
            yield
        finally:
            self._grad_need_sync = prev

    def scale_loss(self, loss):
        """Paddle 2.x API, kept for old programs: the loss is not scaled (the
        reducer averages the gradients).

        Args:
            loss (Tensor): the loss of this rank.

        Returns:
            Tensor: `loss` itself.

        Examples:
            >>> import fw
            >>> model = fw.DataParallel(fw.nn.Linear(4, 2))
            >>> loss = model(fw.ones([2, 4])).mean()
            >>> model.scale_loss(loss) is loss
            True
        """
        return loss

    def apply_collective_grads(self):
        """Paddle 2.x API: gradients are already all-reduced during backward, so this
        does nothing.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> model = fw.DataParallel(fw.nn.Linear(4, 2))
            >>> model(fw.ones([2, 4])).mean().backward()
            >>> model.apply_collective_grads()
        """

    # ------------------------------------------------------------ profiling
    def comm_profile(self, enable: bool | None = None):
        """With ``enable``, switch recording of the bucket timeline on or off.
        Returns the last step's events: ``(what, bucket, seconds since the forward
        ended)`` with what = ``"ready"`` (a bucket's last gradient arrived),
        ``"launch"`` (its all-reduce started: buckets start in order), ``"done"`` (seen
        complete while backward still ran), ``"backward_end"`` (the last gradient
        arrived), ``"waited"`` (a bucket's wait returned) and ``"synced"``.

        Args:
            enable (bool, optional): switch recording on (True) or off (False); None
                leaves it as it is. Default: None.

        Returns:
            list: the last step's ``(what, bucket, seconds)`` events; empty in a
            single-process run (nothing is communicated).

        Examples:
            >>> import fw
            >>> model = fw.DataParallel(fw.nn.Linear(4, 2))
            >>> model.comm_profile(True)
            []
        """
        r = self._reducer
        if r is None:
            return []
        if enable is not None:
            r.profile = bool(enable)
        return list(r.events)

    # ------------------------------------------------------------ state
    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="",
                   use_hook=True, keep_vars=True):
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix,
                                       use_hook, keep_vars)

    def set_state_dict(self, state_dict, use_structured_name=True):
        return self._layers.set_state_dict(state_dict, use_structured_name)

    set_dict = set_state_dict
    load_dict = set_state_dict

    def load_state_dict(self, state_dict, strict=True):
        return self._layers.set_state_dict(state_dict)
