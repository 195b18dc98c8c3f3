"""fw.vision.datasets (see packages/fw-vision/README.md)."""

__all__: list[str] = []
