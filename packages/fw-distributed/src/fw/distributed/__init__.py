"""fw.distributed: collectives, the launcher, DataParallel and fleet (Paddle 3.x's
``paddle.distributed``). See packages/fw-distributed/README.md for the design.

Importing it is cheap: MPI is initialised by `init_parallel_env` (or the first
collective of a launched job), never at import time."""
