"""``fw.profiler``: Paddle 3.3's ``paddle.profiler`` API on fw.

>>> import fw, fw.profiler as profiler
>>> with profiler.Profiler(scheduler=(1, 3)) as prof:
...     for i in range(4):
...         y = fw.ones([2, 2]) * 2.0
...         prof.step()
>>> prof.step_num
4
"""

from fw.profiler.export import (
    ProfilerResult,
    export_chrome_tracing,
    export_protobuf,
    load_profiler_result,
)
from fw.profiler.profiler import (
    Event,
    Profiler,
    ProfilerState,
    ProfilerTarget,
    RecordEvent,
    TracerEventType,
    make_scheduler,
)
from fw.profiler.summary import SortedKeys, SummaryView

__all__ = ["ProfilerState", "ProfilerTarget", "make_scheduler", "export_chrome_tracing",
           "export_protobuf", "Profiler", "RecordEvent", "load_profiler_result", "SortedKeys",
           "SummaryView", "TracerEventType", "Event", "ProfilerResult"]
