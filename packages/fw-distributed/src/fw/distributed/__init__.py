"""fw.distributed: collectives, the launcher, DataParallel and fleet (Paddle 3.x's
``paddle.distributed``). See packages/fw-distributed/README.md for the design.

Importing it is cheap: MPI is initialised by `init_parallel_env` (or the first
collective of a launched job), never at import time."""

# ---- fleet helper's area (DataParallel, fleet, sharding, checkpoint); the integrator
# ---- re-wires this block when it writes the package's exports
from fw.distributed import checkpoint, fleet, sharding  # noqa: E402
from fw.distributed.checkpoint import load_state_dict, save_state_dict  # noqa: E402
from fw.distributed.parallel import DataParallel  # noqa: E402
# ---- end of the fleet helper's area
