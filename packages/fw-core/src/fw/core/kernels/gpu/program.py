"""The program a device compiles: its elementwise chains fused (issue 17).

`fuse_program` runs fw-core's own ``fuse_elementwise`` pass (its grouping: chains of
elementwise ops over one shape whose intermediate values nobody else reads, see
``fw.core.ir.passes.fuse_elementwise``) on a clone of the program, so one
``fused_elementwise`` op replaces each chain; the program the user holds is not
touched. The executor compiles the clone for every backend but the cpu: on the gpu
the fused op runs a generated CUDA kernel (`fw.core.kernels.gpu.fusion`), on other
devices its reference, which calls each op's own kernel in order (bit-identical),
so the device tests on the fake device check the rewrite. ``FW_GPU_FUSION=0``
turns it off.

(Kept apart from `fusion`, which the gpu backend imports when it is made: this
module imports the pass machinery, which imports the op table and the executor, so
fw.core's ``__init__`` registers `fuse_program` with the executor.)
"""

from __future__ import annotations

from fw.core.kernels.gpu.fusion import enabled

__all__ = ["fuse_program", "register"]


def fuse_program(program):
    """A clone of `program` with its elementwise chains fused, or `program` itself when
    fusion is off or found nothing to fuse."""
    if not enabled():
        return program
    from fw.core.ir.passes import get_pass

    clone = program.clone()
    if not get_pass("fuse_elementwise").run(clone):
        return program
    return clone


def register() -> None:
    """Make the executor compile device programs through `fuse_program` (once)."""
    from fw.core.ir import executor

    if fuse_program not in executor.DEVICE_REWRITES:
        executor.DEVICE_REWRITES.append(fuse_program)
