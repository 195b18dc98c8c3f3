"""The launcher: ``python -m fw.distributed.launch`` (``fwrun``), Paddle's flags.

`launch` runs a job from a command line and returns its exit status; the
pieces live in `args` (flags), `env` (what a rank's environment holds),
`workers` (rank processes) and `main` (rendezvous, watching, restarts)."""

from fw.distributed.launch.main import launch, main

__all__ = ["launch", "main"]
