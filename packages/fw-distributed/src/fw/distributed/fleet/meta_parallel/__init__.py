"""Tensor- and pipeline-parallel building blocks (Paddle's
``fleet.meta_parallel``)."""

from __future__ import annotations

from fw.distributed.fleet.meta_parallel.mp_layers import (
    ColumnParallelLinear,
    ParallelCrossEntropy,
    RowParallelLinear,
    VocabParallelEmbedding,
)
from fw.distributed.fleet.meta_parallel.pipeline_parallel import PipelineParallel
from fw.distributed.fleet.meta_parallel.pp_layers import LayerDesc, PipelineLayer
from fw.distributed.fleet.meta_parallel.schedule import schedule_1f1b

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding",
           "ParallelCrossEntropy", "LayerDesc", "PipelineLayer", "PipelineParallel",
           "schedule_1f1b"]
