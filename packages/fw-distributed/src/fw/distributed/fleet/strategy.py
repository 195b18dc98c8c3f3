"""`fleet.DistributedStrategy`: the switches and configs of a fleet job.

Paddle's attribute API: boolean switches (``amp``, ``recompute``,
``gradient_merge``, ``sharding``, ``pipeline``, ``tensor_parallel``) and a
``*_configs`` dict for each, which is *merged* into the defaults on assignment
(``strategy.hybrid_configs = {"dp_degree": 2}`` leaves the other degrees at 1).
Unknown keys and values of the wrong type or range raise at assignment, naming
the config and the key, instead of being ignored until the job runs.
"""

from __future__ import annotations

import copy

__all__ = ["DistributedStrategy"]

_DEFAULTS = {
    "hybrid_configs": {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1,
                       "sep_degree": 1, "order": ["dp", "pp", "sharding", "sep", "mp"],
                       # fw's extension (Paddle's dp_configs has no such key): step the
                       # optimizer per gradient bucket in backward (DataParallel's
                       # overlap_optimizer), linked by fleet.distributed_optimizer
                       "dp_configs": {"overlap_optimizer": False}},
    "amp_configs": {"init_loss_scaling": 32768.0, "incr_every_n_steps": 1000,
                    "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0, "decr_ratio": 0.8,
                    "use_dynamic_loss_scaling": True, "custom_white_list": [],
                    "custom_black_list": [], "use_pure_fp16": False, "use_fp16_guard": True,
                    "use_bf16": False, "dtype": "float16", "level": "O1"},
    "recompute_configs": {"checkpoints": [], "enable_offload": False},
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
    "sharding_configs": {"stage": 1, "sharding_degree": 1, "segment_broadcast_MB": 32.0,
                         "comm_overlap": False},
    "pipeline_configs": {"accumulate_steps": 1, "micro_batch_size": 1,
                         "schedule_mode": "1F1B"},
    "tensor_parallel_configs": {"tensor_parallel_degree": 1, "tensor_init_seed": -1},
    # parameter-server mode (fw.distributed.ps): k_steps picks geo (> 0); the other keys
    # are Paddle's communicator tuning, accepted and kept (fw's trainers send at each step)
    "a_sync_configs": {"k_steps": -1, "max_merge_var_num": 1, "send_queue_size": 16,
                       "independent_recv_thread": False, "min_send_grad_num_before_recv": 1,
                       "thread_pool_size": 1, "send_wait_times": 1,
                       "runtime_split_send_recv": False, "launch_barrier": True,
                       "heter_worker_device_guard": "cpu", "lr_decay_steps": 10,
                       "use_ps_gpu": 0, "use_gpu_graph": 0},
}
_SWITCHES = ("amp", "recompute", "gradient_merge", "sharding", "pipeline", "tensor_parallel")
_DEGREES = ("dp_degree", "mp_degree", "pp_degree", "sharding_degree", "sep_degree")


def _check_int(cfg, key, v, minimum):
    # dp_degree may be -1 in Paddle: "whatever the world size leaves"
    if isinstance(v, bool) or not isinstance(v, int) or (v < minimum and
                                                         not (key == "dp_degree" and v == -1)):
        raise ValueError(f"DistributedStrategy.{cfg}: {key!r} must be an int >= {minimum}, got "
                         f"{v!r}")


def _validate(cfg, key, v):
    if cfg == "hybrid_configs":
        if key in _DEGREES:
            _check_int(cfg, key, v, 1)
        elif key == "dp_configs":
            if not isinstance(v, dict) or set(v) - {"overlap_optimizer"} or \
                    not all(isinstance(x, bool) for x in v.values()):
                raise ValueError(f"DistributedStrategy.hybrid_configs: 'dp_configs' must be a "
                                 f"dict with the bool key 'overlap_optimizer', got {v!r}")
        elif key == "order":
            names = {"dp", "pp", "sharding", "sep", "mp"}
            if sorted(v) != sorted(names):
                raise ValueError(f"DistributedStrategy.hybrid_configs: 'order' must be a "
                                 f"permutation of {sorted(names)}, got {v!r}")
    elif cfg == "gradient_merge_configs":
        if key == "k_steps":
            _check_int(cfg, key, v, 1)
        elif key == "avg" and not isinstance(v, bool):
            raise ValueError(f"DistributedStrategy.{cfg}: 'avg' must be a bool, got {v!r}")
    elif cfg == "sharding_configs":
        if key == "stage" and v not in (1, 2, 3):
            raise ValueError(f"DistributedStrategy.sharding_configs: 'stage' must be 1 "
                             f"(optimizer state), 2 (+ gradients) or 3 (+ parameters), got {v!r}")
        if key == "sharding_degree":
            _check_int(cfg, key, v, 1)
    elif cfg == "pipeline_configs":
        if key in ("accumulate_steps", "micro_batch_size"):
            _check_int(cfg, key, v, 1)
        elif key == "schedule_mode" and v not in ("1F1B", "FThenB"):
            raise ValueError(f"DistributedStrategy.pipeline_configs: 'schedule_mode' must be "
                             f"'1F1B' or 'FThenB', got {v!r}")
    elif cfg == "amp_configs":
        if key == "dtype" and v not in ("float16", "bfloat16"):
            raise ValueError(f"DistributedStrategy.amp_configs: 'dtype' must be 'float16' or "
                             f"'bfloat16', got {v!r}")
        if key == "level" and v not in ("O1", "O2"):
            raise ValueError(f"DistributedStrategy.amp_configs: 'level' must be 'O1' or 'O2', "
                             f"got {v!r}")
    elif cfg == "tensor_parallel_configs" and key == "tensor_parallel_degree":
        _check_int(cfg, key, v, 1)
    elif cfg == "a_sync_configs" and key == "k_steps":
        _check_int(cfg, key, v, -1)


class DistributedStrategy:
    """What parallelism and which training techniques a fleet job uses.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet import DistributedStrategy
        >>> s = DistributedStrategy()
        >>> s.hybrid_configs = {"dp_degree": 2, "mp_degree": 2}
        >>> s.hybrid_configs["pp_degree"]
        1
        >>> s.gradient_merge = True
        >>> s.gradient_merge_configs = {"k_steps": 4}
    """

    def __init__(self):
        object.__setattr__(self, "_cfg", copy.deepcopy(_DEFAULTS))
        object.__setattr__(self, "_on", dict.fromkeys(_SWITCHES, False))
        object.__setattr__(self, "find_unused_parameters", False)
        # parameter-server mode: asynchronous by default, as in Paddle
        object.__setattr__(self, "_a_sync", True)

    @property
    def a_sync(self) -> bool:
        """Parameter-server mode: True (default) for async or, with
        ``a_sync_configs["k_steps"] > 0``, geo; False for sync. Setting it resets
        ``k_steps`` to 0, as Paddle does.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> s = fleet.DistributedStrategy()
            >>> s.a_sync
            True
            >>> s.a_sync = False
            >>> s.a_sync
            False
        """
        return self._a_sync

    def __getattr__(self, name):
        d = self.__dict__
        if name in d["_on"]:
            return d["_on"][name]
        if name in d["_cfg"]:
            return d["_cfg"][name]
        raise AttributeError(f"DistributedStrategy has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _SWITCHES:
            if not isinstance(value, bool):
                raise ValueError(f"DistributedStrategy.{name} must be a bool, got {value!r}")
            self._on[name] = value
        elif name in _DEFAULTS:
            if not isinstance(value, dict):
                raise ValueError(f"DistributedStrategy.{name} must be a dict, got "
                                 f"{type(value).__name__}")
            cur = self._cfg[name]
            for k, v in value.items():
                if k not in cur:
                    raise ValueError(f"DistributedStrategy.{name}: unknown key {k!r}; known "
                                     f"keys: {sorted(cur)}")
                _validate(name, k, v)
            for k, v in value.items():
                cur[k] = copy.deepcopy(v)
        elif name == "find_unused_parameters":
            object.__setattr__(self, name, bool(value))
        elif name == "a_sync":
            if not isinstance(value, bool):
                raise ValueError(f"DistributedStrategy.a_sync must be a bool, got {value!r}")
            object.__setattr__(self, "_a_sync", value)
            self._cfg["a_sync_configs"]["k_steps"] = 0
        else:
            raise AttributeError(f"DistributedStrategy has no attribute {name!r} (known: "
                                 f"{sorted(_SWITCHES + tuple(_DEFAULTS) + ('a_sync',))})")

    def __repr__(self):
        on = [k for k, v in self._on.items() if v]
        return f"DistributedStrategy(on={on}, hybrid_configs={self._cfg['hybrid_configs']})"
