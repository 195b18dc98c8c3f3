"""fw.vision.transforms (see packages/fw-vision/README.md)."""

__all__: list[str] = []
