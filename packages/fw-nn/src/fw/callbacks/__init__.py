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

from fw.hapi.wandb_callback import WandbCallback  # noqa: E402,F401

__all__ += ["WandbCallback"]
