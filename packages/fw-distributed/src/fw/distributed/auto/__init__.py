"""fw.distributed.auto: the cost model of parallel training.

- `Cluster` / `Device` / `Link`: the hardware (presets `Cluster.a100_dgx`,
  `Cluster.v100_dgx`; `Cluster.this_machine()` from a calibration profile);
- `calibrate`: measures fw's kernels and the MPI engine's collectives here;
- `estimate`: step time (compute / communication / bubble) and peak memory of a
  model under a `ParallelConfig`, from a roofline over fw's IR and alpha-beta
  collectives;
- `search` / `choose`: rank strategies, pick the best (``Strategy(auto_mode="full")``).

See the "Cost model" section of packages/fw-distributed/README.md.
"""

from fw.distributed.auto.calibrate import calibrate, default_profile_path, load_profile
from fw.distributed.auto.cluster import Cluster, Device, Link
from fw.distributed.auto.comm import collective_time
from fw.distributed.auto.estimate import Estimate, ParallelConfig, estimate, trace_step
from fw.distributed.auto.op_cost import OpCost, cost_of, coverage
from fw.distributed.auto.search import Candidate, SearchResult, choose, search
from fw.distributed.auto.strategy import Strategy

__all__ = ["Cluster", "Device", "Link", "calibrate", "load_profile", "default_profile_path",
           "estimate", "Estimate", "ParallelConfig", "trace_step", "search", "choose",
           "Candidate", "SearchResult", "Strategy", "collective_time", "cost_of", "coverage",
           "OpCost"]
