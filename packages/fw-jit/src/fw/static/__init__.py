"""fw.static — Paddle-style static programs on fw's IR.

``fw.enable_static()``, then `data` variables and the ops on them build the
default main program (`program_guard` switches programs); `Executor.run` feeds
and fetches; `append_backward`/`gradients` and ``optimizer.minimize(loss)`` add
training; `save_inference_model`/`load_inference_model` write and read fw's model
file. `nn.cond`/`nn.while_loop` build control flow, `nn.fc` a dense layer.
Parameters are created and initialised eagerly (the startup program is empty).
"""

from fw.core.ir.core import Value as Variable
from fw.core.place import CPUPlace, CUDAPlace
from fw.jit.input_spec import InputSpec
from fw.static import nn
from fw.static._backward import append_backward, gradients
from fw.static._backward import install as _install
from fw.static._executor import Executor
from fw.static._extras import (
    BuildStrategy,
    CompiledProgram,
    ExponentialMovingAverage,
    IpuCompiledProgram,
    IpuStrategy,
    Print,
    WeightNormParamAttr,
    accuracy,
    auc,
    create_global_var,
    create_parameter,
    ctr_metric_bundle,
    device_guard,
    ipu_shard_guard,
    name_scope,
    set_ipu_shard,
    xpu_places,
)
from fw.static._mode import disable_static, enable_static, in_dynamic_mode, in_static_mode
from fw.static._program import (
    Program,
    Scope,
    data,
    default_main_program,
    default_startup_program,
    global_scope,
    program_guard,
    scope_guard,
)
from fw.static._state_io import (
    deserialize_persistables,
    deserialize_program,
    load,
    load_from_file,
    load_program_state,
    save,
    save_to_file,
    serialize_persistables,
    serialize_program,
    set_program_state,
)
from fw.static.io import load_inference_model, normalize_program, save_inference_model
from fw.static.nn import py_func

_install()

__all__ = ["Program", "program_guard", "default_main_program", "default_startup_program",
           "data", "Executor", "append_backward", "gradients", "save_inference_model",
           "load_inference_model", "normalize_program", "cpu_places", "cuda_places",
           "global_scope", "scope_guard", "Scope", "InputSpec", "Variable", "nn",
           "enable_static", "disable_static", "in_dynamic_mode", "in_static_mode",
           "CPUPlace", "CUDAPlace", "accuracy", "auc", "ctr_metric_bundle", "create_global_var",
           "create_parameter", "ExponentialMovingAverage", "Print", "WeightNormParamAttr",
           "BuildStrategy", "CompiledProgram", "IpuStrategy", "IpuCompiledProgram",
           "ipu_shard_guard", "set_ipu_shard", "xpu_places", "device_guard", "name_scope",
           "save", "load",
           "load_program_state", "set_program_state", "serialize_program",
           "deserialize_program", "serialize_persistables", "deserialize_persistables",
           "save_to_file", "load_from_file", "py_func"]


def cpu_places(device_count=None):
    """A list of CPU places (Paddle's ``static.cpu_places``).

    Args:
        device_count (int, optional): how many. Default: None (the ``CPU_NUM``
            environment variable, else 1).

    Returns:
        list[Place]: `device_count` CPU places.

    Examples:
        >>> import fw
        >>> fw.static.cpu_places(2)
        [Place(cpu), Place(cpu)]
    """
    import os

    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", "1"))
    return [CPUPlace() for _ in range(int(device_count))]


def cuda_places(device_ids=None):
    """The CUDA places of `device_ids`.

    Args:
        device_ids (list[int], optional): GPU ids. Default: None (every visible GPU).

    Returns:
        list[Place]: one place per GPU; empty on a machine without one.

    Examples:
        >>> import fw
        >>> isinstance(fw.static.cuda_places(), list)
        True
    """
    from fw.core import place as _pl

    if device_ids is None:
        try:
            n = _pl.get_backend("gpu").device_count()
        except Exception:  # noqa: BLE001 - no GPU backend
            n = 0
        device_ids = range(n)
    return [CUDAPlace(int(i)) for i in device_ids]
