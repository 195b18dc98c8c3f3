"""Helpers shared by fw-nn's tests."""

import os


def child_pids(zombies: bool = True) -> list:
    """Pids of this process's children, read from /proc (with or without zombies:
    a reaped-but-not-waited worker is a zombie, which the DataLoader tests that
    check for leftovers may count or not)."""
    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and (zombies or fields[0] != "Z"):
            out.append(int(d))
    return out
