"""fw.vision.ops: detection ops (see packages/fw-vision/README.md)."""

__all__: list[str] = []
