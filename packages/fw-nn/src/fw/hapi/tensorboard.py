"""TensorBoard logging for `fw.Model`'s callbacks (``fw.callbacks.TensorBoard`` and
``VisualDL``): the event files are written by `fw.utils.LogWriter`, which hands them
to the tensorboardX library (record framing, CRC32C and protobufs are its job; the
hand-written writer this module held before is gone).
"""

from __future__ import annotations

from fw.utils.log_writer import LogWriter

__all__ = ["LogWriter", "open_writer"]


def open_writer(log_dir, flush_secs=30) -> LogWriter:
    """The writer the callbacks log through: a `LogWriter` on `log_dir` whose
    background thread flushes every `flush_secs` seconds (the callbacks also flush
    after each epoch and evaluation)."""
    return LogWriter(logdir=log_dir, flush_secs=flush_secs)
