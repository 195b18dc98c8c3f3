"""Running a repository's ``hubconf.py`` (Paddle's hub protocol): a module whose public
callables are the entry points and whose ``dependencies`` list names the packages it
needs. Only called for a local directory or a trusted remote one (`fw.hub.trust`)."""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid

__all__ = ["import_hubconf", "entry_names", "get_entry", "check_dependencies", "HUBCONF"]

HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"


def import_hubconf(repo_dir: str):
    """Import ``<repo_dir>/hubconf.py`` as a fresh module (the directory is on
    ``sys.path`` while it runs, so it can import its siblings, as Paddle does)."""
    path = os.path.join(repo_dir, HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"fw.hub: {repo_dir} has no {HUBCONF}")
    name = f"fw_hub_hubconf_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        try:
            sys.path.remove(repo_dir)
        except ValueError:
            pass
    return module


def check_dependencies(module) -> None:
    """Raise RuntimeError naming the packages of ``dependencies`` that do not import."""
    deps = getattr(module, VAR_DEPENDENCY, None) or []
    if isinstance(deps, str) or not all(isinstance(d, str) for d in deps):
        raise RuntimeError(f"fw.hub: hubconf.py's {VAR_DEPENDENCY} must be a list of package "
                           f"names, got {deps!r}")
    missing = [d for d in deps if importlib.util.find_spec(d.split(".")[0]) is None]
    if missing:
        raise RuntimeError(f"fw.hub: missing dependencies of hubconf.py: {', '.join(missing)} "
                           f"(pip install them)")


def entry_names(module) -> list[str]:
    """The public callables of a hubconf module (Paddle's rule: callable, no leading _)."""
    return [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]


def get_entry(module, name):
    if not isinstance(name, str):
        raise ValueError(f"fw.hub: model must be the str name of an entry point, got "
                         f"{type(name).__name__}")
    fn = getattr(module, name, None)
    if fn is None or not callable(fn) or name.startswith("_"):
        raise RuntimeError(f"fw.hub: cannot find callable {name} in hubconf (entries: "
                           f"{', '.join(entry_names(module))})")
    return fn
