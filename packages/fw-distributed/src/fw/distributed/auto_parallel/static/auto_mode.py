"""``Strategy(auto_mode="full")`` for `dist.to_static`: the cost model picks the
strategy, `DistModel` runs it.

On the first batch (its shapes are the search's input), `AutoMode` runs
`fw.distributed.auto.search` over the strategies the mesh's ranks allow — data
parallel, tensor parallel (Megatron column/row pairs of `linear` ops), pipeline
stages with micro-batches, ZeRO stages 1/2 and recompute — keeps those
`dist.to_static` can run with the results of single-process training (see
`runnable`), and applies the fastest:

- a mesh over the same ranks with the axes the strategy needs (``dp``, ``mp``,
  ``pp``: the names `DistModel` and its passes read);
- placements for every parameter (tensor parallel: the column linear's weight
  ``Shard(1)`` and bias ``Shard(0)``, the row linear's weight ``Shard(0)``, as
  Megatron-LM splits them; the rest replicated) — the layer's parameters are
  replaced by distributed ones and the optimizer pointed at them (before it holds
  any state);
- the batch's placements (``Shard(0)`` over the data-parallel ranks), applied to
  every batch fed to the model;
- the `Strategy`'s ``pipeline`` (stages, micro-batches), ``sharding`` (stage,
  degree) and ``recompute`` sub-configs.

Every rank searches (the search is deterministic for one cluster description);
rank 0's choice is then adopted by all, so a rank that read another calibration
profile cannot split the job. `DistModel.report()` starts with `describe()`: the
choice and the ranking with predicted step times.

Paddle's auto-parallel "full" mode searches too (its ``Planner``/``Tuner`` over
process meshes and dims mappings); this one searches hybrid degrees with fw's cost
model instead of per-op dims mappings (design after Paddle's, no code of it).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

__all__ = ["AutoMode", "search_options", "runnable"]

_FN = "dist.to_static"

_DEFAULTS = {"cluster": None, "memory_limit": None, "micro_batches": (1, 2, 4),
             "recompute": (False, True), "sharding_stages": (1, 2), "max_mp": None,
             "max_pp": None}
_STACK: list = []


@contextlib.contextmanager
def search_options(cluster=None, memory_limit=None, micro_batches=(1, 2, 4),
                   recompute=(False, True), sharding_stages=(1, 2), max_mp=None, max_pp=None):
    """Settings of the ``auto_mode="full"`` search for the `dist.to_static` calls made
    inside the ``with`` block (read when `to_static` is called).

    Args:
        cluster (Cluster, optional): the hardware description; default
            `Cluster.this_machine()` from the calibration profile
            (``fw.distributed.auto.calibrate()``), else a nominal uncalibrated CPU.
        memory_limit (float, optional): bytes per rank a strategy may use; default the
            device's memory.
        micro_batches (tuple): pipeline micro-batch counts to try. Default: (1, 2, 4).
        recompute (tuple): recompute settings to try. Default: (False, True).
        sharding_stages (tuple): ZeRO stages to try (`to_static` runs 1 and 2).
        max_mp (int, optional): cap on the tensor-parallel degree.
        max_pp (int, optional): cap on the pipeline degree.

    Returns:
        a context manager.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto_parallel.static.auto_mode import search_options
            >>> with search_options(memory_limit=2 ** 30, max_pp=1):
            ...     pass
    """
    for name, v in (("micro_batches", micro_batches), ("recompute", recompute),
                    ("sharding_stages", sharding_stages)):
        if not isinstance(v, (tuple, list)) or not v:
            raise ValueError(f"search_options: {name} must be a non-empty tuple, got {v!r}")
    if any(s not in (1, 2) for s in sharding_stages):
        raise ValueError(f"search_options: sharding_stages must be among (1, 2) (the stages "
                         f"{_FN} runs), got {sharding_stages!r}")
    if memory_limit is not None and not memory_limit > 0:
        raise ValueError(f"search_options: memory_limit must be positive bytes, got "
                         f"{memory_limit!r}")
    _STACK.append({"cluster": cluster, "memory_limit": memory_limit,
                   "micro_batches": tuple(micro_batches), "recompute": tuple(recompute),
                   "sharding_stages": tuple(sharding_stages), "max_mp": max_mp,
                   "max_pp": max_pp})
    try:
        yield
    finally:
        _STACK.pop()


def runnable(cfg, n_pairs: int) -> str | None:
    """Why `dist.to_static` cannot run `cfg` with single-process results (None: it can).

    Args:
        cfg (ParallelConfig): a candidate.
        n_pairs (int): the column/row linear pairs the model has (tensor parallelism
            needs one).

    Returns:
        str|None: the reason, or None.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import ParallelConfig
        >>> from fw.distributed.auto_parallel.static.auto_mode import runnable
        >>> runnable(ParallelConfig(dp=2), 0) is None
        True
        >>> runnable(ParallelConfig(micro_batches=2), 0)
        'micro-batches without a pipeline are gradient merge (an update every k calls)'
    """
    if cfg.amp:
        return "amp is not run by dist.to_static"
    if cfg.sharding > 1 and cfg.sharding_stage == 3:
        return "ZeRO stage 3 is not run by dist.to_static"
    if cfg.pp > 1 and (cfg.dp > 1 or cfg.mp > 1 or cfg.sharding > 1 or cfg.recompute):
        return "a pipeline is run alone (no dp/mp/sharding/recompute beside it)"
    if cfg.pp == 1 and cfg.micro_batches > 1:
        return "micro-batches without a pipeline are gradient merge (an update every k calls)"
    if cfg.mp > 1 and n_pairs == 0:
        return "no column/row linear pair to split"
    if cfg.mp > 1 and cfg.recompute:
        return "recompute is tried without tensor parallelism"
    return None


def _nominal_cluster(cores):
    from fw.distributed.auto import Cluster, Device, Link

    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        mem = 8 << 30
    dev = Device("cpu (uncalibrated nominal figures)", {"float32": 5e10}, 5e9, float(mem),
                 op_overhead=10e-6)
    return Cluster(dev, devices_per_node=max(int(cores), 1), intra=Link(1e9, 30e-6),
                   topology="ring", comm_overlap=0.0, oversubscribe=True,
                   name="this machine (uncalibrated)")


def _default_cluster():
    from fw.distributed.auto import Cluster
    from fw.distributed.auto.calibrate import default_profile_path

    if os.path.exists(default_profile_path()):
        return Cluster.this_machine()
    return _nominal_cluster(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                            else os.cpu_count() or 1)


class AutoMode:
    """The ``auto_mode="full"`` decision of one `DistModel` (see the module docstring).

    Args:
        dm (DistModel): the model being built (its layer, loss, optimizer, mesh).
        strategy (Strategy): the user's strategy (``auto_mode="full"``).

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mlp = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 4))
            >>> opt = fw.optimizer.SGD(0.1, parameters=mlp.parameters())
            >>> dm = dist.to_static(mlp, None, fw.nn.MSELoss(), opt,
            ...                     dist.Strategy({"auto_mode": "full"}))
            >>> _ = dm(fw.ones([4, 8]), fw.zeros([4, 4]))
            >>> dm.report().splitlines()[0]
            'auto_mode="full": single on 1 rank(s), mesh dims [\\'dp\\']'
    """

    def __init__(self, dm, strategy):
        from fw.distributed.auto.strategy import Strategy

        self.dm = dm
        self.options = dict(_STACK[-1] if _STACK else _DEFAULTS)
        self.user_strategy = strategy
        base = Strategy(strategy.to_dict())
        base.auto_mode = "semi"
        self.initial_strategy = base
        self.config = None
        self.ranking = None
        self.excluded: list = []
        self.mesh = None
        self.input_placements = None
        self.param_placements: dict = {}
        self.cluster_name = ""

    # ------------------------------------------------------------ deciding
    def _ranks(self):
        mesh = self.dm._mesh
        if mesh is not None:
            return [int(r) for r in np.asarray(mesh.process_ids).reshape(-1)]
        from fw.distributed import _fleet_comm as comm

        return list(range(comm.world_size()))

    def _loss_fn(self):
        loss = self.dm._loss
        if loss is None:
            return None

        def fn(layer, *ins):
            return loss(layer(*ins[:-1]), ins[-1])
        return fn

    def decide(self, batch):
        """Search with the batch's shapes and pick the fastest runnable strategy."""
        from fw.distributed.auto import search
        from fw.distributed.auto.estimate import _tp_pairs, trace_step
        from fw.distributed.auto_parallel.dist_tensor import DistTensor

        layer = self.dm._layer
        for p in layer.parameters():
            if isinstance(p, DistTensor):
                raise ValueError(f"{_FN}: auto_mode='full' decides the placements; parameter "
                                 f"{p.name!r} is already distributed (leave the layer dense, "
                                 f"or use auto_mode='semi')")
        ranks = self._ranks()
        n = len(ranks)
        spec = [(list(x.shape), str(x.dtype).replace("paddle.", "")) for x in batch]
        cluster = self.options["cluster"] or _default_cluster()
        self.cluster_name = cluster.name
        loss_fn = self._loss_fn()
        step = trace_step(layer, spec, loss_fn)
        pairs = _tp_pairs(step.fwd)[1]
        pairs = [(i, j) for i, j in pairs if len(step.fwd[i][0].operands) >= 2]
        ranked = search(layer, cluster, n, input_spec=spec, loss_fn=loss_fn,
                        micro_batches=self.options["micro_batches"],
                        recompute=self.options["recompute"], amp=(None,),
                        sharding_stages=self.options["sharding_stages"],
                        max_mp=self.options["max_mp"], max_pp=self.options["max_pp"],
                        memory_limit=self.options["memory_limit"])
        from fw.distributed.auto.search import SearchResult

        keep, cuts = [], {}
        for c in ranked:
            why = runnable(c.config, len(pairs))
            if why is None and c.config.pp > 1:
                key = (c.config.pp, c.config.micro_batches)
                if key not in cuts:
                    cuts[key] = self._pipeline_problem(batch, ranks, *key)
                why = cuts[key]
            if why is None:
                keep.append(c)
            else:
                self.excluded.append((c.config, why))
        self.ranking = SearchResult(keep, ranked.pruned)
        if not keep:
            raise RuntimeError(
                f"{_FN}: auto_mode='full' found no strategy for {n} rank(s) that fits in "
                f"memory and dist.to_static runs ({len(ranked.pruned)} over the memory "
                f"limit, {len(self.excluded)} not runnable); raise "
                f"search_options(memory_limit=...) or annotate the model (auto_mode='semi')")
        best = keep[0].config
        best = self._agree(best, keep)
        self.config = best
        self._tp_params = self._tp_param_placements(step, pairs) if best.mp > 1 else {}

    def _pipeline_problem(self, batch, ranks, pp, m):
        """Why the pipeline pass cannot cut the model into `pp` stages (None: it can):
        its stage assignment is run on a traced micro-batch, as `_pp_model` does."""
        import fw.distributed as dist
        from fw.core.tensor import wrap
        from fw.distributed.auto_parallel.static.pipeline import assign_stages, build_jobs
        from fw.distributed.auto_parallel.static.tracing import trace_step

        if any(x.ndim == 0 or x.shape[0] % m for x in batch):
            return f"the batch is not divisible into {m} micro-batches"
        mesh = dist.ProcessMesh([[r] for r in ranks[:pp]], dim_names=["pp", "dp"])
        micro = [wrap(np.zeros([x.shape[0] // m] + list(x.shape[1:]), x.numpy().dtype))
                 for x in batch]
        traced = trace_step(self.dm._layer, self.dm._loss, micro, "train", mesh)
        prog = traced.program
        loss = prog.block.outputs[0]
        grads = dict(zip(traced.grads, prog.block.outputs[traced.n_outputs:]))
        stage_of, last_fwd, value_stage = assign_stages(prog, pp, loss)
        _, producer = build_jobs(prog, stage_of, last_fwd, [loss] + list(grads.values()))
        by_label = {a.label: a for a in prog.block.args}
        for label, gv in grads.items():
            owner = value_stage.get(by_label[label])
            if producer.get(gv, (owner,))[0] != owner:
                return (f"the pipeline pass puts parameter {label!r} on several of {pp} "
                        f"stages")
        return None

    def _agree(self, best, keep):
        """Rank 0's choice for every rank (the same label gathered from all)."""
        from fw.distributed import _fleet_comm as comm

        if comm.world_size() <= 1:
            return best
        labels = [b.decode() for b in comm.all_gather_bytes(best.label().encode())]
        if labels[0] == best.label():
            return best
        for c in keep + [type("C", (), {"config": cfg})() for cfg, _ in self.excluded]:
            if c.config.label() == labels[0]:
                return c.config
        raise RuntimeError(f"{_FN}: auto_mode='full': rank 0 chose {labels[0]!r}, which this "
                           f"rank's search does not have (different calibration profiles?)")

    @staticmethod
    def _tp_param_placements(step, pairs):
        """{id(parameter tensor): (column|row, parameter role)} for the split linears."""
        out = {}
        captured = step.program.captured
        for i, j in pairs:
            for k, kind in ((i, "column"), (j, "row")):
                ops = step.fwd[k][0].operands
                for pos, v in enumerate(ops[1:3], start=1):
                    if v is not None and v.role == "param":
                        t = captured.get(v.label)
                        if t is not None:
                            out[id(t)] = (kind, "weight" if pos == 1 else "bias")
        return out

    # ------------------------------------------------------------ applying
    def _make_mesh(self, ranks):
        import fw.distributed as dist

        c = self.config
        data = c.dp * c.sharding
        if c.pp > 1:
            return dist.ProcessMesh([[r] for r in ranks], dim_names=["pp", "dp"])
        if c.mp > 1 and data > 1:
            return dist.ProcessMesh(np.asarray(ranks).reshape(data, c.mp).tolist(),
                                    dim_names=["dp", "mp"])
        return dist.ProcessMesh(ranks, dim_names=["mp" if c.mp > 1 else "dp"])

    def _placements_of(self, t, mesh):
        from fw.distributed.auto_parallel.placement import Replicate, Shard

        pl = [Replicate()] * mesh.ndim
        got = self._tp_params.get(id(t))
        if got is not None:
            ax = mesh.dim_names.index("mp")
            kind, role = got
            if kind == "column":
                pl[ax] = Shard(t.ndim - 1)
            elif role == "weight":
                pl[ax] = Shard(0)
        return pl

    def apply(self):
        """Mesh, parameter placements, optimizer and strategy of the chosen config."""
        from fw.distributed.auto_parallel.api import shard_tensor

        c = self.config
        mesh = self._make_mesh(self._ranks())
        self.mesh = mesh
        layer, opt = self.dm._layer, self.dm._opt
        replaced = {}
        for sub in layer.sublayers(include_self=True):
            for name, p in list(sub._parameters.items()):
                if p is None:
                    continue
                if id(p) not in replaced:
                    pl = self._placements_of(p, mesh)
                    replaced[id(p)] = shard_tensor(p, mesh, pl)
                    self.param_placements[p.name] = pl
                sub._parameters[name] = replaced[id(p)]
        if opt is not None:
            groups = opt.get_param_groups()
            for g in groups:
                g["params"] = [replaced.get(id(p), p) for p in g["params"]]
            opt.set_param_groups(groups)
        from fw.distributed.auto_parallel.placement import Replicate, Shard

        pl = [Replicate()] * mesh.ndim
        if c.pp == 1 and c.dp * c.sharding > 1:
            pl[mesh.dim_names.index("dp")] = Shard(0)
        self.input_placements = pl
        s = self.dm._strategy
        if c.sharding > 1:
            s.sharding.enable, s.sharding.stage, s.sharding.degree = True, c.sharding_stage, \
                c.sharding
        else:
            s.sharding.enable = False
        s.pipeline.enable = c.pp > 1
        if c.pp > 1:
            s.pipeline.pp_degree, s.pipeline.accumulate_steps = c.pp, c.micro_batches
        s.recompute.enable = c.recompute
        s.gradient_merge.enable = False
        self.dm._mesh = mesh

    def prepare(self, batch):
        """The batch as the chosen strategy feeds it (deciding on the first call)."""
        from fw.distributed.auto_parallel.api import shard_tensor, unshard_dtensor
        from fw.distributed.auto_parallel.dist_tensor import DistTensor

        batch = [unshard_dtensor(x) if isinstance(x, DistTensor) else x for x in batch]
        if self.config is None:
            self.decide(batch)
            self.apply()
        if self.config.pp > 1:
            return batch
        return [shard_tensor(x, self.mesh, self.input_placements) for x in batch]

    # ------------------------------------------------------------ reporting
    def describe(self, top: int = 10) -> str:
        """The choice (strategy, mesh, placements) and the ranking with predicted times.

        Args:
            top (int, optional): how many ranked strategies to list. Default: 10.

        Returns:
            str: the text.
        """
        if self.config is None:
            return 'auto_mode="full": not decided yet (the first batch decides)'
        c, mesh = self.config, self.mesh
        lines = [f'auto_mode="full": {c.label()} on {c.world} rank(s), mesh dims '
                 f"{list(mesh.dim_names)}",
                 f"  cost model: {self.cluster_name}; predicted step "
                 f"{self.ranking[0].estimate.step_time * 1e3:.3f} ms, peak "
                 f"{self.ranking[0].estimate.memory / 2 ** 20:.1f} MiB/rank"]
        if c.pp > 1:
            lines.append(f"  pipeline: {c.pp} stages, {c.micro_batches} micro-batches")
        if c.sharding > 1:
            lines.append(f"  sharding: ZeRO stage {c.sharding_stage} over {c.sharding} ranks")
        if c.recompute:
            lines.append("  recompute: on")
        lines.append(f"  input placements: {self.input_placements}")
        for name, pl in self.param_placements.items():
            lines.append(f"  parameter {name}: {pl}")
        lines.append("  ranking (fastest first):")
        text = str(type(self.ranking)(self.ranking[:top], self.ranking.pruned))
        lines += ["    " + ln for ln in text.splitlines()]
        if self.excluded:
            lines.append(f"  not runnable by {_FN}: {len(self.excluded)} (e.g. "
                         f"{self.excluded[0][0].label()}: {self.excluded[0][1]})")
        return "\n".join(lines)
