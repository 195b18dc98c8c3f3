"""fw.amp — automatic mixed precision (Paddle's ``paddle.amp``): `auto_cast`,
`decorate` and `GradScaler`."""

from fw.amp import lists  # noqa: F401
from fw.amp.auto_cast import (
                              amp_decorate,
                              amp_guard,
                              auto_cast,
                              decorate,
                              is_bfloat16_supported,
                              is_float16_supported,
)
from fw.amp.autocast_state import (
    autocast,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_enabled,
)
from fw.amp.grad_scaler import AmpScaler, GradScaler

__all__ = ["auto_cast", "amp_guard", "decorate", "amp_decorate", "GradScaler", "AmpScaler",
           "is_bfloat16_supported", "is_float16_supported", "is_autocast_enabled",
           "get_autocast_dtype", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "autocast"]
