"""`search`: rank hybrid-parallel strategies by the cost model; `choose`: the best
one as a `fw.distributed.Strategy` (``auto_mode="full"``).

The space: every factorisation ``world = dp x mp x pp x sharding`` (sharding and
dp > 1 are not combined, as fleet refuses it; ZeRO stages 1-3 when sharding > 1),
micro-batch counts that divide the per-replica batch, recompute on/off and the
AMP dtypes asked for. Candidates whose peak memory per rank exceeds the device's
memory (or `memory_limit`) are pruned and listed with the reason; the rest are
sorted by predicted step time. The model is traced once per micro-batch size.
"""

from __future__ import annotations

from dataclasses import dataclass

from fw.distributed.auto.estimate import Estimate, ParallelConfig, estimate

__all__ = ["search", "choose", "Candidate", "SearchResult"]


@dataclass
class Candidate:
    """A ranked strategy: its `config` and `estimate`.

    Args:
        config (ParallelConfig): the strategy.
        estimate (Estimate): its predicted cost.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Cluster, search
        >>> result = search(fw.nn.Linear(64, 64), Cluster.a100_dgx(), mesh_size=2,
        ...                 input_spec=[([32, 64], "float32")])
        >>> best = result[0]
        >>> type(best).__name__, best.config.world
        ('Candidate', 2)
    """

    config: ParallelConfig
    estimate: Estimate


class SearchResult(list):
    """The feasible candidates, fastest first; `pruned` lists ``(config, reason)``.

    Args:
        items (list[Candidate], optional): the candidates, fastest first. Default: ().
        pruned (list, optional): ``(config, reason)`` of the configurations left out.
            Default: ().

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Cluster, search
        >>> result = search(fw.nn.Linear(64, 64), Cluster.a100_dgx(), mesh_size=2,
        ...                 input_spec=[([32, 64], "float32")])
        >>> type(result).__name__, len(result) > 0
        ('SearchResult', True)
    """

    def __init__(self, items=(), pruned=()):
        super().__init__(items)
        self.pruned = list(pruned)

    def __str__(self):
        lines = [f"{'rank':>4} {'strategy':28} {'step ms':>10} {'comm ms':>9} {'bubble ms':>9} "
                 f"{'MiB/rank':>9}"]
        for i, c in enumerate(self):
            e = c.estimate
            lines.append(f"{i + 1:4d} {c.config.label():28} {e.step_time * 1e3:10.3f} "
                         f"{e.communication * 1e3:9.3f} {e.bubble * 1e3:9.3f} "
                         f"{e.memory / 2 ** 20:9.1f}")
        if self.pruned:
            lines.append(f"pruned by memory: {len(self.pruned)}")
        return "\n".join(lines)


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def search(model, cluster=None, mesh_size: int | None = None, *, input_spec, loss_fn=None,
           micro_batches=(1, 2, 4, 8), recompute=(False, True), amp=(None,),
           sharding_stages=(1, 2, 3), max_mp: int | None = None, max_pp: int | None = None,
           memory_limit: float | None = None, optimizer_states: int = 2) -> SearchResult:
    """Rank the strategies of `mesh_size` ranks for `model` on `cluster`.

    Args:
        model (Layer|Program): the model (see `estimate`).
        cluster (Cluster, optional): default `Cluster.this_machine()`.
        mesh_size (int, optional): ranks to use; default all the cluster's devices.
        input_spec (list): the step's inputs with the global batch as dim 0.
        loss_fn (callable, optional): ``loss_fn(layer, *inputs) -> loss``.
        micro_batches (tuple): micro-batch counts to try (those that divide the batch).
        recompute (tuple): recompute settings to try.
        amp (tuple): AMP dtypes to try (None: fp32).
        sharding_stages (tuple): ZeRO stages to try when sharding > 1.
        max_mp, max_pp (int, optional): caps on the tensor/pipeline degrees (default:
            mp within a node).
        memory_limit (float, optional): bytes per rank; default the device's memory.
        optimizer_states (int): fp32 optimizer states per parameter (Adam: 2).

    Returns:
        SearchResult: `Candidate`\\ s, fastest first, with `.pruned`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto import Cluster, search
            >>> mlp = fw.nn.Sequential(fw.nn.Linear(256, 1024), fw.nn.ReLU(),
            ...                        fw.nn.Linear(1024, 256))
            >>> ranked = search(mlp, Cluster.a100_dgx(1), 8, input_spec=[([64, 256], "float32")],
            ...                 micro_batches=(1, 2), recompute=(False,))
            >>> ranked[0].estimate.step_time <= ranked[-1].estimate.step_time
            True
    """
    from fw.distributed.auto.cluster import Cluster

    cluster = cluster if cluster is not None else Cluster.this_machine()
    world = mesh_size or cluster.num_devices
    if not (isinstance(world, int) and world >= 1):
        raise ValueError(f"search: mesh_size must be an int >= 1, got {mesh_size!r}")
    limit = memory_limit or cluster.device.memory
    max_mp = max_mp or min(world, cluster.devices_per_node if cluster.nodes > 1 else world)
    max_pp = max_pp or world
    cache, ok, pruned = {}, [], []
    for mp in _divisors(world):
        if mp > max_mp:
            continue
        for pp in _divisors(world // mp):
            if pp > max_pp:
                continue
            rest = world // (mp * pp)
            layouts = [(rest, 1, 1)] + ([(1, rest, st) for st in sharding_stages]
                                        if rest > 1 else [])
            for dp, s, st in layouts:
                for m in micro_batches:
                    if pp > 1 and m < pp:
                        continue  # fewer micro-batches than stages: mostly bubble
                    for rc in recompute:
                        for a in amp:
                            cfg = ParallelConfig(dp=dp, mp=mp, pp=pp, sharding=s,
                                                 sharding_stage=st, micro_batches=m,
                                                 recompute=rc, amp=a)
                            try:
                                e = estimate(model, cfg, cluster, input_spec=input_spec,
                                             loss_fn=loss_fn, optimizer_states=optimizer_states,
                                             _cache=cache)
                            except ValueError as err:  # indivisible batch or widths
                                pruned.append((cfg, str(err)))
                                continue
                            if e.memory > limit:
                                pruned.append((cfg, f"peak memory {e.memory / 2 ** 30:.2f} GiB "
                                                    f"> {limit / 2 ** 30:.2f} GiB"))
                                continue
                            ok.append(Candidate(cfg, e))
    ok.sort(key=lambda c: (c.estimate.step_time, c.estimate.memory))
    return SearchResult(ok, pruned)


def choose(model, cluster=None, mesh_size: int | None = None, strategy=None, **kwargs):
    """The strategy the cost model ranks best (``auto_mode="full"``).

    With ``strategy.auto_mode == "semi"`` the given strategy is returned unchanged (the
    user's shard annotations decide). Otherwise `search` runs and the winner is
    written into a `Strategy` (its ``sharding``, ``pipeline``, ``recompute``, ``amp``
    sub-configs, and ``parallel_degrees`` = fleet's ``hybrid_configs`` names, to hand
    to ``fleet.DistributedStrategy().hybrid_configs``) for fleet's hybrid training.
    ``dist.to_static`` with ``auto_mode="full"`` searches and applies the choice
    itself (``auto_parallel/static/auto_mode.py``).

    Args:
        model, cluster, mesh_size: as `search`.
        strategy (Strategy, optional): the user's strategy (default
            ``Strategy({"auto_mode": "full"})``).
        **kwargs: passed to `search` (``input_spec`` is required).

    Returns:
        Strategy: with ``parallel_degrees`` set, and ``search_result`` (the ranking).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto import Cluster, choose
            >>> mlp = fw.nn.Sequential(fw.nn.Linear(256, 1024), fw.nn.ReLU(),
            ...                        fw.nn.Linear(1024, 256))
            >>> s = choose(mlp, Cluster.a100_dgx(1), 8, input_spec=[([64, 256], "float32")],
            ...            micro_batches=(1,), recompute=(False,))
            >>> s.auto_mode, sorted(s.parallel_degrees)[:2]
            ('full', ['amp', 'dp'])
    """
    from fw.distributed.auto.strategy import Strategy

    strategy = strategy if strategy is not None else Strategy({"auto_mode": "full"})
    if strategy.auto_mode == "semi":
        return strategy
    ranked = search(model, cluster, mesh_size, **kwargs)
    if not ranked:
        raise RuntimeError(f"choose: no strategy fits in memory ({len(ranked.pruned)} pruned: "
                           f"{ranked.pruned[:3]} ...)")
    best = ranked[0].config
    out = Strategy(strategy.to_dict())
    out.sharding.enable = best.sharding > 1
    out.sharding.degree = best.sharding if best.sharding > 1 else out.sharding.degree
    out.sharding.stage = best.sharding_stage if best.sharding > 1 else out.sharding.stage
    out.pipeline.enable = best.pp > 1
    out.pipeline.pp_degree = best.pp
    out.pipeline.accumulate_steps = best.micro_batches
    out.gradient_merge.enable = best.pp == 1 and best.micro_batches > 1
    out.gradient_merge.k_steps = best.micro_batches if best.pp == 1 else 1
    out.recompute.enable = best.recompute
    out.amp.enable = best.amp is not None
    if best.amp:
        out.amp.dtype = best.amp
    out.parallel_degrees = {"dp": best.dp, "mp": best.mp, "pp": best.pp,
                            "sharding": best.sharding, "sharding_stage": best.sharding_stage,
                            "micro_batches": best.micro_batches, "recompute": best.recompute,
                            "amp": best.amp}
    object.__setattr__(out, "search_result", ranked)
    return out
