"""The parameter-server datasets (Paddle's ``paddle.distributed.InMemoryDataset`` and
``QueueDataset``): files of MultiSlot text (see fleet/data_generator.py), each
piped through ``pipe_command``, parsed into the slots of ``use_var`` and served in
batches.

- `QueueDataset` streams: each pass reads the files again, one after the other.
- `InMemoryDataset` loads every sample into memory (`load_into_memory`), can
  shuffle them locally or across the trainers (`global_shuffle`), and serves
  them from memory.

Paddle feeds them to ``exe.train_from_dataset``; fw's programs are fed by
iterating the dataset: ``for batch in dataset`` gives a dict slot name -> the
batch's values. A slot whose samples all have the same number of values in the
batch is a Tensor ``[batch, n]``; otherwise it is Paddle's LoD form, a pair
(1-D Tensor of all values, offsets list of ``batch + 1`` ints).

``pipe_command`` ``"cat"`` (the default) reads the file itself; any other command
runs under ``/bin/sh`` with the file on stdin, as in Paddle, with a timeout
(``FW_DATASET_PIPE_TIMEOUT``, default 600 s) and its exit status checked.
"""
from __future__ import annotations

import os
import random
import subprocess

import numpy as np

import fw

__all__ = ["DatasetBase", "InMemoryDataset", "QueueDataset"]

_FEEDS = ("MultiSlotDataFeed", "MultiSlotInMemoryDataFeed")


def _slot_of(v, where):
    """(name, numpy dtype) of a ``use_var`` entry: a variable with ``.name`` and
    ``.dtype``, or a (name, dtype) pair."""
    if isinstance(v, (tuple, list)) and len(v) == 2:
        name, dtype = v
    else:
        name, dtype = getattr(v, "name", None), getattr(v, "dtype", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{where}: use_var entries must be variables with a name (or "
                        f"(name, dtype) pairs), got {v!r}")
    d = str(dtype).replace("fw.", "").replace("paddle.", "")
    if d in ("int64", "uint64", "int32"):
        return name, np.int64
    if d in ("float32", "float64", "float"):
        return name, np.float32
    raise TypeError(f"{where}: slot {name!r} has dtype {dtype}; MultiSlot slots are int64 or "
                    f"float32")


class DatasetBase:
    """What both datasets share: settings, the file list, reading and batching.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> ds = dist.QueueDataset()
        >>> ds.init(batch_size=2, use_var=[("ids", "int64")])
        >>> ds.batch_size
        2
    """

    def __init__(self):
        self.batch_size = 1
        self.thread_num = 1
        self.slots = []
        self.pipe_command = "cat"
        self.filelist = []
        self.drop_last = False
        self.data_feed_type = "MultiSlotDataFeed"

    def init(self, **kwargs):
        """Set the dataset up (Paddle's keyword arguments).

        Args:
            **kwargs: ``batch_size`` (1), ``thread_num`` (1, files read in order),
                ``use_var`` (the slots, in file order: variables with ``name`` and
                ``dtype``, or (name, dtype) pairs), ``pipe_command`` ("cat"),
                ``input_type`` (0), ``fs_name``/``fs_ugi``/``download_cmd`` (only
                local files: must be empty/"cat"), ``data_feed_type``, ``drop_last``
                (False; fw's).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(batch_size=4, use_var=[("ids", "int64"), ("label", "float32")])
            >>> [n for n, _ in ds.slots]
            ['ids', 'label']
        """
        self._update(kwargs, type(self).__name__ + ".init")

    def _update(self, kw, where):
        known = {"batch_size", "thread_num", "use_var", "pipe_command", "input_type",
                 "fs_name", "fs_ugi", "download_cmd", "data_feed_type", "drop_last",
                 "queue_num", "merge_size", "parse_ins_id", "parse_content",
                 "fleet_send_batch_size", "fleet_send_sleep_seconds", "fea_eval",
                 "candidate_size"}
        bad = sorted(set(kw) - known)
        if bad:
            raise TypeError(f"{where}: unknown settings {bad}")
        if "batch_size" in kw:
            b = kw["batch_size"]
            if isinstance(b, bool) or not isinstance(b, int) or b < 1:
                raise ValueError(f"{where}: batch_size must be an int >= 1, got {b!r}")
            self.batch_size = b
        if "thread_num" in kw:
            self.thread_num = int(kw["thread_num"])
        if "use_var" in kw:
            self.slots = [_slot_of(v, where) for v in kw["use_var"]]
        if "pipe_command" in kw:
            if not isinstance(kw["pipe_command"], str) or not kw["pipe_command"].strip():
                raise ValueError(f"{where}: pipe_command must be a shell command, got "
                                 f"{kw['pipe_command']!r}")
            self.pipe_command = kw["pipe_command"]
        if kw.get("fs_name") or kw.get("fs_ugi") or kw.get("download_cmd", "cat") != "cat":
            raise NotImplementedError(f"{where}: HDFS/AFS (fs_name, fs_ugi, download_cmd) is not "
                                      f"supported; use local files")
        if "data_feed_type" in kw:
            if kw["data_feed_type"] not in _FEEDS:
                raise ValueError(f"{where}: data_feed_type must be one of {_FEEDS}, got "
                                 f"{kw['data_feed_type']!r}")
            self.data_feed_type = kw["data_feed_type"]
        if "drop_last" in kw:
            self.drop_last = bool(kw["drop_last"])

    def set_filelist(self, filelist):
        """Set the data files (each read through ``pipe_command``).

        Args:
            filelist (list[str]): the paths.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> ds = dist.QueueDataset()
            >>> ds.set_filelist(["a.txt", "b.txt"])
            >>> ds.filelist
            ['a.txt', 'b.txt']
        """
        if isinstance(filelist, str) or not all(isinstance(f, (str, os.PathLike))
                                                for f in filelist):
            raise TypeError(f"{type(self).__name__}.set_filelist: filelist must be a list of "
                            f"paths, got {filelist!r}")
        self.filelist = [os.fspath(f) for f in filelist]

    # -- reading ---------------------------------------------------------------------------
    def _text(self, path):
        where = f"{type(self).__name__}"
        if self.pipe_command.strip() == "cat":
            try:
                with open(path) as f:
                    return f.read()
            except FileNotFoundError:
                raise FileNotFoundError(f"{where}: data file {path} does not exist") from None
        timeout = float(os.environ.get("FW_DATASET_PIPE_TIMEOUT", "600"))
        try:
            with open(path, "rb") as f:
                p = subprocess.run(["/bin/sh", "-c", self.pipe_command], stdin=f,
                                   capture_output=True, timeout=timeout)
        except FileNotFoundError:
            raise FileNotFoundError(f"{where}: data file {path} does not exist") from None
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{where}: pipe_command {self.pipe_command!r} on {path} ran over "
                               f"{timeout:g} s (FW_DATASET_PIPE_TIMEOUT)") from None
        if p.returncode != 0:
            raise RuntimeError(f"{where}: pipe_command {self.pipe_command!r} on {path} exited "
                               f"with status {p.returncode}: "
                               f"{p.stderr.decode(errors='replace')[-2000:]}")
        return p.stdout.decode()

    def _parse(self, text, path):
        if not self.slots:
            raise ValueError(f"{type(self).__name__}: no slots; call init(use_var=[...]) first")
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            tok = line.split()
            if not tok:
                continue
            sample, k = [], 0
            try:
                for name, dtype in self.slots:
                    n = int(tok[k])
                    if n < 1 or k + 1 + n > len(tok):
                        raise ValueError(f"slot {name!r} declares {n} values")
                    sample.append(np.array(tok[k + 1:k + 1 + n], dtype=dtype))
                    k += 1 + n
            except (ValueError, IndexError) as e:
                raise ValueError(f"{type(self).__name__}: {path}:{lineno}: not a MultiSlot line "
                                 f"for the slots {[n for n, _ in self.slots]} ({e})") from None
            if k != len(tok):
                raise ValueError(f"{type(self).__name__}: {path}:{lineno}: {len(tok) - k} values "
                                 f"left over after the {len(self.slots)} slots")
            out.append(sample)
        return out

    def _read_all(self):
        for path in self.filelist:
            yield from self._parse(self._text(path), path)

    def _batches(self, samples):
        b = self.batch_size
        batch = []
        for s in samples:
            batch.append(s)
            if len(batch) == b:
                yield self._collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield self._collate(batch)

    def _collate(self, batch):
        out = {}
        for i, (name, _) in enumerate(self.slots):
            vals = [s[i] for s in batch]
            lens = {v.size for v in vals}
            if len(lens) == 1:
                out[name] = fw.to_tensor(np.stack(vals))
            else:
                offs = np.concatenate([[0], np.cumsum([v.size for v in vals])]).tolist()
                out[name] = (fw.to_tensor(np.concatenate(vals)), offs)
        return out


class QueueDataset(DatasetBase):
    """A dataset streamed from its files at each pass (Paddle's ``QueueDataset``).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> with open("part-0", "w") as f:
        ...     _ = f.write("2 1 2 1 0.5\\n1 7 1 1.5\\n")
        >>> ds = dist.QueueDataset()
        >>> ds.init(batch_size=2, use_var=[("ids", "int64"), ("y", "float32")])
        >>> ds.set_filelist(["part-0"])
        >>> batch = next(iter(ds))
        >>> batch["y"].tolist()
        [[0.5], [1.5]]
        >>> values, offsets = batch["ids"]
        >>> values.tolist(), offsets
        ([1, 2, 7], [0, 2, 3])
    """

    def __iter__(self):
        return self._batches(self._read_all())


class InMemoryDataset(DatasetBase):
    """A dataset held in memory: load, shuffle (locally or across trainers), iterate
    (Paddle's ``InMemoryDataset``).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> with open("part-0", "w") as f:
        ...     _ = f.write("".join(f"1 {i} 1 {i}.0\\n" for i in range(5)))
        >>> ds = dist.InMemoryDataset()
        >>> ds.init(batch_size=2, use_var=[("ids", "int64"), ("y", "float32")])
        >>> ds.set_filelist(["part-0"])
        >>> ds.load_into_memory()
        >>> ds.get_memory_data_size()
        5
        >>> [b["ids"].shape for b in ds]
        [[2, 1], [2, 1], [1, 1]]
    """

    def __init__(self):
        super().__init__()
        self.data_feed_type = "MultiSlotInMemoryDataFeed"
        self._samples = None
        self._seed = 0
        self._shuffled = 0

    def update_settings(self, **kwargs):
        """Change settings after `init` (the same keywords).

        Args:
            **kwargs: as `init`.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(batch_size=2, use_var=[("ids", "int64")])
            >>> ds.update_settings(batch_size=8)
            >>> ds.batch_size
            8
        """
        self._update(kwargs, "InMemoryDataset.update_settings")

    def load_into_memory(self, is_shuffle=False):
        """Read every file into memory.

        Args:
            is_shuffle (bool, optional): shuffle locally after loading. Default: False.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> with open("p", "w") as f:
            ...     _ = f.write("1 3\\n")
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(use_var=[("ids", "int64")])
            >>> ds.set_filelist(["p"])
            >>> ds.load_into_memory()
            >>> ds.get_memory_data_size()
            1
        """
        self._samples = list(self._read_all())
        if is_shuffle:
            self.local_shuffle()

    def preload_into_memory(self, thread_num=None):
        """Start loading (fw loads at once; `wait_preload_done` then returns at once).

        Args:
            thread_num (int, optional): accepted for Paddle compatibility. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> with open("p", "w") as f:
            ...     _ = f.write("1 3\\n")
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(use_var=[("ids", "int64")])
            >>> ds.set_filelist(["p"])
            >>> ds.preload_into_memory()
            >>> ds.wait_preload_done()
            >>> ds.get_memory_data_size()
            1
        """
        self.load_into_memory()

    def wait_preload_done(self):
        """Wait for `preload_into_memory` (already done in fw).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.InMemoryDataset().wait_preload_done()
        """
        return None

    def _need(self, fn):
        if self._samples is None:
            raise RuntimeError(f"InMemoryDataset.{fn}: call load_into_memory() first")

    def local_shuffle(self):
        """Shuffle this trainer's samples (seeded by the trainer's rank and the number of
        shuffles so far, so a run is reproducible).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> with open("p", "w") as f:
            ...     _ = f.write("".join(f"1 {i}\\n" for i in range(4)))
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(batch_size=4, use_var=[("ids", "int64")])
            >>> ds.set_filelist(["p"])
            >>> ds.load_into_memory()
            >>> ds.local_shuffle()
            >>> sorted(next(iter(ds))["ids"].numpy().ravel().tolist())
            [0, 1, 2, 3]
        """
        self._need("local_shuffle")
        from fw.distributed import _fleet_comm as comm

        self._shuffled += 1
        random.Random(f"{self._seed}/{comm.world_rank()}/{self._shuffled}").shuffle(
            self._samples)

    def global_shuffle(self, fleet=None, thread_num=12):
        """Shuffle the samples of all trainers together: each sample goes to a random
        trainer (all trainers call it; in one process it is `local_shuffle`).

        Args:
            fleet (Fleet, optional): accepted for Paddle compatibility. Default: None.
            thread_num (int, optional): accepted for Paddle compatibility. Default: 12.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> with open("p", "w") as f:
            ...     _ = f.write("1 1\\n1 2\\n")
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(use_var=[("ids", "int64")])
            >>> ds.set_filelist(["p"])
            >>> ds.load_into_memory()
            >>> ds.global_shuffle()
            >>> ds.get_shuffle_data_size()
            2
        """
        self._need("global_shuffle")
        from fw.distributed import _fleet_comm as comm

        n, r = comm.world_size(), comm.world_rank()
        if n > 1:
            self._shuffled += 1
            rng = np.random.default_rng([self._seed, r, self._shuffled])
            dest = rng.integers(0, n, len(self._samples))
            outgoing = [[s for s, d in zip(self._samples, dest) if d == q] for q in range(n)]
            import pickle

            # an all-gather of what each trainer sends where (object collective: pickled
            # between the ranks of one job); each keeps what was sent to it
            blobs = comm.all_gather_bytes(pickle.dumps(outgoing))
            self._samples = [s for b in blobs for s in pickle.loads(b)[r]]
        self.local_shuffle()

    def release_memory(self):
        """Drop the loaded samples.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> ds = dist.InMemoryDataset()
            >>> ds.release_memory()
            >>> ds.get_memory_data_size()
            0
        """
        self._samples = None

    def get_memory_data_size(self, fleet=None):
        """The number of samples in memory: this trainer's, or with `fleet` the sum
        over all trainers (a collective).

        Args:
            fleet (Fleet, optional): sum over the trainers. Default: None.

        Returns:
            int: the number of samples.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.InMemoryDataset().get_memory_data_size()
            0
        """
        n = len(self._samples) if self._samples is not None else 0
        if fleet is not None:
            from fw.distributed import _fleet_comm as comm

            a = np.array([n], np.int64)
            comm.all_reduce(a)
            n = int(a[0])
        return n

    def get_shuffle_data_size(self, fleet=None):
        """The number of samples after a shuffle (the same as `get_memory_data_size`:
        fw shuffles in place).

        Args:
            fleet (Fleet, optional): sum over the trainers. Default: None.

        Returns:
            int: the number of samples.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.InMemoryDataset().get_shuffle_data_size()
            0
        """
        return self.get_memory_data_size(fleet)

    def slots_shuffle(self, slots):
        """Shuffle the values of the named slots across samples (feature-importance
        evaluation: the slot's link to the label is broken, the rest kept).

        Args:
            slots (list[str]): slot names.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> with open("p", "w") as f:
            ...     _ = f.write("".join(f"1 {i} 1 {i}\\n" for i in range(6)))
            >>> ds = dist.InMemoryDataset()
            >>> ds.init(batch_size=6, use_var=[("a", "int64"), ("b", "int64")])
            >>> ds.set_filelist(["p"])
            >>> ds.load_into_memory()
            >>> ds.slots_shuffle(["a"])
            >>> b = next(iter(ds))
            >>> sorted(b["a"].numpy().ravel().tolist()), b["b"].numpy().ravel().tolist()
            ([0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5])
        """
        self._need("slots_shuffle")
        names = [n for n, _ in self.slots]
        for s in slots:
            if s not in names:
                raise ValueError(f"InMemoryDataset.slots_shuffle: no slot {s!r} (slots: {names})")
            i = names.index(s)
            col = [x[i] for x in self._samples]
            random.Random(f"{self._seed}/slot/{s}/{self._shuffled}").shuffle(col)
            for x, v in zip(self._samples, col):
                x[i] = v

    def __iter__(self):
        self._need("__iter__")
        return self._batches(list(self._samples))
