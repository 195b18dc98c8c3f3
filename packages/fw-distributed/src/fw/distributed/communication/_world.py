"""The process's distributed state (one object, read by every collective):
whether `init_parallel_env` ran, this rank and the world size, the job's store,
the job id that prefixes every store key, and the default timeout."""
from __future__ import annotations

import datetime
import os

__all__ = ["state", "timeout_seconds", "env_rank", "env_world_size", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 1800.0   # seconds; Paddle's new_group default (timedelta(seconds=1800))


class _State:
    def __init__(self):
        self.reset()

    def reset(self):
        self.initialized = False
        self.rank = 0
        self.world_size = 1
        self.store = None        # fw.distributed.store.TCPStore client (rank 0 under plain
                                 # mpiexec: the master, hosting the server), or None
        self.job_id = os.environ.get("FW_JOB_ID", "")
        self.timeout = None      # default collective timeout (seconds)
        self.world = None        # the world Group
        self.publisher = None    # the progress publisher thread (_watch.Publisher)

    def key(self, *parts) -> str:
        """A store key of this job attempt: ``{FW_JOB_ID}/part/part``."""
        return "/".join((self.job_id,) + tuple(str(p) for p in parts))


state = _State()


def timeout_seconds(timeout, fn: str) -> float:
    """`timeout` (seconds, a timedelta, or None for the default) as seconds > 0.

    The default is the world's: `init_parallel_env`'s `timeout` argument, else
    ``FW_DIST_TIMEOUT`` (set by the launcher's ``--timeout``), else 1800 s."""
    if timeout is None:
        if state.timeout is not None:
            return state.timeout
        env = os.environ.get("FW_DIST_TIMEOUT")
        if env:
            try:
                v = float(env)
            except ValueError:
                raise ValueError(f"FW_DIST_TIMEOUT must be a number of seconds, got {env!r}") \
                    from None
            if v > 0:
                return v
            raise ValueError(f"FW_DIST_TIMEOUT must be > 0, got {env!r}")
        return DEFAULT_TIMEOUT
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"fw.distributed.{fn}: timeout must be a positive number of seconds "
                         f"or a datetime.timedelta, got {timeout!r}")
    return float(timeout)


def _env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                raise ValueError(f"fw.distributed: environment variable {n} must be an "
                                 f"integer, got {v!r}") from None
    return default


def env_rank() -> int:
    """This process's rank as the launcher (or mpiexec) set it; 0 without one."""
    return _env_int(("PADDLE_TRAINER_ID", "PMI_RANK", "RANK"), 0)


def env_world_size() -> int:
    return _env_int(("PADDLE_TRAINERS_NUM", "PMI_SIZE", "WORLD_SIZE"), 1)
