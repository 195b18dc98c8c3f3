"""``fw.callbacks`` (Paddle's ``paddle.callbacks``): the callbacks of `fw.Model`,
re-exported from `fw.hapi.callbacks`."""

from fw.hapi.callbacks import (  # noqa: F401
    Callback,
    EarlyStopping,
    LRScheduler,
    ModelCheckpoint,
    ProgBarLogger,
    ReduceLROnPlateau,
    TensorBoard,
    VisualDL,
)

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping", "LRScheduler",
           "ReduceLROnPlateau", "VisualDL", "TensorBoard"]
