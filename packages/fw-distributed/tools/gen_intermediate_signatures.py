"""Write tests/fixtures/paddle_intermediate_signatures.json: the signatures (argument
names, kinds and defaults) and enum values of Paddle 3.x's intermediate auto-parallel
names, read from a real Paddle install, for tests/test_intermediate.py.

Run with Paddle's interpreter (never in CI):
    /work/tmp/paddle-venv/bin/python packages/fw-distributed/tools/gen_intermediate_signatures.py
"""

import inspect
import json
import os

import paddle
import paddle.distributed as dist

NAMES = ["parallelize", "ColWiseParallel", "RowWiseParallel", "ConvParallel", "PrepareLayerInput",
         "PrepareLayerOutput", "SequenceParallelBegin", "SequenceParallelEnd",
         "SequenceParallelEnable", "SequenceParallelDisable", "ContextParallel",
         "PrepareContextParallel", "ShardingStage1", "ShardingStage2", "ShardingStage3",
         "get_mesh", "set_mesh", "shard_scaler", "local_map", "LocalLayer", "to_distributed",
         "DistAttr", "shard_optimizer"]


def params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        d = None if p.default is inspect.Parameter.empty else repr(p.default)
        out.append([p.name, p.kind.name, d])
    return out


def main():
    sig = {n: params(getattr(dist, n)) for n in NAMES}
    enums = {"SplitPoint": {m.name: m.value for m in dist.SplitPoint},
             "ParallelMode": {k: v for k, v in vars(dist.ParallelMode).items()
                              if k.isupper()}}
    out = {"paddle": paddle.__version__, "signatures": sig, "enums": enums}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                        "paddle_intermediate_signatures.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
