"""`PipelineParallel`: trains a `PipelineLayer` split over the pipeline group with
micro-batches in the 1F1B order (`schedule.schedule_1f1b`).

``train_batch([inputs, labels], optimizer)`` cuts the batch into
``accumulate_steps`` micro-batches of ``micro_batch_size``; each stage runs its
schedule, receiving activations from the previous stage before a forward and
gradients from the next stage before a backward, and sending its own on
(non-blocking sends, blocking receives with the job's timeout: a stage that does
not answer is named). The last stage computes ``loss_fn(output, label) /
accumulate_steps`` per micro-batch, so the accumulated gradients are those of the
mean loss over the batch, as one dense step on the whole batch. Then the
gradients are averaged over the data-parallel group (if any), the optimizer steps
and the gradients are cleared. The returned loss (the batch mean) is the same on
every stage.

Each message is a small header (ndim, dtype code, shape) and the array, so stages
need not know each other's activation shapes in advance.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.tensor import Tensor
from fw.distributed import _fleet_comm as comm
from fw.distributed.fleet.meta_parallel.pp_layers import PipelineLayer
from fw.distributed.fleet.meta_parallel.schedule import schedule_1f1b, schedule_fthenb
from fw.nn import Layer

__all__ = ["PipelineParallel"]

_DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool", "uint8"]
_HDR = 10


def _header(a):
    if a.ndim > _HDR - 2:
        raise ValueError(f"PipelineParallel: activations of more than {_HDR - 2} dims are not "
                         f"supported (got {a.ndim})")
    name = str(a.dtype)
    if name not in _DTYPES:
        raise TypeError(f"PipelineParallel: cannot send activations of dtype {name}")
    h = np.zeros(_HDR, dtype=np.int64)
    h[0] = a.ndim
    h[1] = _DTYPES.index(name)
    h[2:2 + a.ndim] = a.shape
    return h


class PipelineParallel(Layer):
    """Runs a `PipelineLayer` as one pipeline stage per rank of fleet's pipeline
    group (what ``fleet.distributed_model`` returns for pp_degree > 1): a batch is
    split into ``accumulate_steps`` micro-batches of ``micro_batch_size``, scheduled
    1F1B (or F-then-B, ``schedule_mode``), with activations and gradients sent
    between neighbouring stages.

    Args:
        layers (PipelineLayer): the model.
        hcg (HybridCommunicateGroup): fleet's groups (None: one stage).
        strategy (DistributedStrategy): its ``pipeline_configs`` give
            ``micro_batch_size``, ``accumulate_steps`` and ``schedule_mode``.

    Examples:
        >>> import fw
        >>> import fw.nn as nn
        >>> from fw.distributed import fleet
        >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
        >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
        >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 1)], num_stages=1,
        ...                     loss_fn=nn.MSELoss())
        >>> pp = PipelineParallel(net, None, strategy)
        >>> pp.num_stages, pp.stage_id
        (1, 0)
    """

    def __init__(self, layers, hcg, strategy):
        super().__init__()
        if not isinstance(layers, PipelineLayer):
            raise TypeError(f"PipelineParallel: the model must be a PipelineLayer, got "
                            f"{type(layers).__name__}")
        self._layers = layers
        self._hcg = hcg
        cfg = strategy.pipeline_configs
        self.micro_batch_size = cfg["micro_batch_size"]
        self.accumulate_steps = cfg["accumulate_steps"]
        self._schedule = schedule_1f1b if cfg.get("schedule_mode", "1F1B") == "1F1B" \
            else schedule_fthenb
        self._pp = hcg.get_pipe_parallel_group() if hcg is not None else comm.self_group()
        self._dp = hcg.get_data_parallel_group() if hcg is not None else None
        self.num_stages = self._pp.nranks
        self.stage_id = max(self._pp.rank, 0)
        self._pending = []
        if self._dp is not None and self._dp.nranks > 1:
            from fw.distributed.parallel import sync_params_buffers

            sync_params_buffers(layers, self._dp, 0)

    def is_pipeline_first_stage(self):
        """Whether this rank runs the first stage (it reads the inputs).

        Returns:
            bool: the answer.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed import fleet
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
            >>> strategy = fleet.DistributedStrategy()
            >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
            >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
            >>> fleet.init(is_collective=True, strategy=strategy)
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
            ...                      LayerDesc(nn.Linear, 8, 1)],
            ...                     num_stages=1, loss_fn=nn.MSELoss())
            >>> pp = PipelineParallel(net, fleet.get_hybrid_communicate_group(), strategy)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> x, y = fw.ones([4, 4]), fw.zeros([4, 1])
            >>> pp.is_pipeline_first_stage()
            True
        """
        return self.stage_id == 0

    def is_pipeline_last_stage(self):
        """Whether this rank runs the last stage (it computes the loss).

        Returns:
            bool: the answer.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed import fleet
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
            >>> strategy = fleet.DistributedStrategy()
            >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
            >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
            >>> fleet.init(is_collective=True, strategy=strategy)
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
            ...                      LayerDesc(nn.Linear, 8, 1)],
            ...                     num_stages=1, loss_fn=nn.MSELoss())
            >>> pp = PipelineParallel(net, fleet.get_hybrid_communicate_group(), strategy)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> x, y = fw.ones([4, 4]), fw.zeros([4, 1])
            >>> pp.is_pipeline_last_stage()
            True
        """
        return self.stage_id == self.num_stages - 1

    # ------------------------------------------------------------ p2p
    def _send(self, a, dst):
        a = np.ascontiguousarray(a)
        h = _header(a)
        self._pending.append((comm.send(h, dst, self._pp, sync_op=False), h, a))
        self._pending.append((comm.send(a, dst, self._pp, sync_op=False), h, a))

    def _recv(self, src):
        h = np.zeros(_HDR, dtype=np.int64)
        comm.recv(h, src, self._pp)
        nd = int(h[0])
        a = np.empty(tuple(int(x) for x in h[2:2 + nd]), dtype=_DTYPES[int(h[1])])
        comm.recv(a, src, self._pp)
        return a

    # ------------------------------------------------------------ training
    def _micro(self, x, i):
        if x is None:
            return None
        mb = self.micro_batch_size
        if isinstance(x, (list, tuple)):
            return type(x)(self._micro(v, i) for v in x)
        return x[i * mb:(i + 1) * mb]

    def _check_batch(self, data):
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise ValueError("PipelineParallel.train_batch: data must be [inputs, labels]")
        want = self.micro_batch_size * self.accumulate_steps
        for name, x in zip(("inputs", "labels"), data):
            if isinstance(x, Tensor) and x.shape[0] != want:
                raise ValueError(
                    f"PipelineParallel.train_batch: {name} has batch size {x.shape[0]} but "
                    f"micro_batch_size ({self.micro_batch_size}) x accumulate_steps "
                    f"({self.accumulate_steps}) = {want}")

    def forward_backward_pipeline(self, data):
        """Run the schedule (1F1B or F-then-B) on one batch: forward and backward of every
        micro-batch, exchanging activations and gradients with the neighbouring stages.

        Args:
            data (list): ``[inputs, labels]``, a batch of ``micro_batch_size *
                accumulate_steps`` examples.

        Returns:
            Tensor: the batch's mean loss (on every stage).

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed import fleet
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
            >>> strategy = fleet.DistributedStrategy()
            >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
            >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
            >>> fleet.init(is_collective=True, strategy=strategy)
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
            ...                      LayerDesc(nn.Linear, 8, 1)],
            ...                     num_stages=1, loss_fn=nn.MSELoss())
            >>> pp = PipelineParallel(net, fleet.get_hybrid_communicate_group(), strategy)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> x, y = fw.ones([4, 4]), fw.zeros([4, 1])
            >>> loss = pp.forward_backward_pipeline([x, y])
            >>> loss.shape, net.parameters()[0].grad is not None
            ([], True)
        """
        self._check_batch(data)
        inputs, labels = data
        first, last = self.is_pipeline_first_stage(), self.is_pipeline_last_stage()
        n = self.accumulate_steps
        loss_fn = self._layers._loss_fn
        if last and loss_fn is None:
            raise ValueError("PipelineParallel: the PipelineLayer needs a loss_fn")
        acts_in, acts_out = {}, {}
        total = 0.0
        for kind, i in self._schedule(self.num_stages, self.stage_id, n):
            if kind == "F":
                if first:
                    x = self._micro(inputs, i)
                else:
                    x = fw.to_tensor(self._recv(self.stage_id - 1), stop_gradient=False)
                y = self._layers(x)
                if last:
                    y = loss_fn(y, self._micro(labels, i)) / n
                    total += float(y.numpy())
                else:
                    if not isinstance(y, Tensor):
                        raise TypeError("PipelineParallel: a stage must output one tensor")
                    self._send(y._data, self.stage_id + 1)
                acts_in[i], acts_out[i] = x, y
            else:
                x, y = acts_in.pop(i), acts_out.pop(i)
                if last:
                    y.backward()
                else:
                    g = self._recv(self.stage_id + 1)
                    y.backward(fw.to_tensor(g))
                if not first:
                    gx = x.grad
                    self._send(gx._data if gx is not None else np.zeros_like(x._data),
                               self.stage_id - 1)
        for t, _, _ in self._pending:
            t.wait()
        self._pending = []
        loss = np.array([total], dtype=np.float64)
        if self.num_stages > 1:
            comm.broadcast(loss, src=self.num_stages - 1, group=self._pp)
        return fw.to_tensor(loss.astype(np.float32)[0])

    def _allreduce_dp(self):
        """Average the stage's gradients over the data-parallel group: one flat
        all-reduce per dtype (a parameter without a gradient contributes zeros)."""
        g = self._dp
        if g is None or g.nranks <= 1:
            return
        by_dtype = {}
        for p in self._layers.parameters():
            if not p.stop_gradient:
                by_dtype.setdefault(str(p._data.dtype), []).append(p)
        for ps in by_dtype.values():
            flat = np.concatenate([p._grad._data.reshape(-1) if p._grad is not None else
                                   np.zeros(p._data.size, p._data.dtype) for p in ps])
            comm.all_reduce(flat, group=g)
            flat *= np.asarray(1.0 / g.nranks, dtype=flat.dtype)
            o = 0
            for p in ps:
                k = p._data.size
                val = flat[o:o + k].reshape(p._data.shape)
                if p._grad is not None:
                    np.copyto(p._grad._data, val)
                else:
                    p.grad = fw.to_tensor(val.copy())
                o += k

    def train_batch(self, data, optimizer, lr_scheduler=None, scaler=None):
        """One training step on `data`: `forward_backward_pipeline`, the data-parallel
        gradient all-reduce, the optimizer step (and `lr_scheduler` step).

        Args:
            data (list): ``[inputs, labels]``.
            optimizer (Optimizer): the optimizer.
            lr_scheduler (LRScheduler, optional): stepped after the update. Default: None.
            scaler (GradScaler, optional): not supported (must be None). Default: None.

        Returns:
            Tensor: the batch's mean loss.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed import fleet
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
            >>> strategy = fleet.DistributedStrategy()
            >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
            >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
            >>> fleet.init(is_collective=True, strategy=strategy)
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
            ...                      LayerDesc(nn.Linear, 8, 1)],
            ...                     num_stages=1, loss_fn=nn.MSELoss())
            >>> pp = PipelineParallel(net, fleet.get_hybrid_communicate_group(), strategy)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> x, y = fw.ones([4, 4]), fw.zeros([4, 1])
            >>> l0 = float(pp.train_batch([x, y], opt))
            >>> l1 = float(pp.train_batch([x, y], opt))
            >>> l1 < l0
            True
        """
        if scaler is not None:
            raise NotImplementedError("PipelineParallel.train_batch: loss scaling (scaler) is "
                                      "not supported")
        self._layers.train()
        loss = self.forward_backward_pipeline(data)
        self._allreduce_dp()
        optimizer.step()
        optimizer.clear_grad()
        if lr_scheduler is not None:
            lr_scheduler.step()
        return loss

    def eval_batch(self, data, compute_loss=True):
        """Forward only, micro-batch by micro-batch; the mean loss (or the last
        stage's outputs concatenated when not `compute_loss`), on every stage.

        Args:
            data (list): ``[inputs, labels]``.
            compute_loss (bool, optional): return the loss (else the outputs). Default: True.

        Returns:
            Tensor: the loss, or the outputs.

        Examples:
            >>> import fw
            >>> import fw.nn as nn
            >>> from fw.distributed import fleet
            >>> from fw.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer
            >>> from fw.distributed.fleet.meta_parallel import PipelineParallel
            >>> strategy = fleet.DistributedStrategy()
            >>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
            >>> strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
            >>> fleet.init(is_collective=True, strategy=strategy)
            >>> net = PipelineLayer([LayerDesc(nn.Linear, 4, 8), nn.ReLU(),
            ...                      LayerDesc(nn.Linear, 8, 1)],
            ...                     num_stages=1, loss_fn=nn.MSELoss())
            >>> pp = PipelineParallel(net, fleet.get_hybrid_communicate_group(), strategy)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> x, y = fw.ones([4, 4]), fw.zeros([4, 1])
            >>> pp.eval_batch([x, y]).shape
            []
            >>> pp.eval_batch([x, y], compute_loss=False).shape
            [4, 1]
        """
        self._layers.eval()
        inputs, labels = data
        first, last = self.is_pipeline_first_stage(), self.is_pipeline_last_stage()
        outs, total = [], 0.0
        with fw.no_grad():
            for i in range(self.accumulate_steps):
                x = self._micro(inputs, i) if first else fw.to_tensor(
                    self._recv(self.stage_id - 1))
                y = self._layers(x)
                if last:
                    if compute_loss:
                        total += float(self._layers._loss_fn(y, self._micro(labels, i))
                                       .numpy()) / self.accumulate_steps
                    else:
                        outs.append(y)
                else:
                    self._send(y._data, self.stage_id + 1)
        for t, _, _ in self._pending:
            t.wait()
        self._pending = []
        if not compute_loss:
            return fw.concat(outs, axis=0) if last else None
        loss = np.array([total], dtype=np.float64)
        if self.num_stages > 1:
            comm.broadcast(loss, src=self.num_stages - 1, group=self._pp)
        return fw.to_tensor(loss.astype(np.float32)[0])

    def forward(self, x):
        return self._layers(x)

    def state_dict(self, *a, **k):
        return self._layers.state_dict(*a, **k)

    def set_state_dict(self, state_dict, use_structured_name=True):
        return self._layers.set_state_dict(state_dict, use_structured_name)
