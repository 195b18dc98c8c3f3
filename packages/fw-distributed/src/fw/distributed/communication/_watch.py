"""Who did not arrive: progress records in the job's store, read on a timeout.

Each rank runs a `Publisher` daemon thread that, every 0.1 s, pushes the latest
op of every group it belongs to (group, sequence number, op, shapes, state) to
the store key ``{job}/comm/progress/{rank}`` when it changed, so the hot path
never pays a store round trip. A rank whose wait times out publishes its own
record at once, reads every peer's record and the launcher's
``{job}/dead/{rank}`` keys, and names the ranks that are behind it in the group
(did not arrive), the ones that died, and the last op each rank entered.
"""
from __future__ import annotations

import json
import threading
import time

from fw.distributed._flight_recorder import recorder
from fw.distributed.communication._world import state

__all__ = ["Publisher", "progress_record", "diagnose", "dead_ranks"]

PERIOD = 0.1
HEARTBEAT = 1.0   # a record is re-pushed at least this often, unchanged or not
STALE = 4.0       # a record older than this: the rank is dead or stuck holding the GIL


def progress_record() -> dict:
    """{group id: [seq, op, description, state, t_issue]} of this rank's latest op
    per group (from each Group's `_last` entry)."""
    from fw.distributed.communication.group import _groups

    out = {}
    for gid, g in list(_groups.items()):
        for key, e in ((str(gid), g._last), (f"p2p{gid}", g._last_p2p)):
            if e is not None:
                out[key] = [e.seq, e.op, e.describe(), e.state, e.t_issue]
    return out


def _publish(store, rank):
    rec = {"rank": rank, "time": time.time(), "groups": progress_record()}
    store.set(state.key("comm", "progress", rank), json.dumps(rec))


class Publisher(threading.Thread):
    def __init__(self, store, rank):
        super().__init__(name="fw-dist-progress", daemon=True)
        self.store = store
        self.rank = rank
        self.stop = threading.Event()
        self._seen = None
        self._pushed = 0.0

    def run(self):
        while not self.stop.wait(PERIOD):
            last = recorder.last
            key = (recorder.count, last.state if last is not None else None)
            if key == self._seen and time.monotonic() - self._pushed < HEARTBEAT:
                continue
            try:
                _publish(self.store, self.rank)
                self._seen = key
                self._pushed = time.monotonic()
            except Exception:  # noqa: BLE001 - the store may be gone at shutdown
                if self.stop.is_set():
                    return
                time.sleep(1.0)


def dead_ranks(ranks) -> dict:
    """{rank: "signal SIGKILL" | "exit code N"} for the ranks the launcher reported
    dead (empty without a store)."""
    store = state.store
    if store is None:
        return {}
    keys = [state.key("dead", r) for r in ranks]
    out = {}
    try:
        for r, k in zip(ranks, keys):
            if store.check([k]):
                out[r] = store.get(k, timeout=2.0).decode(errors="replace")
    except Exception:  # noqa: BLE001 - diagnosis must not mask the timeout
        pass
    return out


def diagnose(group, entry, peer=None) -> tuple[str, list, dict]:
    """(message lines, ranks that did not arrive, dead ranks) for a timed-out
    `entry` of `group` (global ranks); for a send/recv, `peer` is the other side
    and only it is examined (p2p ops are numbered per peer, not per group)."""
    store = state.store
    lines = []
    if store is None:
        return (["(no store in this job: cannot tell which ranks arrived; the flight "
                 "recorder dump of each rank shows its last op)"], [], {})
    try:
        _publish(store, state.rank)
    except Exception:  # noqa: BLE001
        pass
    # let peers' publishers push their latest state before reading it
    time.sleep(2 * PERIOD + 0.05)
    ranks = group.ranks if peer is None else [state.rank, peer]
    dead = dead_ranks(ranks)
    missing = [] if peer is None else [peer]
    gid = str(group.id)
    for r in ranks:
        if r == state.rank:
            lines.append(f"rank {r} (this rank): {entry.describe()}")
            continue
        key = state.key("comm", "progress", r)
        rec = None
        try:
            if store.check([key]):
                rec = json.loads(store.get(key, timeout=2.0))
        except Exception as exc:  # noqa: BLE001
            lines.append(f"rank {r}: progress record unreadable ({exc})")
            missing.append(r)
            continue
        how = f" — died ({dead[r]})" if r in dead else ""
        if peer is not None and rec is not None:
            ops = [v for k, v in rec["groups"].items() if k in (gid, f"p2p{gid}")]
            last = max(ops, key=lambda v: v[4]) if ops else None
            lines.append(f"rank {r}: its last op in group {group.id} is "
                         f"{last[2] if last else 'none'}{how}")
            continue
        if rec is not None and r not in dead and time.time() - rec["time"] > STALE:
            how = (f" — no heartbeat for {time.time() - rec['time']:.1f} s (dead, or stuck "
                   "without releasing the GIL)")
            if r not in missing:
                missing.append(r)
        last = rec["groups"].get(gid) if rec else None
        if last is None:
            missing.append(r)
            lines.append(f"rank {r}: entered no collective in group {group.id} yet{how}")
            continue
        seq, op, desc, st, t = last
        ago = time.time() - t
        if seq < entry.seq:
            missing.append(r)
            lines.append(f"rank {r}: did not arrive; its last op in group {group.id} is {desc} "
                         f"entered {ago:.1f} s ago{how}")
        else:
            lines.append(f"rank {r}: arrived: {desc}{how}")
    missing = list(dict.fromkeys(missing))
    for r in dead:
        if r not in missing:
            missing.append(r)
    return lines, sorted(missing), dead
