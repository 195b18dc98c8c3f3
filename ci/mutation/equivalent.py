"""ci/mutation/equivalent.toml: mutants judged equivalent (no test can tell them from
the original), each with its reason. They leave the score's denominator and are
listed in the report.

An entry names a mutant by what it changes, which survives edits elsewhere in the
file (line numbers do not)::

    [[equivalent]]
    file = "packages/fw-nn/src/fw/nn/clip.py"
    scope = "_sq_sum"  # the enclosing class/function, dotted ("" at module level)
    old = 'if g.dtype.itemsize < 4 and g.dtype.is_floating_point'  # the line, stripped
    operator = "ReplaceComparisonOperator_Lt_LtE"
    new = 'if g.dtype.itemsize <= 4 and g.dtype.is_floating_point'  # the mutated line
    reason = "itemsize 4 is float32, which the branch casts to float32 anyway"

``scope`` tells identical lines in different functions apart. ``old``/``new`` are
the whole stripped line before and after (``mutate`` prints them
for every survivor, ready to paste).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomllib

from .areas import ROOT
from .mutants import mutant_key

PATH = ROOT / "ci" / "mutation" / "equivalent.toml"
_FIELDS = ("file", "scope", "old", "operator", "new", "reason")
_MAY_BE_EMPTY = ("scope",)


@dataclass(frozen=True)
class Equivalent:
    file: str
    scope: str
    old: str
    operator: str
    new: str
    reason: str

    @property
    def key(self) -> str:
        return mutant_key(self.file, self.scope, self.old, self.operator, self.new)


def load(path: Path = PATH) -> dict[str, Equivalent]:
    """key -> entry; a malformed entry is an error naming it."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, Equivalent] = {}
    for i, entry in enumerate(data.get("equivalent", []), 1):
        missing = [f for f in _FIELDS if f not in entry or
                   (f not in _MAY_BE_EMPTY and not str(entry[f]).strip())]
        if missing:
            raise ValueError(f"{path.name}: entry {i} lacks {', '.join(missing)}")
        unknown = set(entry) - set(_FIELDS)
        if unknown:
            raise ValueError(f"{path.name}: entry {i} has unknown fields {sorted(unknown)}")
        e = Equivalent(**{f: str(entry[f]).strip() for f in _FIELDS})
        out[e.key] = e
    return out
