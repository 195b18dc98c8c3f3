"""`fleet.distributed_optimizer`'s wrapper: gradient merge and ZeRO sharding.

Gradient merge (``strategy.gradient_merge``, ``gradient_merge_configs = {"k_steps":
k, "avg": True}``): ``step()`` is called after every backward, but the inner
optimizer runs only every k-th call, on the gradients accumulated over the k
backwards (averaged with ``avg``); ``clear_grad()`` in between is a no-op so the
gradients keep accumulating. k steps of batch b then equal one step of batch
k*b. Under data parallelism (the model `distributed_model` made) only the k-th
backward all-reduces: the others run as under ``no_sync()`` and accumulate
locally, so gradient merge also divides the communication by k.

``strategy.hybrid_configs = {"dp_configs": {"overlap_optimizer": True}}`` (fw's
extension) hands the optimizer to the data-parallel model `distributed_model` made
(`DataParallel.set_overlap_optimizer`): each gradient bucket's parameters are
stepped in backward while the later buckets' all-reduces are in flight, and
``step()`` completes the step. Gradient merge (its averaging happens in ``step()``)
and ZeRO sharding (owners update their own parameters) keep it off, with a warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from fw.core.internal import bump_version

__all__ = ["HybridParallelOptimizer"]


class HybridParallelOptimizer:
    def __init__(self, optimizer, hcg, strategy):
        self._inner_opt = optimizer
        self._hcg = hcg
        self._strategy = strategy
        gm = strategy.gradient_merge
        cfg = strategy.gradient_merge_configs
        self._k = int(cfg["k_steps"]) if gm else 1
        self._avg = bool(cfg["avg"])
        self._calls = 0
        shard_n = hcg.get_sharding_parallel_world_size() if hcg is not None else 1
        self._opt = optimizer
        from fw.distributed.fleet import fleet_base

        self._dp_model = fleet_base._state.dp_model if self._k > 1 else None
        self._sync_next()
        if shard_n > 1 or strategy.sharding:
            stage = strategy.sharding_configs["stage"]
            if stage == 3:
                raise NotImplementedError(
                    "fleet.distributed_optimizer: sharding stage 3 needs the model wrapped "
                    "too: use fw.distributed.sharding.group_sharded_parallel(model, "
                    "optimizer, level='p_g_os')")
            from fw.distributed.sharding import ShardingOptimizer

            g = hcg.get_sharding_parallel_group()
            # the model is a DataParallel over the sharding group (distributed_model),
            # which already reduced the gradients
            self._opt = ShardingOptimizer(optimizer, g, stage, grads_reduced=g.nranks > 1)
        self._link_overlap(strategy, fleet_base._state.dp_model, shard_n > 1 or strategy.sharding)

    def _link_overlap(self, strategy, dp_model, sharded):
        cfg = strategy.hybrid_configs.get("dp_configs") or {}
        if not cfg.get("overlap_optimizer"):
            return
        why = None
        if self._k > 1:
            why = "gradient merge averages the gradients in step(), after backward"
        elif sharded:
            why = "ZeRO sharding updates each parameter on its owner only"
        elif dp_model is None:
            return  # one data-parallel rank: nothing to overlap
        if why is not None:
            warnings.warn(f"fleet.distributed_optimizer: dp_configs.overlap_optimizer is off: "
                          f"{why}", stacklevel=3)
            return
        dp_model.set_overlap_optimizer(self._inner_opt)

    def __getattr__(self, name):
        return getattr(self._inner_opt, name)

    @property
    def _params(self):
        return [p for p in (self._inner_opt.get_parameter_list() or ()) if not p.stop_gradient]

    def _sync_next(self):
        """Let the next backward all-reduce only if it completes a merge."""
        if self._dp_model is not None:
            self._dp_model._grad_need_sync = (self._calls + 1) % self._k == 0

    def step(self):
        self._calls += 1
        self._sync_next()
        if self._calls % self._k:
            return
        if self._k > 1 and self._avg:
            for p in self._all_params():
                g = p._grad
                if g is not None:
                    g._data *= np.asarray(1.0 / self._k, dtype=g._data.dtype)
                    bump_version(g)
        self._opt.step()

    def _all_params(self):
        o = self._opt
        return list(getattr(o, "_all", None) or self._params)

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        self.step()

    def clear_grad(self, set_to_zero=True):
        if self._calls % self._k:
            return  # still merging: keep the accumulated gradients
        self._opt.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self):
        return self._opt.state_dict()

    def set_state_dict(self, state_dict):
        return self._opt.set_state_dict(state_dict)
