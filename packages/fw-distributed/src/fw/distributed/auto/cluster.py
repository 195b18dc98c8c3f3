"""Cluster descriptions: what the cost model knows about the hardware.

A `Cluster` is `nodes` x `devices_per_node` identical `Device`\\ s joined by two
kinds of `Link` (inside a node, between nodes). Figures are sustained rates
(what a large, well-shaped kernel or collective reaches), not marketing peaks:
the presets derive them from datasheet peaks times a stated efficiency, and
`Cluster.this_machine()` reads them from a calibration profile measured on the
machine by `calibrate()`.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field

__all__ = ["Device", "Link", "Cluster"]

# dtypes a device may list rates for (fw's floating dtypes + int8 for int8 GEMM/conv)
_DTYPES = ("float64", "float32", "float16", "bfloat16", "int8")


def _err(fn, msg):
    return ValueError(f"{fn}: {msg}")


@dataclass
class Device:
    """One compute device (a GPU, or one CPU core running one rank).

    Args:
        name (str): a label.
        matmul_flops (dict): sustained FLOP/s of matmul/linear per dtype name.
        conv_flops (dict, optional): sustained FLOP/s of convolutions per dtype;
            defaults to `matmul_flops`.
        vector_flops (dict, optional): FLOP/s of elementwise arithmetic per dtype
            (transcendental functions count several FLOPs, see `op_cost`); defaults
            to a tenth of `matmul_flops`.
        mem_bandwidth (float): sustained memory bandwidth in bytes/s (memory-bound ops).
        memory (float): usable memory in bytes.
        op_overhead (float): fixed seconds per op (kernel launch, or eager dispatch
            and autograd bookkeeping on a CPU).
        peak_flops (dict, optional): datasheet peak FLOP/s per dtype (reported as
            "% of peak"; not used for timing).
        optimizer_overhead (float): fixed seconds per parameter tensor of an
            optimizer step (fw's optimizers loop over parameters in Python).
        bmm_flops (dict, optional): FLOP/s of batched matmuls (a stack of small
            products, e.g. attention's per-head QK^T); defaults to `matmul_flops`.
        scatter_bandwidth (float, optional): bytes/s of scatter-adds (``index_add``:
            embedding gradients), counted on the added values; 0 means
            `mem_bandwidth`. Default: 0.
        fused_softmax (bool, optional): attention's scale, mask and softmax run as
            one kernel that reads and writes the scores once (Megatron-LM's
            fused scale-mask-softmax, cuDNN); False: one pass per step, as fw's
            eager CPU kernel runs them. Default: False.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Cluster
        >>> device = Cluster.a100_dgx().device
        >>> device.rate("matmul", "bfloat16") > device.rate("matmul", "float32")
        True
    """

    name: str
    matmul_flops: dict
    mem_bandwidth: float
    memory: float
    conv_flops: dict = field(default_factory=dict)
    vector_flops: dict = field(default_factory=dict)
    op_overhead: float = 0.0
    peak_flops: dict = field(default_factory=dict)
    optimizer_overhead: float = 0.0
    bmm_flops: dict = field(default_factory=dict)
    scatter_bandwidth: float = 0.0
    fused_softmax: bool = False

    def __post_init__(self):
        if not self.matmul_flops:
            raise _err("Device", f"matmul_flops must name at least one dtype, got "
                       f"{self.matmul_flops!r}")
        for what in ("matmul_flops", "conv_flops", "vector_flops", "peak_flops", "bmm_flops"):
            d = getattr(self, what)
            if not isinstance(d, dict):
                raise _err("Device", f"{what} must be a dict {{dtype: FLOP/s}}, got "
                           f"{type(d).__name__}")
            for k, v in d.items():
                if k not in _DTYPES:
                    raise _err("Device", f"{what}: unknown dtype {k!r} (one of {_DTYPES})")
                if not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
                    raise _err("Device", f"{what}[{k!r}] must be a positive number, got {v!r}")
        for what in ("mem_bandwidth", "memory"):
            v = getattr(self, what)
            if not (isinstance(v, (int, float)) and v > 0):
                raise _err("Device", f"{what} must be positive, got {v!r}")
        for what in ("op_overhead", "optimizer_overhead", "scatter_bandwidth"):
            v = getattr(self, what)
            if not (isinstance(v, (int, float)) and v >= 0):
                raise _err("Device", f"{what} must be >= 0, got {v!r}")
        if not self.conv_flops:
            self.conv_flops = dict(self.matmul_flops)
        if not self.vector_flops:
            self.vector_flops = {k: v / 10 for k, v in self.matmul_flops.items()}
        if not self.bmm_flops:
            self.bmm_flops = dict(self.matmul_flops)

    def rate(self, kind: str, dtype: str) -> float:
        """FLOP/s of `kind` ("matmul", "bmm", "conv", "vector") ops in `dtype`. A dtype the
        device does not list runs at its float32 rate (or the slowest one listed):
        e.g. a CPU without bf16 matrix units emulates it no faster than float32.

        Args:
            kind (str): "matmul", "bmm" (batched matmul), "conv" or "vector".
            dtype (str): the element type.

        Returns:
            float: FLOP/s.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(2)
            >>> c.device.rate("matmul", "int32") == c.device.rate("matmul", "float32")
            True
        """
        table = {"matmul": self.matmul_flops, "bmm": self.bmm_flops, "conv": self.conv_flops,
                 "vector": self.vector_flops}[kind]
        if dtype in table:
            return table[dtype]
        if dtype in ("int64", "int32", "int16", "uint8", "bool", "complex64"):
            dtype = "float32"
        if dtype == "complex128":
            dtype = "float64"
        return table.get(dtype, table.get("float32", min(table.values())))


@dataclass
class Link:
    """A communication link of the alpha-beta model: a message of n bytes takes
    ``latency + n / bandwidth`` seconds.

    Args:
        bandwidth (float): bytes/s one device can push through it (for the
            inter-node link: a node's total injection bandwidth, see `Cluster`).
        latency (float): seconds per message (alpha).

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Link
        >>> link = Link(bandwidth=1e9, latency=1e-5)
        >>> round(link.latency + 1e6 / link.bandwidth, 6)    # seconds for 1 MB
        0.00101
    """

    bandwidth: float
    latency: float

    def __post_init__(self):
        if not (isinstance(self.bandwidth, (int, float)) and self.bandwidth > 0):
            raise _err("Link", f"bandwidth must be positive bytes/s, got {self.bandwidth!r}")
        if not (isinstance(self.latency, (int, float)) and self.latency >= 0):
            raise _err("Link", f"latency must be >= 0 s, got {self.latency!r}")


def _at(d, world):
    """The value of ``{ranks: value}`` at the nearest count at or below `world`, else
    the smallest count's."""
    pts = sorted((int(k), v) for k, v in d.items())
    below = [v for n, v in pts if n <= world]
    return below[-1] if below else pts[0][1]


def wait_line(c_short, w_short, c_long, w_long):
    """``(w0, w1)`` of the line ``w = w0 + w1 * c`` through two measured (work, wait)
    points, clamped so that both are >= 0 (a negative slope: the wait does not grow
    with the work, w0 = their mean; a negative intercept: proportional, through 0).

    Examples:
        >>> import fw
        >>> from fw.distributed.auto.cluster import wait_line
        >>> wait_line(0.002, 0.003, 0.02, 0.0048)
        (0.0028, 0.1)
    """
    if c_long <= c_short:
        return (w_short + w_long) / 2, 0.0
    w1 = (w_long - w_short) / (c_long - c_short)
    if w1 < 0:
        return (w_short + w_long) / 2, 0.0
    w0 = w_short - w1 * c_short
    if w0 < 0:
        return 0.0, w_long / c_long
    return round(w0, 12), round(w1, 12)


def dp_fit(points):
    """``(fixed, per_byte, per_tensor)`` seconds of the plane ``t = fixed + per_byte *
    bytes + per_tensor * tensors`` through calibrated ``[[bytes, tensors, seconds],
    ...]`` points (least squares), every coefficient >= 0: a negative one is dropped
    (set to 0) and the others refitted. Points of two numbers ``[bytes, seconds]``
    (older profiles) fit ``fixed + per_byte * bytes``.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto.cluster import dp_fit
        >>> [round(v, 9) for v in dp_fit([[1e6, 4, 0.0031], [4e6, 4, 0.0061],
        ...                                [4e5, 24, 0.0045]])]
        [0.0017, 1e-09, 0.0001]
    """
    import numpy as np

    rows = [(float(p[0]), float(p[1]) if len(p) > 2 else 0.0, float(p[-1])) for p in points]
    if not rows:
        return 0.0, 0.0, 0.0
    a = np.array([[1.0, b, n] for b, n, _ in rows])
    t = np.array([s for _, _, s in rows])
    keep = [0, 1, 2] if len(rows) > 2 and len({n for _, n, _ in rows}) > 1 else [0, 1]
    if len(rows) < 2:
        keep = [1]
    while keep:
        coef, *_ = np.linalg.lstsq(a[:, keep], t, rcond=None)
        if (coef >= 0).all():
            out = [0.0, 0.0, 0.0]
            for k, v in zip(keep, coef):
                out[k] = float(v)
            return tuple(out)
        keep = [k for k, v in zip(keep, coef) if v >= 0] or []
    return 0.0, 0.0, 0.0


@dataclass
class Cluster:
    """A cluster of identical devices: ``nodes`` x ``devices_per_node``.

    Args:
        device (Device): the device every rank runs on.
        nodes (int): number of nodes.
        devices_per_node (int): devices in a node.
        intra (Link): the link between devices of a node (NVLink, shared memory).
        inter (Link, optional): the network between nodes; `bandwidth` is what one
            node injects in total (all its NICs). Needed when ``nodes > 1``.
        topology (str): how collectives are run: "ring" (bandwidth-optimal ring for
            all-reduce/all-gather/reduce-scatter), "tree" (latency-optimal tree /
            recursive doubling), or "auto" (the faster of the two per message, as
            NCCL and MPICH choose).
        comm_overlap (float): fraction of a data-parallel gradient all-reduce that
            can run while backward computes (1: a separate engine/stream, as on GPUs;
            0: communication takes the compute cores, as MPI over shared memory on a
            CPU does).
        oversubscribe (bool): whether more ranks than devices may run (processes
            time-sharing CPU cores; each rank's compute is slowed by
            ranks / devices). GPU clusters refuse it.
        contention (dict, optional): ``{ranks: factor}`` measured by `calibrate`: how
            much slower a rank computes when that many ranks run in lockstep on this
            (shared) machine; interpolated between the measured counts. Without it,
            ranks beyond the devices slow down by ranks / devices.
        collectives (dict, optional): measured alpha-beta fits per collective name
            (``{"all_reduce": {"alpha": s, "beta": s_per_byte}, ...}``, from
            `calibrate`), used instead of the link figures for groups inside a node.
        sync_wait (dict, optional): ``{ranks: seconds}`` measured by `calibrate`: the
            mean wait of a rank at a blocking collective after a stretch of training
            work, beyond the collective's own cost (its peers finish equal work at
            different times). Empty: none (dedicated devices in lockstep).
        sync_chunk (dict, optional): ``{ranks: seconds}``: the work each rank did
            before the waits `sync_wait` measured. A step's waits are scaled from it as
            independent delays add up (their spread grows as the square root of the
            work between two synchronisations): ``n`` collectives over compute ``C``
            wait ``sync_wait * sqrt(n * C / sync_chunk)`` in all (``n * sync_wait``
            without a chunk).
        sync_wait_short (dict, optional): ``{ranks: seconds}``: the same wait after a
            short chunk of work, ``sync_chunk_short`` (``{ranks: seconds}``) long,
            measured interleaved with the long one. With both, the wait of one
            collective is the line through the two points, ``w(c) = w0 + w1 * c``
            (``w0, w1 >= 0``) of the work ``c`` before it, and a step's ``n``
            collectives over compute ``C`` wait ``n * w0 + w1 * C`` in all: a fixed
            part per collective (on oversubscribed cores, a descheduled peer's
            timeslice) and a part that grows with the work (jitter).
        sync_chunk_short (dict, optional): see `sync_wait_short`.
        dp_sync (dict, optional): ``{ranks: points}``:
            what fw's ``DataParallel`` adds to an eager training step (bucket copies,
            all-reduces, the used-parameter mask, the progress thread, the waits),
            measured by `calibrate` in lockstep on that many ranks (``[[bytes,
            tensors, seconds], ...]``); `dp_sync_cost` reads it through `dp_fit`.
        name (str): a label.
        source (str): where the figures come from (datasheets, a profile file).

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import Cluster
        >>> c = Cluster.a100_dgx(nodes=2)
        >>> c.nodes, c.devices_per_node, c.num_devices
        (2, 8, 16)
    """

    device: Device
    nodes: int = 1
    devices_per_node: int = 1
    intra: Link = field(default_factory=lambda: Link(1e10, 1e-6))
    inter: Link | None = None
    topology: str = "auto"
    comm_overlap: float = 1.0
    oversubscribe: bool = False
    contention: dict = field(default_factory=dict)
    collectives: dict = field(default_factory=dict)
    sync_wait: dict = field(default_factory=dict)
    sync_chunk: dict = field(default_factory=dict)
    sync_wait_short: dict = field(default_factory=dict)
    sync_chunk_short: dict = field(default_factory=dict)
    dp_sync: dict = field(default_factory=dict)
    name: str = "cluster"
    source: str = ""

    def __post_init__(self):
        if isinstance(self.device, dict):
            self.device = Device(**self.device)
        if isinstance(self.intra, dict):
            self.intra = Link(**self.intra)
        if isinstance(self.inter, dict):
            self.inter = Link(**self.inter)
        for what in ("nodes", "devices_per_node"):
            v = getattr(self, what)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise _err("Cluster", f"{what} must be an int >= 1, got {v!r}")
        if self.nodes > 1 and self.inter is None:
            raise _err("Cluster", f"nodes={self.nodes} needs an inter-node Link (inter=)")
        if self.topology not in ("ring", "tree", "auto"):
            raise _err("Cluster", f"topology must be 'ring', 'tree' or 'auto', got "
                       f"{self.topology!r}")
        if not 0.0 <= float(self.comm_overlap) <= 1.0:
            raise _err("Cluster", f"comm_overlap must be in [0, 1], got {self.comm_overlap!r}")
        for k, fit in self.collectives.items():
            if not (isinstance(fit, dict) and {"alpha", "beta"} <= set(fit)):
                raise _err("Cluster", f"collectives[{k!r}] must be {{'alpha': s, 'beta': "
                           f"s/byte}}, got {fit!r}")

    @property
    def num_devices(self) -> int:
        """Devices in the cluster: nodes x devices per node.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(2)
            >>> c.num_devices
            16
        """
        return self.nodes * self.devices_per_node

    def compute_slowdown(self, world: int) -> float:
        """How much slower each rank computes when `world` ranks run on this cluster
        (1 unless ranks outnumber devices on an oversubscribable machine, or a measured
        ``contention`` curve says otherwise).

        Args:
            world (int): the number of ranks.

        Returns:
            float: the slowdown factor (an error when the ranks do not fit).

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(2)
            >>> c.compute_slowdown(16)
            1.0
        """
        if world > self.num_devices and not self.oversubscribe:
            raise _err("Cluster", f"{world} ranks do not fit on {self.num_devices} devices "
                       f"of {self.name!r} (oversubscribe=False)")
        if self.contention:
            pts = sorted((int(k), float(v)) for k, v in self.contention.items())
            if world <= pts[0][0]:
                f = pts[0][1]
            else:
                f = pts[-1][1] * world / pts[-1][0]
                for (n0, f0), (n1, f1) in zip(pts, pts[1:]):
                    if world <= n1:
                        f = f0 + (f1 - f0) * (world - n0) / (n1 - n0)
                        break
            # never below the time-sharing of the cores (the measured curve may come
            # from fewer ranks than asked for)
            return max(f, self.core_sharing(world))
        if world <= self.num_devices:
            return 1.0
        if not self.oversubscribe:
            raise _err("Cluster", f"{world} ranks do not fit on {self.num_devices} devices "
                       f"of {self.name!r} (oversubscribe=False)")
        return world / self.num_devices

    def core_sharing(self, world: int) -> float:
        """How many ranks share one device when `world` ranks run: ranks are spread
        over the nodes, ``ceil(world / nodes)`` per node on ``devices_per_node``
        devices (CPU cores for `this_machine`); 1 when they fit. Compute and the
        CPU's side of communication (MPI's shared-memory copies run on the ranks'
        cores) are slowed by this factor.

        Args:
            world (int): the number of ranks.

        Returns:
            float: ``max(1, ranks per node / devices per node)``.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster, Device
            >>> cpu = Cluster(Device("core", {"float32": 1e11}, 5e9, 8e9), devices_per_node=2,
            ...               oversubscribe=True)
            >>> cpu.core_sharing(2), cpu.core_sharing(4)
            (1.0, 2.0)
        """
        per_node = -(-int(world) // self.nodes)
        if per_node <= self.devices_per_node:
            return 1.0
        if not self.oversubscribe:
            raise _err("Cluster", f"{world} ranks do not fit on {self.num_devices} devices "
                       f"of {self.name!r} (oversubscribe=False)")
        return per_node / self.devices_per_node

    def sync_cost(self, world: int, n_syncs: int = 1, compute: float = 0.0) -> float:
        """Seconds a step's `n_syncs` blocking collectives wait for their peers in all,
        over `compute` seconds of work, when `world` ranks run (see ``sync_wait`` and
        ``sync_chunk``; the figures of the nearest measured count at or below
        `world`, else the smallest; 0 for one rank or none measured).

        Args:
            world (int): the number of ranks.
            n_syncs (int): blocking collectives per step. Default: 1.
            compute (float): seconds of compute they split. Default: 0 (one
                `sync_wait` per collective).

        Returns:
            float: seconds.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(1)
            >>> c.sync_cost(8, 4, 0.01)
            0.0
        """
        if world <= 1 or n_syncs <= 0 or not self.sync_wait:
            return 0.0
        wait = _at(self.sync_wait, world)
        chunk = _at(self.sync_chunk, world) if self.sync_chunk else 0.0
        if self.sync_wait_short and self.sync_chunk_short and chunk > 0:
            w0, w1 = wait_line(_at(self.sync_chunk_short, world),
                               _at(self.sync_wait_short, world), chunk, wait)
            return n_syncs * w0 + w1 * max(compute, 0.0)
        if chunk <= 0 or compute <= 0:
            return n_syncs * wait
        return wait * math.sqrt(n_syncs * compute / chunk)

    def dp_sync_cost(self, world: int, grad_bytes: float, tensors: int = 1) -> float | None:
        """Seconds fw's ``DataParallel`` adds to a step with `grad_bytes` of gradients
        in `tensors` parameter tensors when `world` ranks run (the calibrated
        ``dp_sync`` points of the nearest measured rank count at or below `world`,
        read through `dp_fit`), or None when not calibrated.

        Args:
            world (int): the ranks running.
            grad_bytes (float): bytes of gradients each rank averages.
            tensors (int, optional): parameter tensors they are in. Default: 1.

        Returns:
            float | None: seconds.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(1)
            >>> c.dp_sync_cost(8, 1e6) is None
            True
        """
        if world <= 1 or not self.dp_sync:
            return None
        pts = _at(self.dp_sync, world)
        if not pts:
            return None
        a, b, c = dp_fit(pts)
        return a + b * grad_bytes + c * tensors

    # ------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """The cluster as a plain dict (its fields, the device and links nested).

        Returns:
            dict: the fields.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> c = Cluster.a100_dgx(2)
            >>> d = c.to_dict()
            >>> d["nodes"], d["devices_per_node"]
            (2, 8)
        """
        return asdict(self)

    def to_json(self, path: str | None = None) -> str:
        """The cluster as JSON text (written to `path` too when given).

        Args:
            path (str, optional): a file to write. Default: None.

        Returns:
            str: the JSON text.

        Examples:
            >>> import fw
            >>> from fw.distributed.auto import Cluster
            >>> import os, tempfile
            >>> c = Cluster.a100_dgx(2)
            >>> path = os.path.join(tempfile.mkdtemp(), "cluster.json")
            >>> Cluster.from_json(c.to_json(path)).num_devices
            16
        """
        text = json.dumps(self.to_dict(), indent=1, sort_keys=True)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, path_or_text: str) -> Cluster:
        """Read a cluster from a JSON file (or JSON text): the fields of `Cluster`,
        with `device`, `intra` and `inter` as objects. Only data is read.

        Args:
            path_or_text (str): a JSON file, or JSON text.

        Returns:
            Cluster: the cluster.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> from fw.distributed.auto import Cluster
                >>> c = Cluster.a100_dgx(2)
                >>> Cluster.from_json(c.to_json()).num_devices
                16
        """
        text = path_or_text
        if not path_or_text.lstrip().startswith("{"):
            if not os.path.exists(path_or_text):
                raise FileNotFoundError(f"Cluster.from_json: no file {path_or_text!r}")
            with open(path_or_text, encoding="utf-8") as f:
                text = f.read()
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise _err("Cluster.from_json", f"not valid JSON: {e}") from None
        if not isinstance(d, dict):
            raise _err("Cluster.from_json", f"expected a JSON object, got {type(d).__name__}")
        known = set(cls.__dataclass_fields__)
        extra = set(d) - known
        if extra:
            raise _err("Cluster.from_json", f"unknown fields {sorted(extra)} (known: "
                       f"{sorted(known)})")
        if "device" not in d:
            raise _err("Cluster.from_json", "the 'device' object is missing")
        return cls(**d)

    # ------------------------------------------------------------ presets
    @classmethod
    def a100_dgx(cls, nodes: int = 1) -> Cluster:
        """NVIDIA DGX A100 nodes (8 x A100-SXM4-80GB), as NVIDIA's Selene.

        Datasheet figures (NVIDIA A100 Tensor Core GPU datasheet, 2021; DGX A100
        system datasheet): 312 TFLOP/s dense FP16/BF16 tensor core, 19.5 TFLOP/s
        FP32 (156 TF32), 9.7 FP64; 2,039 GB/s HBM2e; 80 GB (81,920 MiB, as
        nvidia-smi reports it); NVLink 3 600 GB/s per
        GPU (300 GB/s each way) through NVSwitch; 8 x 200 Gb/s HDR InfiniBand
        (one per GPU) = 200 GB/s per node each way.

        Sustained fractions (assumptions, stated so they can be checked): tensor-core
        GEMMs of transformer sizes 80 % of peak, memory-bound ops 80 % of HBM
        bandwidth, NCCL bus bandwidth 80 % of the link; latencies 5 us inside a
        node and 10 us between nodes (NCCL's ring latency order of magnitude).

        Args:
            nodes (int, optional): the number of DGX nodes. Default: 1.

        Returns:
            Cluster: the A100 cluster.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> from fw.distributed.auto import Cluster
                >>> Cluster.a100_dgx(4).num_devices
                32
        """
        dev = Device(
            name="A100-SXM4-80GB",
            matmul_flops={"float16": 0.8 * 312e12, "bfloat16": 0.8 * 312e12,
                          "float32": 0.8 * 156e12, "float64": 0.8 * 19.5e12},
            vector_flops={"float16": 0.8 * 78e12, "bfloat16": 0.8 * 39e12,
                          "float32": 0.8 * 19.5e12, "float64": 0.8 * 9.7e12},
            mem_bandwidth=0.8 * 2039e9, memory=80 * 2 ** 30, op_overhead=5e-6,
            peak_flops={"float16": 312e12, "bfloat16": 312e12, "float32": 19.5e12,
                        "float64": 9.7e12},
            optimizer_overhead=0.0, fused_softmax=True)
        return cls(device=dev, nodes=nodes, devices_per_node=8,
                   intra=Link(0.8 * 300e9, 5e-6), inter=Link(0.8 * 200e9, 10e-6),
                   topology="auto", comm_overlap=1.0, name=f"{nodes} x DGX A100",
                   source="NVIDIA A100 and DGX A100 datasheets; efficiencies assumed "
                          "(see Cluster.a100_dgx)")

    @classmethod
    def v100_dgx(cls, nodes: int = 1, memory_gb: int = 16) -> Cluster:
        """NVIDIA DGX-1 nodes with 8 x Tesla V100-SXM2 (16 GB, or 32 GB with
        ``memory_gb=32``).

        Datasheet figures (NVIDIA Tesla V100 datasheet, 2017; DGX-1 datasheet):
        15.7 TFLOP/s FP32, 125 TFLOP/s FP16 tensor core, 7.8 FP64; 900 GB/s HBM2;
        16 GB; NVLink 2 300 GB/s per GPU in a hybrid cube mesh (an 8-GPU ring gets
        about 2 x 25 GB/s each way per GPU); 4 x 100 Gb/s EDR InfiniBand per node =
        50 GB/s per node each way (Paddle's benchmark cluster had one 100 Gb/s
        port: use ``inter=Link(12.5e9 * 0.8, ...)`` for it).

        Sustained fractions (assumptions): FP32 GEMM 85 % (cuBLAS SGEMM on large
        shapes), FP32 convolutions 65 % (cuDNN on ResNet-50's shapes, which include
        many small 1x1 convolutions), memory-bound ops 80 % of HBM bandwidth, NCCL
        bus bandwidth 80 % of the link; latencies 5 us / 10 us.

        Args:
            nodes (int, optional): the number of DGX nodes. Default: 1.

        Returns:
            Cluster: the V100 cluster.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> from fw.distributed.auto import Cluster
                >>> Cluster.v100_dgx(1).device.memory   # 16 GiB (16,384 MiB)
                17179869184
        """
        dev = Device(
            name=f"V100-SXM2-{memory_gb}GB",
            matmul_flops={"float16": 0.8 * 125e12, "float32": 0.85 * 15.7e12,
                          "float64": 0.85 * 7.8e12},
            conv_flops={"float16": 0.6 * 125e12, "float32": 0.65 * 15.7e12,
                        "float64": 0.65 * 7.8e12},
            vector_flops={"float16": 0.8 * 31.4e12, "float32": 0.8 * 15.7e12,
                          "float64": 0.8 * 7.8e12},
            mem_bandwidth=0.8 * 900e9, memory=memory_gb * 2 ** 30, op_overhead=5e-6,
            peak_flops={"float16": 125e12, "float32": 15.7e12, "float64": 7.8e12},
            fused_softmax=True)
        return cls(device=dev, nodes=nodes, devices_per_node=8,
                   intra=Link(0.8 * 50e9, 5e-6), inter=Link(0.8 * 50e9, 10e-6),
                   topology="auto", comm_overlap=1.0, name=f"{nodes} x DGX-1 V100",
                   source="NVIDIA Tesla V100 and DGX-1 datasheets; efficiencies assumed "
                          "(see Cluster.v100_dgx)")

    @classmethod
    def this_machine(cls, profile: str | None = None) -> Cluster:
        """This machine, from a calibration profile (`calibrate`'s JSON file).

        Args:
            profile (str, optional): the profile's path; default
                ``$FW_COST_PROFILE``, else ``~/.cache/fw/cost_profile.json``.

        Returns:
            Cluster: one node with one device per CPU core (a rank runs one thread),
            shared memory as the intra-node link, the measured collective fits, and
            ``oversubscribe=True``.

        Examples:
            .. code-block:: python

                >>> import fw
                >>> import tempfile, os
                >>> from fw.distributed.auto import Cluster, calibrate
                >>> path = os.path.join(tempfile.mkdtemp(), "p.json")
                >>> _ = calibrate(path, budget=0.5, collectives=False)
                >>> Cluster.this_machine(path).device.name.startswith("cpu")
                True
        """
        from fw.distributed.auto.calibrate import default_profile_path, load_profile

        path = profile or default_profile_path()
        prof = load_profile(path)
        return cluster_from_profile(prof, source=path)


def cluster_from_profile(prof: dict, source: str = "") -> Cluster:
    """The `Cluster` a calibration profile describes."""
    k = prof["kernels"]
    dev = Device(
        name=f"cpu ({prof['machine'].get('cpu', 'unknown')}, 1 thread)",
        matmul_flops=dict(k["matmul_flops"]), conv_flops=dict(k["conv_flops"]),
        vector_flops=dict(k["vector_flops"]), mem_bandwidth=float(k["mem_bandwidth"]),
        memory=float(prof["machine"]["memory_bytes"]), op_overhead=float(k["op_overhead"]),
        optimizer_overhead=float(k.get("optimizer_overhead", 0.0)),
        bmm_flops=dict(k.get("bmm_flops", {})),
        scatter_bandwidth=float(k.get("scatter_bandwidth", 0.0)))
    coll = dict(prof.get("collectives", {}).get("fits", {}))
    ar = coll.get("all_reduce")
    # the intra-node link: the all-reduce fit read as a 2-rank ring (2 alpha + n beta)
    link = Link(1.0 / ar["beta"], ar["alpha"]) if ar else Link(5e9, 20e-6)
    return Cluster(device=dev, nodes=1, devices_per_node=int(prof["machine"]["cores"]),
                   intra=link, topology="ring", comm_overlap=0.0, oversubscribe=True,
                   contention=dict(prof.get("contention", {})), collectives=coll,
                   sync_wait=dict(prof.get("collectives", {}).get("sync_wait", {})),
                   sync_chunk=dict(prof.get("collectives", {}).get("sync_chunk", {})),
                   sync_wait_short=dict(prof.get("collectives", {}).get("sync_wait_short", {})),
                   sync_chunk_short=dict(prof.get("collectives", {}).get("sync_chunk_short",
                                                                         {})),
                   dp_sync=dict(prof.get("collectives", {}).get("dp_sync", {})),
                   name="this machine", source=source)
