"""`fw.distributed.Strategy`: Paddle 3.x's ``paddle.distributed.Strategy`` — the
configuration of auto-parallel training (sub-configs ``sharding``,
``gradient_merge``, ``pipeline``, ``amp``, ``recompute``, ``fused_passes``) plus the
base fields, among them ``auto_mode``: "semi" (the user's shard annotations
decide) or "full" (the cost model picks the parallel strategy: `auto.choose`).

Field names and defaults are Paddle's (paddle/distributed/auto_parallel/constants.py
of Paddle 3.x; facts only). Only the fields the cost model and fleet understand
have an effect; the others are kept and validated as data. ``dist.to_static``
honours sharding, gradient_merge and pipeline and refuses the rest. Paddle 3.3
keeps ``recompute`` private (``_recompute``, "template interface"); fw exposes it,
as the cost model searches over it.
"""

from __future__ import annotations

import copy

__all__ = ["Strategy"]

_BASE = {"auto_mode": "semi", "gradient_scale": True,
         "gradient_scale_using_allreduce_avg": False, "use_cache": True, "return_numpy": True,
         "all_ranks": False, "split_data": True, "seed": None, "reinit": False,
         "full_graph": True}
_SUB = {
    "sharding": {"enable": False, "stage": 1, "degree": 8, "enable_overlap": False,
                 "param_comm_stream_num": 1, "grad_comm_stream_num": 1,
                 "param_bucket_size_numel": 1, "grad_bucket_size_numel": 1,
                 "enable_hierarchical_comm": False, "partition_algor": "greedy_even",
                 "enable_tuning": False, "tuning_range": [], "release_gradients": False,
                 "comm_buffer_size_MB": 256, "enable_tensor_fusion": False,
                 "save_unbalanced_param": True},
    "gradient_merge": {"enable": False, "k_steps": 1, "avg": True},
    "pipeline": {"enable": False, "schedule_mode": "1F1B", "pp_degree": 1, "vpp_degree": 1,
                 "vpp_seg_method": "", "micro_batch_size": 1, "accumulate_steps": 1,
                 "generation_batch_size": 1, "enable_send_recv_overlap": False,
                 "job_schedule_profiler_start": -1, "job_schedule_profiler_stop": -1,
                 "memory_limit_times": -1, "split_backward": False},
    "amp": {"enable": False, "dtype": "float16", "level": "o1", "init_loss_scaling": 32768.0,
            "incr_every_n_steps": 1000, "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0,
            "decr_ratio": 0.8, "use_dynamic_loss_scaling": True, "custom_white_list": [],
            "custom_black_list": [], "custom_black_varnames": [], "use_fp16_guard": False,
            "use_bf16_guard": False, "use_master_grad": False, "use_promote": True},
    "recompute": {"enable": False, "checkpoints": [], "no_recompute_segments": [], "sr": 0,
                  "refined_ops_patterns": [], "enable_tuning": False},
    "fused_passes": {"enable": False, "fused_passes_list": []},
}
_CHECKS = {
    ("base", "auto_mode"): lambda v: v in ("semi", "full"),
    ("sharding", "stage"): lambda v: v in (0, 1, 2, 3),
    ("sharding", "degree"): lambda v: isinstance(v, int) and v >= 1,
    ("gradient_merge", "k_steps"): lambda v: isinstance(v, int) and v >= 1,
    ("pipeline", "schedule_mode"): lambda v: v in ("1F1B", "FThenB", "VPP", "Eager1F1B",
                                                    "ZBH1"),
    ("pipeline", "pp_degree"): lambda v: isinstance(v, int) and v >= 1,
    ("pipeline", "micro_batch_size"): lambda v: isinstance(v, int) and v >= 1,
    ("pipeline", "accumulate_steps"): lambda v: isinstance(v, int) and v >= 1,
    ("amp", "dtype"): lambda v: v in ("float16", "bfloat16"),
    ("amp", "level"): lambda v: str(v).lower() in ("o0", "o1", "o2", "o3"),
}


class _Config:
    """One sub-config: attribute access to a fixed set of fields, checked on set."""

    def __init__(self, category, defaults, given):
        object.__setattr__(self, "_category", category)
        object.__setattr__(self, "_fields", copy.deepcopy(defaults))
        for k, v in (given or {}).items():
            setattr(self, k, v)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(f"Strategy.{self._category} has no field {name!r} (fields: "
                             f"{sorted(fields)})")

    def __setattr__(self, name, value):
        if name not in self._fields:
            raise AttributeError(f"Strategy.{self._category} has no field {name!r} (fields: "
                                 f"{sorted(self._fields)})")
        check = _CHECKS.get((self._category, name))
        if check is not None and not check(value):
            raise ValueError(f"Strategy.{self._category}.{name}: invalid value {value!r}")
        self._fields[name] = value

    def to_dict(self) -> dict:
        return copy.deepcopy(self._fields)

    def __repr__(self):
        return f"{self._category}: {self._fields}"


class Strategy(_Config):
    """The configuration of auto-parallel training (``paddle.distributed.Strategy``).

    Args:
        config (dict, optional): fields to set: base fields (``auto_mode``, ...) at the
            top level, sub-configs as nested dicts (``{"sharding": {"enable": True}}``).

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy({"auto_mode": "full"})
            >>> strategy.sharding.enable = True
            >>> strategy.sharding.stage = 2
            >>> strategy.pipeline.accumulate_steps = 4
            >>> strategy.auto_mode, strategy.sharding.stage
            ('full', 2)
    """

    def __init__(self, config: dict | None = None):
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"Expected a dictionary. But received: {config}")
        config = copy.deepcopy(config or {})
        subs = {k: config.pop(k) for k in list(config) if k in _SUB}
        object.__setattr__(self, "_subs", {})
        super().__init__("base", _BASE, {})
        for k, defaults in _SUB.items():
            given = subs.get(k)
            if given is not None and not isinstance(given, dict):
                raise ValueError(f"Strategy: {k!r} must be a dict, got {given!r}")
            self._subs[k] = _Config(k, defaults, given)
        for k, v in config.items():
            setattr(self, k, v)
        object.__setattr__(self, "parallel_degrees", None)

    def __getattr__(self, name):
        subs = self.__dict__.get("_subs", {})
        if name in subs:
            return subs[name]
        return super().__getattr__(name)

    def __setattr__(self, name, value):
        if name in self.__dict__.get("_subs", {}):
            raise AttributeError(f"Strategy.{name} is a sub-config: set its fields "
                                 f"(strategy.{name}.enable = True)")
        if name == "parallel_degrees":
            object.__setattr__(self, name, value)
            return
        super().__setattr__(name, value)

    @property
    def sharding(self):
        """The ZeRO sharding options (``enable`` and its settings), set by attribute.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.sharding.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.sharding.enable, d["sharding"]["enable"]
            (True, True)
        """
        return self._subs["sharding"]

    @property
    def gradient_merge(self):
        """The gradient-merge (accumulation) options (``enable`` and its settings).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.gradient_merge.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.gradient_merge.enable, d["gradient_merge"]["enable"]
            (True, True)
        """
        return self._subs["gradient_merge"]

    @property
    def pipeline(self):
        """The pipeline-parallel options (``enable`` and its settings), set by attribute.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.pipeline.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.pipeline.enable, d["pipeline"]["enable"]
            (True, True)
        """
        return self._subs["pipeline"]

    @property
    def amp(self):
        """The mixed-precision options (``enable`` and its settings), set by attribute.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.amp.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.amp.enable, d["amp"]["enable"]
            (True, True)
        """
        return self._subs["amp"]

    @property
    def recompute(self):
        """The recomputation options (``enable`` and its settings), set by attribute.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.recompute.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.recompute.enable, d["recompute"]["enable"]
            (True, True)
        """
        return self._subs["recompute"]

    @property
    def fused_passes(self):
        """The fused-pass options (``enable`` and its settings), set by attribute.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> strategy = dist.Strategy()
            >>> strategy.fused_passes.enable = True
            >>> d = strategy.to_dict()
            >>> strategy.fused_passes.enable, d["fused_passes"]["enable"]
            (True, True)
        """
        return self._subs["fused_passes"]

    def to_dict(self) -> dict:
        """The strategy as a plain dict, the sub-configurations as nested dicts.

        Returns:
            dict: the settings.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> d = dist.Strategy().to_dict()
            >>> d["sharding"]["stage"], d["pipeline"]["enable"]
            (1, False)
        """
        d = super().to_dict()
        for k, sub in self._subs.items():
            d[k] = sub.to_dict()
        return d

    def to_parallel_config(self, world_size: int | None = None, mp_degree: int = 1):
        """The cost model's `ParallelConfig` this strategy describes on `world_size`
        ranks with `mp_degree` tensor-parallel ranks (a Strategy has no dp/mp degree
        of its own: in Paddle they come from the process mesh). A strategy made by
        `auto.choose` carries its degrees (``parallel_degrees``) and needs neither.

        Args:
            world_size (int, optional): the ranks; None: this job's (or the strategy's own
                degrees). Default: None.
            mp_degree (int, optional): tensor-parallel ranks. Default: 1.

        Returns:
            ParallelConfig: the degrees and options.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> cfg = dist.Strategy().to_parallel_config(world_size=4, mp_degree=2)
            >>> cfg.dp, cfg.mp, cfg.pp
            (2, 2, 1)
        """
        from fw.distributed.auto.estimate import ParallelConfig

        if self.parallel_degrees is not None and world_size is None:
            return ParallelConfig(**self.parallel_degrees)
        pp = self.pipeline.pp_degree if self.pipeline.enable else 1
        m = self.pipeline.accumulate_steps if self.pipeline.enable else (
            self.gradient_merge.k_steps if self.gradient_merge.enable else 1)
        s = self.sharding.degree if (self.sharding.enable and self.sharding.stage > 0) else 1
        world = world_size or pp * s * mp_degree
        if world % (pp * s * mp_degree):
            raise ValueError(f"Strategy.to_parallel_config: world_size {world} is not a "
                             f"multiple of pp {pp} x sharding {s} x mp {mp_degree}")
        return ParallelConfig(dp=world // (pp * s * mp_degree), mp=mp_degree, pp=pp,
                              sharding=s, sharding_stage=max(self.sharding.stage, 1),
                              micro_batches=m, recompute=bool(self.recompute.enable),
                              amp=self.amp.dtype if self.amp.enable else None)

    def __repr__(self):
        lines = [f"Strategy(auto_mode={self.auto_mode!r})"]
        lines += [f"  {sub!r}" for sub in self._subs.values() if sub.enable]
        if self.parallel_degrees:
            lines.append(f"  degrees: {self.parallel_degrees}")
        return "\n".join(lines)
