"""The per-Layer view of a recording: which Layer's forward took how long, nested by
module path (``Net``, ``Net.encoder``, ``Net.encoder.0.fc``).

fw-core knows nothing of ``fw.nn.Layer`` (fw-nn sits above it), so the timing is
done by a hook that fw-nn registers here with `on_recording` when it is imported: the
profiler calls it with True when a recording starts (fw-nn then times every
``Layer.__call__`` through forward pre/post bookkeeping) and with False when the
recording ends (``Layer.__call__`` is the plain one again). Nothing is installed
while no profiler records, so a model pays nothing then.

Each timed forward is a ``"Layer"`` event (`layer_event`): its name is the module
path, its args the Layer's class and nesting depth. `layer_table` turns them into the
"Layer Summary" of ``SummaryView.ModelView``: calls, total, average, max and min time
per path, children listed under their parent (indented), siblings by total time.
"""

from __future__ import annotations

from collections import defaultdict

from fw.core import _observe

__all__ = ["on_recording", "remove_hook", "layer_event", "recording", "layer_table",
           "LAYER_KIND"]

LAYER_KIND = "Layer"

_hooks: list = []
_state = {"on": False}


def on_recording(fn):
    """Register ``fn(on: bool)``, called with True when a profiler starts recording and
    with False when the recording ends (called at once with True if one records now).
    fw-nn registers the Layer timing this way. Returns `fn`.

    Args:
        fn (Callable[[bool], None]): the switch.

    Returns:
        Callable[[bool], None]: `fn`.

    Examples:
        >>> import fw, fw.profiler as profiler
        >>> from fw.profiler import layer_view
        >>> seen = []
        >>> _ = layer_view.on_recording(seen.append)
        >>> with profiler.Profiler(on_trace_ready=lambda p: None):
        ...     pass
        >>> seen
        [True, False]
        >>> layer_view.remove_hook(seen.append)
    """
    if not callable(fn):
        raise TypeError(f"on_recording: fn must be callable, got {type(fn).__name__}")
    _hooks.append(fn)
    if _state["on"]:
        fn(True)
    return fn


def remove_hook(fn) -> None:
    """Unregister a switch given to `on_recording` (no error if it is not there)."""
    for i, h in enumerate(_hooks):
        if h == fn:
            del _hooks[i]
            return


def recording() -> bool:
    """True while a profiler records (the Layer hooks are installed)."""
    return _state["on"]


def set_recording(on: bool) -> None:
    """Switch every registered hook (fw.profiler.Profiler calls this)."""
    on = bool(on)
    if on == _state["on"]:
        return
    _state["on"] = on
    for fn in list(_hooks):
        fn(on)


def layer_event(path: str, cls: str, depth: int, t0: int, t1: int) -> None:
    """Report one Layer forward (`path`, its class name, nesting depth, start and end
    in ``perf_counter_ns`` time) to the active recorder, if any."""
    rec = _observe.recorder()
    if rec is not None:
        rec.event(path, LAYER_KIND, t0, t1, {"layer": cls, "depth": depth})


def layer_table(events, sorted_by_key: str, unit_scale: float, unit: str) -> list:
    """Rows ``[name, calls, total, avg, max, min, ratio%]`` of the Layer events, as text,
    each child right under its parent and indented two spaces per level; siblings in
    the order of `sorted_by_key` (``total``/``avg``/``max``/``min``, descending). The
    ratio is a path's share of the time of all top-level Layers."""
    stats: dict = {}
    for e in events:
        if e.kind != LAYER_KIND:
            continue
        s = stats.get(e.name)
        if s is None:
            s = stats[e.name] = {"calls": 0, "total": 0, "max": 0, "min": None}
        d = e.duration
        s["calls"] += 1
        s["total"] += d
        s["max"] = max(s["max"], d)
        s["min"] = d if s["min"] is None else min(s["min"], d)
    for s in stats.values():
        s["avg"] = s["total"] / s["calls"]
    children = defaultdict(list)
    roots = []
    for path in stats:
        parent = path.rpartition(".")[0]
        while parent and parent not in stats:  # a parent never timed: attach higher up
            parent = parent.rpartition(".")[0]
        (children[parent] if parent else roots).append(path)
    whole = sum(stats[p]["total"] for p in roots) or 1
    rows = []

    def walk(paths, depth, parent=""):
        for p in sorted(paths, key=lambda q: -(stats[q][sorted_by_key] or 0)):
            s = stats[p]
            name = ("  " * depth) + (p[len(parent) + 1:] if parent else p)
            rows.append([name, str(s["calls"]), f"{s['total'] / unit_scale:.3f}",
                         f"{s['avg'] / unit_scale:.3f}", f"{s['max'] / unit_scale:.3f}",
                         f"{(s['min'] or 0) / unit_scale:.3f}",
                         f"{100.0 * s['total'] / whole:.2f}"])
            walk(children.get(p, ()), depth + 1, p)

    walk(roots, 0)
    return rows
