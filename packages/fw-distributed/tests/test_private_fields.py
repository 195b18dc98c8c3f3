"""fw-distributed and fw-slim reach other packages' objects through their named ABI
(fw-nn's ``Optimizer.get_parameter_list``/``get_param_groups``/``set_param_groups``,
``fw.core.internal.replace_data``), never through the private fields those wrap:
a scan of both packages' sources for the fields by name."""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
PACKAGES = ("fw-distributed", "fw-slim")
# private fields of fw-nn's Optimizer and fw-core's Tensor that have a named ABI
FIELDS = {"_param_groups": "Optimizer.get_param_groups / set_param_groups",
          "_parameter_list": "Optimizer.get_parameter_list",
          "_invalidate": "Optimizer.set_param_groups",
          "_replace_data": "fw.core.internal.replace_data"}


def field_uses(source: str) -> list[tuple[int, str]]:
    """[(line, field)] for each attribute access or getattr string naming a field."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Constant) and node.value in FIELDS:
            found.append((node.lineno, node.value))
    return sorted(found)


def test_no_private_fields_of_other_packages():
    bad = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / "packages" / pkg / "src").rglob("*.py")):
            for line, name in field_uses(path.read_text(encoding="utf-8")):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name} (use {FIELDS[name]})")
    assert not bad, "\n".join(bad)


def test_the_scan_finds_planted_uses():
    src = ("def f(opt, p):\n"
           "    opt._param_groups = []\n"
           "    x = getattr(opt, '_parameter_list', None)\n"
           "    p._replace_data(x)\n"
           "    return opt.get_parameter_list()\n")
    assert field_uses(src) == [(2, "_param_groups"), (3, "_parameter_list"),
                               (4, "_replace_data")]
