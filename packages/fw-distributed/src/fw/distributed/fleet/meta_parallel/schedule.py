"""Pipeline schedules as pure functions: the order in which one stage runs the
forward (``"F"``) and backward (``"B"``) passes of its micro-batches.

1F1B (PipeDream-Flush; Narayanan et al., 2021, "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", section 2.2): stage s first runs
``num_stages - s - 1`` warm-up forwards, then alternates one forward and one
backward, then drains the remaining backwards. At most ``num_stages - s``
micro-batches' activations are alive on stage s at any time (FThenB — all
forwards, then all backwards — keeps all of them).
"""

from __future__ import annotations

__all__ = ["schedule_1f1b", "schedule_fthenb", "max_in_flight"]


def _check(num_stages, stage_id, num_micro):
    if num_stages < 1 or not 0 <= stage_id < num_stages or num_micro < 1:
        raise ValueError(f"pipeline schedule: need num_stages >= 1, 0 <= stage_id < "
                         f"num_stages and num_micro >= 1; got num_stages={num_stages}, "
                         f"stage_id={stage_id}, num_micro={num_micro}")


def schedule_1f1b(num_stages, stage_id, num_micro):
    """The 1F1B order of stage `stage_id`: a list of ``("F", i)`` / ``("B", i)``.
    A stage runs ``num_stages - stage_id - 1`` warm-up forwards, then alternates one
    forward and one backward, then drains the backwards.

    Args:
        num_stages (int): the pipeline degree.
        stage_id (int): this stage, ``0 <= stage_id < num_stages``.
        num_micro (int): micro-batches per step.

    Returns:
        list[tuple]: the ops in order.

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.meta_parallel import schedule_1f1b
        >>> schedule_1f1b(2, 0, 3)
        [('F', 0), ('F', 1), ('B', 0), ('F', 2), ('B', 1), ('B', 2)]
    """
    _check(num_stages, stage_id, num_micro)
    warm = min(num_stages - stage_id - 1, num_micro)
    ops = [("F", i) for i in range(warm)]
    for i in range(num_micro - warm):
        ops.append(("F", warm + i))
        ops.append(("B", i))
    ops += [("B", i) for i in range(num_micro - warm, num_micro)]
    return ops


def schedule_fthenb(num_stages, stage_id, num_micro):
    """All forwards, then all backwards (GPipe's order)."""
    _check(num_stages, stage_id, num_micro)
    return [("F", i) for i in range(num_micro)] + [("B", i) for i in range(num_micro)]


def max_in_flight(ops):
    """The most micro-batches whose forward ran and backward has not, over `ops`."""
    live = best = 0
    for kind, _ in ops:
        live += 1 if kind == "F" else -1
        best = max(best, live)
    return best
