"""fw.distributed: collectives, the launcher, DataParallel and fleet (Paddle 3.x's
``paddle.distributed``). See packages/fw-distributed/README.md for the design.

Importing it is cheap: MPI is initialised by `init_parallel_env` (or the first
collective of a launched job), never at import time."""

# ---- comm helper's block (parallel_env, communication, flight recorder); the
# integrator rewires it when it owns the re-exports.
from fw.distributed import communication  # noqa: E402
from fw.distributed.communication import *  # noqa: E402,F401,F403
from fw.distributed.communication import __all__ as _comm_all  # noqa: E402
from fw.distributed.parallel_env import (  # noqa: E402
    ParallelEnv,
    get_backend,
    get_rank,
    get_world_size,
    init_parallel_env,
    is_available,
    is_initialized,
)

__all__ = list(_comm_all) + ["communication", "ParallelEnv", "get_backend", "get_rank",
                             "get_world_size", "init_parallel_env", "is_available",
                             "is_initialized"]
# ---- end of the comm helper's block
