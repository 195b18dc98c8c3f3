"""Layer timing for fw.profiler's per-Layer view (``SummaryView.ModelView``).

While a profiler records, ``Layer.__call__`` is replaced by `_timed_call`, which
runs the layer's forward pre/post bookkeeping around the plain call: it pushes the
layer on a per-thread stack (to know its module path: the parent's path plus the
name the parent registered it under, ``Net.encoder.0.fc``), times the call and
reports it with `fw.profiler.layer_view.layer_event`. When the recording ends the
plain ``__call__`` is put back, so a model pays nothing while no profiler records
(``fw.profiler.layer_view`` says why the switch lives in fw-core).
"""

from __future__ import annotations

import threading
from time import perf_counter_ns

from fw.profiler import layer_view

_tls = threading.local()


_names: dict = {}  # id(parent) -> {id(descendant): dotted name}, for one recording


def _child_name(parent, layer) -> str | None:
    for name, sub in parent._sub_layers.items():
        if sub is layer:
            return name
    # held by a container the parent never calls (LayerList, LayerDict): its dotted name
    table = _names.get(id(parent))
    if table is None:
        table = _names[id(parent)] = {id(sub): name for name, sub in parent.named_sublayers()}
    return table.get(id(layer))


def _path(layer, stack) -> str:
    if not stack:
        return type(layer).__name__
    parent, ppath = stack[-1]
    name = _child_name(parent, layer)
    # a layer the parent calls without owning it (shared, or held in a plain list)
    return f"{ppath}.{name if name is not None else type(layer).__name__}"


def install(layer_cls) -> None:
    """Register the switch of ``layer_cls.__call__`` with fw.profiler (fw.nn does this
    once, for `fw.nn.Layer`)."""
    plain = layer_cls.__call__

    def _timed_call(self, *inputs, **kwargs):
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        path = _path(self, stack)
        depth = len(stack)
        stack.append((self, path))
        t0 = perf_counter_ns()
        try:
            return plain(self, *inputs, **kwargs)
        finally:
            t1 = perf_counter_ns()
            stack.pop()
            layer_view.layer_event(path, type(self).__name__, depth, t0, t1)

    _timed_call.__wrapped__ = plain

    def switch(on: bool) -> None:
        _names.clear()  # the layer tree may change between recordings
        layer_cls.__call__ = _timed_call if on else plain

    layer_view.on_recording(switch)
