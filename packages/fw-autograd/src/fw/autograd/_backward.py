"""`backward` and `grad`: the two ways to run a backward pass.

Both dispatch on what they are given: Tensors run the eager engine
(`fw.autograd._engine`); IR Values (inside a program being built) emit the
backward into the program (`fw.autograd.static`).
"""

from __future__ import annotations

from fw.autograd._engine import run_backward
from fw.autograd.errors import GradientError
from fw.autograd.static import gradients
from fw.core.ir.core import Value
from fw.core.tensor import Tensor
from fw.profiler import RecordEvent, TracerEventType

__all__ = ["backward", "grad"]


def _as_list(x, what):
    if x is None:
        return None
    if isinstance(x, (Tensor, Value)):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise GradientError(f"{what} must be a Tensor or a list of Tensors, got {type(x).__name__}")


def _is_symbolic(*groups) -> bool:
    return any(type(x) is Value for g in groups if g for x in g)


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Accumulate the gradients of `tensors` into the ``.grad`` of the leaves
    (tensors with ``stop_gradient=False`` that were not computed by ops).

    Args:
        tensors: a Tensor or a list of Tensors (no repeats).
        grad_tensors: their initial gradients, a list aligned with `tensors`;
            None (or a None entry) means ones — also for a non-scalar tensor,
            as in Paddle (PyTorch would raise).
        retain_graph: keep the graph's saved tensors so it can be
            differentiated again.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        >>> fw.autograd.backward([(x * x).sum()])
        >>> x.grad.numpy().tolist()
        [2.0, 4.0]
    """
    ts = _as_list(tensors, "tensors")
    gs = _as_list(grad_tensors, "grad_tensors")
    if gs is None:
        gs = [None] * len(ts)
    if len(gs) != len(ts):
        raise GradientError(f"grad_tensors has {len(gs)} entries for {len(ts)} tensors")
    if len({id(t) for t in ts}) != len(ts):
        raise GradientError("backward: tensors must not contain the same tensor twice")
    with RecordEvent("backward", TracerEventType.Backward):  # fw.profiler's timeline
        run_backward(ts, gs, retain_graph=bool(retain_graph))


def _tensor_backward(tensors, grad_tensors, retain_graph):
    """The ``Tensor.backward`` hook of fw-core."""
    with RecordEvent("backward", TracerEventType.Backward):
        run_backward(tensors, grad_tensors, retain_graph=bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, no_grad_vars=None):
    """Gradients of `outputs` with respect to `inputs` (Paddle's ``paddle.grad``).

    Unlike ``backward`` nothing is accumulated into ``.grad``; the gradients are
    returned as a list aligned with `inputs`.

    Args:
        outputs: a Tensor or a list of Tensors to differentiate.
        inputs: a Tensor or a list of Tensors (leaves or computed tensors).
        grad_outputs: initial gradients of `outputs` (None or None entries: ones).
        retain_graph: keep the graph for another backward; defaults to `create_graph`.
        create_graph: record the backward pass itself, so the returned gradients
            can be differentiated again (higher-order derivatives).
        only_inputs: accepted for compatibility (Paddle ignores it too).
        allow_unused: return None for an input the outputs do not depend on
            (otherwise that raises).
        no_grad_vars: tensors whose gradients are not propagated (treated as
            constants).

    Returns:
        A list with one gradient (or None) per input.

    Inside a program being built (IR Values), the backward is emitted as ops.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor(2.0, stop_gradient=False)
        >>> (dy,) = fw.grad(x * x * x, x, create_graph=True)
        >>> (d2y,) = fw.grad(dy, x)
        >>> float(dy), float(d2y)
        (12.0, 12.0)
    """
    outs = _as_list(outputs, "outputs")
    ins = _as_list(inputs, "inputs")
    gos = _as_list(grad_outputs, "grad_outputs")
    if gos is None:
        gos = [None] * len(outs)
    if len(gos) != len(outs):
        raise GradientError(f"grad_outputs has {len(gos)} entries for {len(outs)} outputs")
    ngv = _as_list(no_grad_vars, "no_grad_vars") if no_grad_vars is not None else None
    if _is_symbolic(outs, ins, gos, ngv):
        return gradients(outs, ins, gos, no_grad_set=ngv, allow_unused=allow_unused,
                         create_graph=bool(create_graph))
    if retain_graph is None:
        retain_graph = create_graph
    return run_backward(outs, gos, retain_graph=bool(retain_graph),
                        create_graph=bool(create_graph), inputs=ins,
                        allow_unused=bool(allow_unused), no_grad_vars=ngv)
