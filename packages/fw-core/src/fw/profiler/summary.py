"""The summary tables of a recording (`Profiler.summary`), and their sort keys and views.

Tables follow the views of Paddle's profiler summary: an overview by event kind,
the model view (DataLoader / Forward / Backward / Optimization / other per step),
operators (calls, total, avg, max, min, ratio; memory and FLOPs when recorded; per
input shape with `op_detail`), user-defined regions and communication. fw records
host time only, so the GPU columns of Paddle's tables are absent and the kernel
view lists the same CPU op times.
"""

from __future__ import annotations

from collections import defaultdict
from enum import Enum

from fw.profiler.layer_view import LAYER_KIND, layer_table

__all__ = ["SortedKeys", "SummaryView", "summary_text", "aggregate"]


class SortedKeys(Enum):
    """Row order of the summary tables (GPU keys sort by the host times fw records).

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> [m.name for m in profiler.SortedKeys][:4]
        ['CPUTotal', 'CPUAvg', 'CPUMax', 'CPUMin']
    """

    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


class SummaryView(Enum):
    """The tables `Profiler.summary` can print.

    Examples:
        >>> import fw
        >>> import fw.profiler as profiler
        >>> [m.name for m in profiler.SummaryView][:4]
        ['DeviceView', 'OverView', 'ModelView', 'DistributedView']
    """

    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}


class _Stat:
    __slots__ = ("calls", "total", "max", "min", "bytes", "flops")

    def __init__(self):
        self.calls, self.total, self.max, self.min = 0, 0, 0, None
        self.bytes = self.flops = 0

    def add(self, e):
        d = e.duration
        self.calls += 1
        self.total += d
        self.max = max(self.max, d)
        self.min = d if self.min is None else min(self.min, d)
        self.bytes += int(e.args.get("bytes", 0) or 0)
        self.flops += int(e.args.get("flops", 0) or 0)

    @property
    def avg(self):
        return self.total / self.calls if self.calls else 0.0


def _exclusive(events):
    """Self time of Operator events (time not spent in nested ops: a cast inside an
    add counts once), keyed by id(event)."""
    out = {}
    by_tid = defaultdict(list)
    for e in events:
        if e.kind == "Operator":
            by_tid[e.tid].append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e.start, -e.end))
        stack = []
        for e in evs:
            while stack and stack[-1].end <= e.start:
                stack.pop()
            out[id(e)] = e.duration
            if stack:
                out[id(stack[-1])] -= e.duration
            stack.append(e)
    return out


def aggregate(events, kind=None, key=None):
    """{name: _Stat} over `events` of `kind` (all kinds when None); `key(e)` groups."""
    stats = defaultdict(_Stat)
    for e in events:
        if kind is None or e.kind == kind:
            stats[key(e) if key else e.name].add(e)
    return dict(stats)


def _order(stats, sorted_by):
    k = {SortedKeys.CPUTotal: "total", SortedKeys.GPUTotal: "total", SortedKeys.CPUAvg: "avg",
         SortedKeys.GPUAvg: "avg", SortedKeys.CPUMax: "max", SortedKeys.GPUMax: "max",
         SortedKeys.CPUMin: "min", SortedKeys.GPUMin: "min"}[sorted_by]
    return sorted(stats.items(), key=lambda kv: -(getattr(kv[1], k) or 0))


_HEAD = ["Name", "Calls", "Total({u})", "Avg({u})", "Max({u})", "Min({u})", "Ratio(%)"]
_SORT_KEY = {SortedKeys.CPUTotal: "total", SortedKeys.GPUTotal: "total",
             SortedKeys.CPUAvg: "avg", SortedKeys.GPUAvg: "avg", SortedKeys.CPUMax: "max",
             SortedKeys.GPUMax: "max", SortedKeys.CPUMin: "min", SortedKeys.GPUMin: "min"}


def _table(title, stats, sorted_by, unit, extra=()):
    scale = _UNITS[unit]
    whole = sum(s.total for s in stats.values()) or 1
    head = _HEAD + [h for h, _ in extra]
    rows = []
    for name, s in _order(stats, sorted_by):
        rows.append([str(name), str(s.calls), f"{s.total / scale:.3f}", f"{s.avg / scale:.3f}",
                     f"{s.max / scale:.3f}", f"{(s.min or 0) / scale:.3f}",
                     f"{100.0 * s.total / whole:.2f}"] + [f(s) for _, f in extra])
    return _render(title, head, rows, unit)


def _render(title, head, rows, unit):
    head = [h.format(u=unit) for h in head]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    line = "-" * (sum(widths) + 2 * len(widths))
    out = [line, title.center(len(line)), line,
           "  ".join(h.ljust(w) for h, w in zip(head, widths)), line]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    if not rows:
        out.append("(no events)")
    out.append(line)
    return "\n".join(out)


def summary_text(events, sorted_by=None, op_detail: bool = True, thread_sep: bool = False,
                 time_unit: str = "ms", views=None) -> str:
    """The summary tables of `events` as text (arguments as `Profiler.summary`)."""
    if time_unit not in _UNITS:
        raise ValueError(f"summary: time_unit must be one of {list(_UNITS)}, got {time_unit!r}")
    sorted_by = SortedKeys.CPUTotal if sorted_by is None else sorted_by
    if not isinstance(sorted_by, SortedKeys):
        raise TypeError(f"summary: sorted_by must be a SortedKeys, got {sorted_by!r}")
    if views is None:
        views = list(SummaryView)
    elif isinstance(views, SummaryView):
        views = [views]
    for v in views:
        if not isinstance(v, SummaryView):
            raise TypeError(f"summary: views must hold SummaryView values, got {v!r}")
    if thread_sep:
        tids = sorted({e.tid for e in events})
        return "\n\n".join(f"Thread {t}\n" + summary_text(
            [e for e in events if e.tid == t], sorted_by, op_detail, False, time_unit, views)
            for t in tids)
    parts = []
    excl = _exclusive(events)
    ops = [e for e in events if e.kind == "Operator"]
    if SummaryView.OverView in views:
        parts.append(_table("Overview Summary (time per event kind)",
                            aggregate(events, key=lambda e: e.kind), sorted_by, time_unit))
    if SummaryView.ModelView in views:
        groups = ("Dataloader", "Forward", "Backward", "Optimization", "ProfileStep")
        parts.append(_table("Model Summary", aggregate(
            [e for e in events if e.kind in groups], key=lambda e: e.kind), sorted_by, time_unit))
        if any(e.kind == LAYER_KIND for e in events):
            parts.append(_render("Layer Summary (forward time per Layer, by module path)",
                                 _HEAD, layer_table(
                                     events, _SORT_KEY[sorted_by], _UNITS[time_unit],
                                     time_unit), time_unit))
    if SummaryView.DistributedView in views:
        parts.append(_table("Distribution Summary (communication)",
                            aggregate(events, "Communication"), sorted_by, time_unit))
    if SummaryView.OperatorView in views or SummaryView.KernelView in views:
        extra = []
        if any("bytes" in e.args for e in ops):
            extra.append(("Memory(MB)", lambda s: f"{s.bytes / 2**20:.3f}"))
        if any("flops" in e.args for e in ops):
            extra.append(("FLOPs", lambda s: str(s.flops)))

        class _Self:  # self time: nested ops (casts) are not counted twice
            def __init__(self, e):
                self.name, self.kind, self.args = e.name, e.kind, e.args
                self.duration = excl[id(e)]
        selfs = [_Self(e) for e in ops]
        if SummaryView.OperatorView in views:
            parts.append(_table("Operator Summary (self time)", aggregate(selfs), sorted_by,
                                time_unit, extra))
            if op_detail and any("input_shapes" in e.args for e in ops):
                parts.append(_table("Operator Summary by input shapes", aggregate(
                    selfs, key=lambda e: f"{e.name} {e.args.get('input_shapes')}"),
                    sorted_by, time_unit))
        if SummaryView.KernelView in views:
            parts.append(_table("Kernel Summary (CPU kernels: the op times)", aggregate(selfs),
                                sorted_by, time_unit))
    if SummaryView.MemoryView in views and any("bytes" in e.args for e in ops):
        parts.append(_table("Memory Summary (bytes allocated by op outputs)", aggregate(ops),
                            sorted_by, time_unit,
                            [("Allocated(MB)", lambda s: f"{s.bytes / 2**20:.3f}")]))
    if SummaryView.UDFView in views:
        parts.append(_table("UserDefined Summary", aggregate(
            [e for e in events if e.kind in ("PythonUserDefined", "UserDefined", "PythonOp")]),
            sorted_by, time_unit))
    return "\n\n".join(parts)
