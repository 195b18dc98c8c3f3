"""``fw.utils.LogWriter``: VisualDL's ``LogWriter`` API writing TensorBoard event files.

The files are written by the `tensorboardX` library (fw-nn's dependency): its
``SummaryWriter`` owns the record framing, CRC32C, the Summary protobufs and a
background thread that flushes every `flush_secs`. TensorBoard, VisualDL (which
reads TensorBoard logs) and `tbparse` read them. The method names and argument
names follow VisualDL 2.x (``add_scalar(tag, value, step)``, ``add_histogram(...,
buckets=10)``, ``add_hparams(hparams_dict, metrics_list)``); `add_graph` takes an
fw Program (``fw.core.ir.Program``, what ``fw.jit.to_static`` and ``fw.static``
build) and writes it as a TensorBoard GraphDef.
"""

from __future__ import annotations

import numbers
import os
import time

import numpy as np

__all__ = ["LogWriter"]


def _tbx():
    try:
        import tensorboardX
    except ImportError as e:  # a declared dependency of fw-nn: a broken install
        raise ImportError("fw.utils.LogWriter needs the tensorboardX package "
                          "(pip install tensorboardX)") from e
    return tensorboardX


def _np(x, what):
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    try:
        return np.asarray(x)
    except Exception as e:  # noqa: BLE001 - name the argument
        raise TypeError(f"LogWriter.{what}: cannot convert {type(x).__name__} to an array") \
            from e


def _check_tag(tag, what):
    if not isinstance(tag, str) or not tag:
        raise TypeError(f"LogWriter.{what}: tag must be a non-empty str, got {tag!r}")
    if "%" in tag:  # VisualDL forbids it (its tags become URL path parts)
        raise ValueError(f"LogWriter.{what}: tag must not contain '%', got {tag!r}")


def _check_step(step, what):
    if step is None:
        return None
    if isinstance(step, bool) or not isinstance(step, numbers.Integral):
        raise TypeError(f"LogWriter.{what}: step must be an int, got {step!r}")
    return int(step)


class LogWriter:
    """Write training logs (scalars, histograms, images, text, hyper-parameters, PR
    curves, program graphs) as TensorBoard event files in `logdir`.

    Args:
        logdir (str, optional): the directory; default ``runs/<time>_<host><comment>``.
        comment (str, optional): suffix of the default directory name.
        max_queue (int, optional): events buffered before a write. Default 10.
        flush_secs (int, optional): seconds between background flushes. Default 120.
        filename_suffix (str, optional): suffix of the event file's name.
        display_name (str, optional): accepted for VisualDL compatibility.
        file_name (str, optional): accepted for VisualDL compatibility (tensorboardX
            names its files ``events.out.tfevents.<time>.<host>``).

    Examples:
        >>> import fw
        >>> import os
        >>> from fw.utils import LogWriter
        >>> with LogWriter(logdir="logs") as writer:
        ...     for step in range(3):
        ...         writer.add_scalar(tag="train/loss", value=1.0 / (step + 1), step=step)
        >>> from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        >>> acc = EventAccumulator("logs")
        >>> _ = acc.Reload()
        >>> [round(s.value, 4) for s in acc.Scalars("train/loss")]
        [1.0, 0.5, 0.3333]
    """

    def __init__(self, logdir=None, comment="", max_queue=10, flush_secs=120,
                 filename_suffix="", display_name="", file_name="", **kwargs):
        if logdir is None:
            import socket

            logdir = os.path.join("runs", time.strftime("%b%d_%H-%M-%S") + "_"
                                  + socket.gethostname() + comment)
        if not isinstance(logdir, (str, os.PathLike)):
            raise TypeError(f"LogWriter: logdir must be a path, got {type(logdir).__name__}")
        if not isinstance(flush_secs, (int, float)) or flush_secs <= 0:
            raise ValueError(f"LogWriter: flush_secs must be a positive number, got "
                             f"{flush_secs!r}")
        self._logdir = os.fspath(logdir)
        self._writer = _tbx().SummaryWriter(logdir=self._logdir, max_queue=int(max_queue),
                                            flush_secs=flush_secs,
                                            filename_suffix=filename_suffix)
        self.display_name = display_name
        self.file_name = file_name
        self._count_writes()

    def _count_writes(self):
        # tensorboardX queues events for a background thread and its flush() does not
        # wait for that queue (it flushes what the thread has written so far). Counting
        # events queued and written lets `flush` wait until every queued event is in
        # the file; without the attributes (another tensorboardX) flush is tbX's own.
        self._queued = self._written = 0
        efw = getattr(self._writer._get_file_writer(), "event_writer", None)
        rec = getattr(efw, "_ev_writer", None)
        if efw is None or rec is None or not hasattr(rec, "write_event"):
            self._queued = None
            return
        add, write = efw.add_event, rec.write_event

        def counted_add(event):
            self._queued += 1
            return add(event)

        def counted_write(event):
            r = write(event)
            self._written += 1
            return r

        efw.add_event, rec.write_event = counted_add, counted_write

    @property
    def logdir(self) -> str:
        """The directory the event files are written to.

        Returns:
            str.

        Examples:
            >>> import fw
            >>> from fw.utils import LogWriter
            >>> with LogWriter(logdir="logs/run1") as writer:
            ...     print(writer.logdir)
            logs/run1
        """
        return self._logdir

    def add_scalar(self, tag, value, step, walltime=None):
        """Record a scalar.

        Args:
            tag (str): its name, e.g. ``train/loss``.
            value (float | Tensor | numpy.ndarray): the value (a one-element array).
            step (int): the step.
            walltime (float, optional): seconds since the epoch; default now.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_scalar("train/loss", 0.25, step=1)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        _check_tag(tag, "add_scalar")
        v = _np(value, "add_scalar")
        if v.size != 1 or v.dtype.kind not in "biuf":
            raise ValueError(f"LogWriter.add_scalar: value must be one real number, got "
                             f"shape {list(v.shape)} dtype {v.dtype}")
        self._writer.add_scalar(tag, float(v.reshape(())), _check_step(step, "add_scalar"),
                                walltime=walltime)

    def add_histogram(self, tag, values, step, walltime=None, buckets=10):
        """Record the distribution of `values` as a histogram of `buckets` bins.

        Args:
            tag (str): its name.
            values (Tensor | numpy.ndarray): the data (flattened).
            step (int): the step.
            walltime (float, optional): seconds since the epoch.
            buckets (int, optional): number of bins. Default 10.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_histogram("w", np.random.default_rng(0).normal(size=100), step=0)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        _check_tag(tag, "add_histogram")
        v = _np(values, "add_histogram").astype(np.float64).reshape(-1)
        if v.size == 0:
            raise ValueError("LogWriter.add_histogram: values is empty")
        if not isinstance(buckets, int) or buckets < 1:
            raise ValueError(f"LogWriter.add_histogram: buckets must be a positive int, got "
                             f"{buckets!r}")
        self._writer.add_histogram(tag, v, _check_step(step, "add_histogram"), bins=buckets,
                                   walltime=walltime)

    def add_image(self, tag, img, step, walltime=None, dataformats="HWC"):
        """Record an image: uint8 in [0, 255] or float in [0, 1].

        Args:
            tag (str): its name.
            img (Tensor | numpy.ndarray): the image, laid out as `dataformats`.
            step (int): the step.
            walltime (float, optional): seconds since the epoch.
            dataformats (str, optional): 'HWC', 'CHW', 'HW' or 'NCHW'/'NHWC'. Default 'HWC'.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_image("sample", np.zeros((8, 8, 3), dtype=np.uint8), step=0)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        _check_tag(tag, "add_image")
        a = _np(img, "add_image")
        if a.ndim != len(dataformats):
            raise ValueError(f"LogWriter.add_image: img has shape {list(a.shape)} but "
                             f"dataformats={dataformats!r} needs {len(dataformats)} dims")
        if dataformats.startswith("N"):
            self._writer.add_images(tag, a, _check_step(step, "add_image"), walltime=walltime,
                                    dataformats=dataformats)
        else:
            self._writer.add_image(tag, a, _check_step(step, "add_image"), walltime=walltime,
                                   dataformats=dataformats)

    def add_text(self, tag, text_string, step=None, walltime=None):
        """Record a text (Markdown, shown in TensorBoard's Text tab).

        Args:
            tag (str): its name.
            text_string (str): the text.
            step (int, optional): the step.
            walltime (float, optional): seconds since the epoch.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_text("notes", "first run", step=0)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        _check_tag(tag, "add_text")
        if not isinstance(text_string, str):
            raise TypeError(f"LogWriter.add_text: text_string must be a str, got "
                            f"{type(text_string).__name__}")
        self._writer.add_text(tag, text_string, _check_step(step, "add_text"), walltime=walltime)

    def add_hparams(self, hparams_dict, metrics_list, walltime=None):
        """Record the hyper-parameters of this run and the scalar tags that measure it
        (TensorBoard's HParams tab joins them with those scalars).

        Args:
            hparams_dict (dict): name -> int, float, str or bool.
            metrics_list (list[str]): tags of scalars logged with `add_scalar`.
            walltime (float, optional): seconds since the epoch.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_hparams({"lr": 0.01, "batch_size": 32}, ["train/loss"])
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        if not isinstance(hparams_dict, dict) or not hparams_dict:
            raise TypeError("LogWriter.add_hparams: hparams_dict must be a non-empty dict")
        for k, v in hparams_dict.items():
            if not isinstance(k, str) or not isinstance(v, (bool, int, float, str)):
                raise TypeError(f"LogWriter.add_hparams: hparams_dict[{k!r}] must be a "
                                f"bool, int, float or str, got {type(v).__name__}")
        if isinstance(metrics_list, str) or not all(isinstance(m, str) for m in metrics_list):
            raise TypeError("LogWriter.add_hparams: metrics_list must be a list of tags (str)")
        from tensorboardX.summary import hparams

        # the metric values come from the scalars under these tags, not from here
        exp, ssi, sei = hparams(dict(hparams_dict), {m: 0.0 for m in metrics_list})
        fw_ = self._writer._get_file_writer()
        for s in (exp, ssi, sei):
            fw_.add_summary(s, None, walltime)

    def add_pr_curve(self, tag, labels, predictions, step=None, num_thresholds=10,
                     weights=None, walltime=None):
        """Record a precision-recall curve of binary `labels` against `predictions`
        (probabilities in [0, 1]).

        Args:
            tag (str): its name.
            labels (Tensor | numpy.ndarray): 0/1 (or bool) ground truth.
            predictions (Tensor | numpy.ndarray): scores in [0, 1], same size.
            step (int, optional): the step.
            num_thresholds (int, optional): thresholds of the curve. Default 10.
            weights (float, optional): accepted for VisualDL compatibility; must be None.
            walltime (float, optional): seconds since the epoch.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> labels, probs = np.array([0, 1, 1, 0]), np.array([0.1, 0.8, 0.6, 0.3])
            >>> writer.add_pr_curve("pr", labels, probs, step=0)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        _check_tag(tag, "add_pr_curve")
        lab = _np(labels, "add_pr_curve").reshape(-1)
        pred = _np(predictions, "add_pr_curve").astype(np.float64).reshape(-1)
        if lab.shape != pred.shape:
            raise ValueError(f"LogWriter.add_pr_curve: labels has {lab.size} values but "
                             f"predictions has {pred.size}")
        if pred.size and (pred.min() < 0 or pred.max() > 1):
            raise ValueError("LogWriter.add_pr_curve: predictions must lie in [0, 1]")
        if weights is not None:
            raise ValueError("LogWriter.add_pr_curve: weights are not supported (pass None)")
        if not isinstance(num_thresholds, int) or not 2 <= num_thresholds <= 127:
            raise ValueError(f"LogWriter.add_pr_curve: num_thresholds must be an int in "
                             f"[2, 127], got {num_thresholds!r}")
        self._writer.add_pr_curve(tag, lab.astype(bool), pred,
                                  _check_step(step, "add_pr_curve"),
                                  num_thresholds=num_thresholds, walltime=walltime)

    def add_graph(self, program, input_spec=None, verbose=False):
        """Record an fw Program as a TensorBoard graph (one node per op, edges from
        the values it reads; node attributes carry the result types).

        Args:
            program (fw.core.ir.Program): the program (``fw.static`` or
                ``fw.jit.to_static(...).concrete_program``-style programs).
            input_spec: accepted for VisualDL compatibility; unused.
            verbose (bool, optional): print the node count.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> from fw.utils import LogWriter
            >>> net = fw.jit.to_static(fw.nn.Linear(4, 2),
            ...                        input_spec=[fw.static.InputSpec([None, 4], "float32")])
            >>> program = net.forward.concrete_program.main_program
            >>> with LogWriter(logdir="logs") as writer:
            ...     writer.add_graph(program)
            >>> len(os.listdir("logs")) > 0
            True
        """
        from tensorboardX.proto import event_pb2

        g = _graph_def(program)
        ev = event_pb2.Event(graph_def=g.SerializeToString(), wall_time=time.time())
        self._writer._get_file_writer().add_event(ev)
        if verbose:
            print(f"LogWriter.add_graph: {len(g.node)} nodes")

    def flush(self, timeout=10.0):
        """Write buffered events to disk now (waits at most `timeout` seconds for the
        background writer thread to take the queued events).

        Args:
            timeout (float, optional): the longest wait, in seconds. Default: 10.0.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_scalar("a", 1.0, step=0)
            >>> writer.flush()
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        if self._queued is not None:
            deadline = time.monotonic() + timeout
            while self._written < self._queued and time.monotonic() < deadline:
                time.sleep(0.002)
        self._writer.flush()

    def close(self):
        """Flush and close the event file.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import os
            >>> import numpy as np
            >>> from fw.utils import LogWriter
            >>> writer = LogWriter(logdir="logs")
            >>> writer.add_scalar("a", 1.0, step=0)
            >>> writer.close()
            >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
            True
        """
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _graph_def(program):
    """A TensorBoard GraphDef of `program`: inputs as Placeholder nodes, ops as nodes
    named ``<op>_<i>`` whose inputs are the nodes producing their operands."""
    from tensorboardX.proto import attr_value_pb2, graph_pb2, node_def_pb2

    block = getattr(program, "global_block", None)
    if block is None or not hasattr(block, "ops"):
        raise TypeError(f"LogWriter.add_graph: expected an fw Program "
                        f"(fw.core.ir.Program), got {type(program).__name__}")
    ops = list(block.ops)
    g = graph_pb2.GraphDef()
    producer = {}
    for i, v in enumerate(block.args):  # inputs, parameters and constants
        label = getattr(v, "label", None) or f"arg_{i}"
        kind = "Placeholder" if getattr(v, "role", "input") == "input" else "Parameter"
        n = g.node.add(name=f"{label}", op=kind)
        producer[id(v)] = n.name
        _type_attr(n, v, attr_value_pb2)
    for i, op in enumerate(ops):
        n = node_def_pb2.NodeDef(name=f"{op.name}_{i}", op=op.name)
        for v in getattr(op, "operands", []) or []:
            src = producer.get(id(v))
            if src is not None:
                n.input.append(src)
        for r in getattr(op, "results", []) or []:
            producer[id(r)] = n.name
        if getattr(op, "results", None):
            _type_attr(n, op.results[0], attr_value_pb2)
        g.node.append(n)
    return g


def _type_attr(node, value, attr_value_pb2):
    t = getattr(value, "type", None)
    if t is not None:
        node.attr["type"].CopyFrom(attr_value_pb2.AttrValue(s=str(t).encode()))
