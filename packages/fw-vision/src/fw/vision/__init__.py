"""fw.vision: Paddle's ``paddle.vision`` — models (same architectures and parameter
names, so Paddle's weight files fit), transforms, datasets and detection ops.
See packages/fw-vision/README.md for the design."""

from fw.vision import datasets, models, ops, transforms
from fw.vision.image import get_image_backend, image_load, set_image_backend

__all__ = ["models", "transforms", "datasets", "ops", "get_image_backend", "image_load",
           "set_image_backend"]
