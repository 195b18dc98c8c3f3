"""Feature admission for sparse tables: `CountFilterEntry`, `ProbabilityEntry`,
`ShowClickEntry` (Paddle's ``paddle.distributed.entry_attr``) and the server-side
`Admission` that applies them.

An entry decides when an id gets a row in a `SparseTable`. Until it is admitted an
id reads as zeros and its gradients are dropped, so rare ids (typos, one-off
users) cost no memory and no updates:

- ``CountFilterEntry(n)``: admitted once the id has been seen in `n` training
  lookups (each forward counts an id once, however often it occurs in the batch);
  ``n = 0`` admits at once.
- ``ProbabilityEntry(p)``: each lookup of an unadmitted id admits it with
  probability `p`. The draw is a hash of (table seed, id, attempt number), so it is
  the same whichever trainer or server order the lookups come in.
- ``ShowClickEntry(show_name, click_name)``: the layer's forward gets the batch's
  `show` and `click` counts; the server sums them per id and admits an id once its
  CTR score ``(show - click) * 0.1 + click * 1.0`` (the coefficients of Paddle's
  CTR accessor) is positive, i.e. once it has been shown.

The entry is part of the table's config (kept in checkpoints); the counts of ids
not yet admitted live in server memory only.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EntryAttr", "CountFilterEntry", "ProbabilityEntry", "ShowClickEntry",
           "entry_spec", "Admission"]

NONCLK_COEFF, CLICK_COEFF = 0.1, 1.0     # Paddle's CtrCommonAccessor defaults


class EntryAttr:
    """The base of the admission entries (Paddle's ``EntryAttr``).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> from fw.distributed.ps.entry import EntryAttr
        >>> isinstance(dist.CountFilterEntry(3), EntryAttr)
        True
    """

    def __init__(self):
        self._name = None

    def _to_attr(self) -> str:
        raise NotImplementedError("EntryAttr is the base class; use CountFilterEntry, "
                                  "ProbabilityEntry or ShowClickEntry")

    def spec(self) -> dict:
        """The entry as a JSON-able table setting.

        Returns:
            dict: ``{"kind": ..., ...}``.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.CountFilterEntry(3).spec()
            {'kind': 'count_filter', 'count_filter': 3}
        """
        raise NotImplementedError("EntryAttr is the base class")

    def __repr__(self):
        return f"{type(self).__name__}({self._to_attr()!r})"


class ProbabilityEntry(EntryAttr):
    """Admit an unseen id with probability `probability` at each lookup.

    Args:
        probability (float): in (0, 1).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.ProbabilityEntry(0.25)._to_attr()
        'probability_entry:0.25'
    """

    def __init__(self, probability):
        super().__init__()
        if isinstance(probability, bool) or not isinstance(probability, float) or \
                not 0 < probability < 1:
            raise ValueError(f"ProbabilityEntry: probability must be a float in (0, 1), got "
                             f"{probability!r}")
        self._name = "probability_entry"
        self._probability = probability

    def _to_attr(self) -> str:
        return f"{self._name}:{self._probability}"

    def spec(self) -> dict:
        return {"kind": "probability", "probability": self._probability}


class CountFilterEntry(EntryAttr):
    """Admit an id once it has been looked up `count_filter` times.

    Args:
        count_filter (int): the number of lookups (>= 0; 0 admits at once).

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.CountFilterEntry(10)._to_attr()
        'count_filter_entry:10'
    """

    def __init__(self, count_filter):
        super().__init__()
        if isinstance(count_filter, bool) or not isinstance(count_filter, int):
            raise ValueError(f"CountFilterEntry: count_filter must be an int >= 0, got "
                             f"{count_filter!r}")
        if count_filter < 0:
            raise ValueError(f"CountFilterEntry: count_filter must be >= 0, got {count_filter}")
        self._name = "count_filter_entry"
        self._count_filter = count_filter

    def _to_attr(self) -> str:
        return f"{self._name}:{self._count_filter}"

    def spec(self) -> dict:
        return {"kind": "count_filter", "count_filter": self._count_filter}


class ShowClickEntry(EntryAttr):
    """Admit an id by its show/click statistics; the embedding's forward then takes
    ``show=`` and ``click=`` tensors shaped like its ids.

    Args:
        show_name (str): the name of the show slot (kept for Paddle compatibility).
        click_name (str): the name of the click slot.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> dist.ShowClickEntry("show", "click")._to_attr()
        'show_click_entry:show:click'
    """

    def __init__(self, show_name, click_name):
        super().__init__()
        if not isinstance(show_name, str) or not isinstance(click_name, str):
            raise ValueError(f"ShowClickEntry: show_name and click_name must be str, got "
                             f"{show_name!r}, {click_name!r}")
        self._name = "show_click_entry"
        self._show_name = show_name
        self._click_name = click_name

    def _to_attr(self) -> str:
        return f"{self._name}:{self._show_name}:{self._click_name}"

    def spec(self) -> dict:
        return {"kind": "show_click", "show_name": self._show_name,
                "click_name": self._click_name}


def entry_spec(entry, where: str):
    """`entry` (an EntryAttr, its spec dict, or None) as a spec dict or None."""
    if entry is None:
        return None
    if isinstance(entry, EntryAttr):
        return entry.spec()
    if isinstance(entry, dict) and entry.get("kind") in ("probability", "count_filter",
                                                         "show_click"):
        return dict(entry)
    raise TypeError(f"{where}: entry must be a CountFilterEntry, ProbabilityEntry, "
                    f"ShowClickEntry or None, got {type(entry).__name__}")


def _mix(x):
    """splitmix64's finaliser on uint64 arrays (a well-mixed hash of the bits)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


class Admission:
    """The server-side state of one table's entry: which unadmitted ids pass now.

    Args:
        spec (dict): `entry_spec`'s dict.
        seed (int): the table's seed (ProbabilityEntry's draws).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.distributed.ps.entry import Admission
        >>> a = Admission({"kind": "count_filter", "count_filter": 2}, seed=0)
        >>> a.admit(np.array([5, 6])).tolist(), a.admit(np.array([5])).tolist()
        ([False, False], [True])
    """

    def __init__(self, spec: dict, seed: int):
        self.spec = spec
        self.seed = int(seed)
        self.seen = {}          # id -> lookups (count filter, probability attempts)
        self.show = {}          # id -> summed shows (show/click)
        self.click = {}

    def admit(self, ids: np.ndarray, show=None, click=None) -> np.ndarray:
        """For unadmitted distinct `ids`, a bool mask of those admitted by this lookup
        (`show`/`click`: their summed counts in it, for ShowClickEntry)."""
        kind = self.spec["kind"]
        ids = np.asarray(ids, np.int64)
        if kind == "show_click":
            if show is None or click is None:
                raise ValueError(f"sparse table with ShowClickEntry({self.spec['show_name']!r}, "
                                 f"{self.spec['click_name']!r}): the lookup needs show and click "
                                 f"counts (SparseEmbedding.forward(ids, show=..., click=...))")
            out = np.zeros(ids.size, bool)
            for i, (k, s, c) in enumerate(zip(ids.tolist(), show, click)):
                s = self.show[k] = self.show.get(k, 0.0) + float(s)
                c = self.click[k] = self.click.get(k, 0.0) + float(c)
                out[i] = (s - c) * NONCLK_COEFF + c * CLICK_COEFF > 0
            for k in ids[out].tolist():
                self.show.pop(k, None)
                self.click.pop(k, None)
            return out
        n = np.array([self.seen.get(k, 0) + 1 for k in ids.tolist()], np.int64)
        if kind == "count_filter":
            out = n >= self.spec["count_filter"]
        else:
            h = _mix(ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                     ^ _mix(n.astype(np.uint64) + np.uint64(self.seed & 0xFFFFFFFF) *
                            np.uint64(0x100000001B3)))
            u = (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)
            out = u < self.spec["probability"]
        for k, c, ok in zip(ids.tolist(), n.tolist(), out.tolist()):
            if ok:
                self.seen.pop(k, None)
            else:
                self.seen[k] = c
        return out
