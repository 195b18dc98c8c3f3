"""Paddle's ``paddle.utils.download`` (what model files call for ``pretrained=True``),
on top of fw.hub's cache. Filled in by fw-hub's download module."""

__all__: list[str] = []
