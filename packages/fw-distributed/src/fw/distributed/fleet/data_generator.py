"""Fleet's data generators (Paddle's ``fleet.MultiSlotDataGenerator`` /
``MultiSlotStringDataGenerator``): user code that turns raw lines into the
MultiSlot text format the PS datasets (``fw.distributed.InMemoryDataset`` /
``QueueDataset``) read, usually run as a dataset's ``pipe_command``
(``python my_generator.py``, reading a data file on stdin).

The MultiSlot format: one sample per line; for each slot, in order, the number
of its values then the values, all separated by single spaces, e.g. the sample
``[("words", [1, 2, 3]), ("label", [1])]`` is the line ``3 1 2 3 1 1``.
"""
from __future__ import annotations

import sys

__all__ = ["DataGenerator", "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]


class DataGenerator:
    """The base of the generators: batching and the stdin/memory drivers. Subclasses
    define `_gen_str` (the output format); users override `generate_sample` (and
    optionally `generate_batch`).

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet.data_generator import DataGenerator
        >>> DataGenerator().batch_size_
        32
    """

    def __init__(self):
        self._proto_info = None
        self.batch_size_ = 32

    def set_batch(self, batch_size):
        """Set how many samples `generate_batch` gets at a time.

        Args:
            batch_size (int): the batch size (>= 1).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> g = fleet.MultiSlotDataGenerator()
            >>> g.set_batch(128)
            >>> g.batch_size_
            128
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"{type(self).__name__}.set_batch: batch_size must be an int >= 1, "
                             f"got {batch_size!r}")
        self.batch_size_ = batch_size

    def _drain(self, lines, out):
        batch = []

        def flush():
            for sample in self.generate_batch(batch)():
                out.write(self._gen_str(sample))
            batch.clear()

        for line in lines:
            for sample in self.generate_sample(line)():
                if sample is None:
                    continue
                batch.append(sample)
                if len(batch) == self.batch_size_:
                    flush()
        if batch:
            flush()

    def run_from_stdin(self):
        """Read raw lines from stdin, turn each into samples with `generate_sample`,
        batch them through `generate_batch` and write MultiSlot lines to stdout.

        Returns:
            None.

        Examples:
            >>> import fw, io, sys
            >>> from fw.distributed import fleet
            >>> class Words(fleet.MultiSlotDataGenerator):
            ...     def generate_sample(self, line):
            ...         def it():
            ...             ids = [int(w) for w in line.split()]
            ...             yield [("words", ids), ("label", [len(ids) % 2])]
            ...         return it
            >>> sys.stdin, old = io.StringIO("1 2 3\\n4 5\\n"), sys.stdin
            >>> Words().run_from_stdin()
            3 1 2 3 1 1
            2 4 5 1 0
            >>> sys.stdin = old
        """
        self._drain(sys.stdin, sys.stdout)

    def run_from_memory(self):
        """Like `run_from_stdin`, with samples made by ``generate_sample(None)`` (for
        debugging and benchmarks).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> class Fixed(fleet.MultiSlotDataGenerator):
            ...     def generate_sample(self, line):
            ...         def it():
            ...             for i in range(2):
            ...                 yield [("x", [i, i + 1]), ("y", [0.5])]
            ...         return it
            >>> Fixed().run_from_memory()
            2 0 1 1 0.5
            2 1 2 1 0.5
        """
        self._drain([None], sys.stdout)

    def generate_sample(self, line):
        """Override: turn one raw line into samples.

        Args:
            line (str|None): the raw line (None under `run_from_memory`).

        Returns:
            callable: a function returning an iterator of samples, each a list of
            ``(slot name, [values])``.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> try:
            ...     fleet.MultiSlotDataGenerator().generate_sample("1 2")
            ... except NotImplementedError:
            ...     print("override generate_sample")
            override generate_sample
        """
        raise NotImplementedError(f"{type(self).__name__}.generate_sample: override it to return "
                                  f"a function yielding [(name, [value, ...]), ...] samples")

    def generate_batch(self, samples):
        """Override to process a batch of samples (padding to the batch's longest, …);
        the default passes them through.

        Args:
            samples (list): up to ``batch_size_`` samples of `generate_sample`.

        Returns:
            callable: a function returning an iterator of samples.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> list(fleet.MultiSlotDataGenerator().generate_batch([[("a", [1])]])())
            [[('a', [1])]]
        """
        def it():
            yield from samples
        return it

    def _gen_str(self, line):
        raise NotImplementedError("use MultiSlotDataGenerator or MultiSlotStringDataGenerator")


def _slots(line, cls):
    if isinstance(line, zip):
        line = list(line)
    if not isinstance(line, (list, tuple)):
        raise ValueError(f"{cls}: a sample must be a list or tuple of (name, [values]), got "
                         f"{type(line).__name__}")
    return line


class MultiSlotDataGenerator(DataGenerator):
    """A generator of numeric MultiSlot lines: each slot's values are ints, or floats
    (a slot that ever has a float is a float slot). Every sample must have the same
    slots in the same order, none empty.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.MultiSlotDataGenerator()._gen_str([("ids", [7, 8]), ("w", [0.5])])
        '2 7 8 1 0.5\\n'
    """

    def _gen_str(self, line):
        cls = type(self).__name__
        line = _slots(line, cls)
        first = self._proto_info is None
        if first:
            self._proto_info = []
        elif len(line) != len(self._proto_info):
            raise ValueError(f"{cls}: a sample has {len(line)} slots but the first had "
                             f"{len(self._proto_info)} ({[n for n, _ in self._proto_info]})")
        parts = []
        for i, item in enumerate(line):
            name, elements = item
            if not isinstance(name, str):
                raise ValueError(f"{cls}: slot names must be str, got {name!r}")
            if not isinstance(elements, list):
                raise ValueError(f"{cls}: slot {name!r} must hold a list, got "
                                 f"{type(elements).__name__}")
            if not elements:
                raise ValueError(f"{cls}: slot {name!r} is empty; pad it in generate_sample")
            if first:
                self._proto_info.append((name, "uint64"))
            elif name != self._proto_info[i][0]:
                raise ValueError(f"{cls}: slot {i} is {name!r} but was "
                                 f"{self._proto_info[i][0]!r} in the first sample")
            for e in elements:
                if isinstance(e, float):
                    self._proto_info[i] = (name, "float")
                elif isinstance(e, bool) or not isinstance(e, int):
                    raise ValueError(f"{cls}: slot {name!r} has a {type(e).__name__} value "
                                     f"{e!r}; values must be int or float")
            parts.append(" ".join([str(len(elements))] + [str(e) for e in elements]))
        return " ".join(parts) + "\n"


class MultiSlotStringDataGenerator(DataGenerator):
    """A generator of MultiSlot lines whose values are strings, written as they are
    (no spaces inside a value).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.MultiSlotStringDataGenerator()._gen_str([("w", ["a", "b"]), ("y", ["1"])])
        '2 a b 1 1\\n'
    """

    def _gen_str(self, line):
        cls = type(self).__name__
        parts = []
        for item in _slots(line, cls):
            name, elements = item
            for e in elements:
                if not isinstance(e, str) or not e or any(c.isspace() for c in e):
                    raise ValueError(f"{cls}: slot {name!r} has the value {e!r}; values must "
                                     f"be non-empty strings without spaces")
            parts.append(" ".join([str(len(elements))] + list(elements)))
        return " ".join(parts) + "\n"
