"""fw.hapi — the high-level API: `Model`, callbacks, `summary`, `flops`
(Paddle's ``paddle.Model``, ``paddle.callbacks``, ``paddle.summary``,
``paddle.flops``)."""

from fw.hapi import callbacks, tensorboard  # noqa: F401
from fw.hapi.flops import flops
from fw.hapi.model import Model
from fw.hapi.summary import summary

__all__ = ["Model", "summary", "flops", "callbacks"]
