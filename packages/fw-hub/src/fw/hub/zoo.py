"""The built-in model zoo: every ``ZOO`` dict of the modules registered under the entry
point group ``fw.hub.zoo`` (fw-vision registers its models' zoo module, fw-hub its text
models; see the packages' pyproject.toml), merged. An entry::

    {"fn": callable(**kwargs) -> fw.nn.Layer, "doc": str, "configs": dict, "task": str,
     "weights": {"url": str, "md5": str | None, "sha256": str | None} | None,
     # optional, for local directories without hubconf.py:
     "from_dir": callable(path, **kwargs) -> fw.nn.Layer, "detect": callable(path) -> bool}

A registered module that is not installed is skipped; one that fails to import or
defines a malformed entry raises, naming it (a broken zoo should not look empty).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os

from fw.hub.download import url_file_name

__all__ = ["entries", "get", "weights_cached", "GROUP"]

GROUP = "fw.hub.zoo"
_REQUIRED = ("fn", "doc")


def _modules() -> list[tuple[str, str]]:
    """(entry point name, module name) of the group (a seam for tests)."""
    eps = importlib.metadata.entry_points(group=GROUP)
    return sorted((ep.name, ep.value.split(":")[0]) for ep in eps)


def _load_module(ep_name: str, module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            return None  # the providing package (or this module of it) is not installed
        raise


def entries() -> dict:
    """All zoo entries, name -> entry dict, merged over the registered modules."""
    out: dict = {}
    for ep_name, module in _modules():
        mod = _load_module(ep_name, module)
        if mod is None:
            continue
        zoo = getattr(mod, "ZOO", None)
        if not isinstance(zoo, dict):
            raise TypeError(f"fw.hub.zoo: {module} (entry point {ep_name!r} of {GROUP}) has no "
                            f"ZOO dict")
        for name, entry in zoo.items():
            if not isinstance(entry, dict) or not all(k in entry for k in _REQUIRED) \
                    or not callable(entry["fn"]):
                raise TypeError(f"fw.hub.zoo: entry {name!r} of {module} must be a dict with "
                                f"a callable 'fn' and a 'doc'")
            if name in out:
                raise ValueError(f"fw.hub.zoo: {name!r} is defined by both {out[name]['_module']}"
                                 f" and {module}")
            out[name] = {**entry, "_module": module}
    return out


def get(name: str) -> dict:
    """The entry `name`; KeyError naming close names when missing."""
    zoo = entries()
    if name not in zoo:
        import difflib

        close = difflib.get_close_matches(str(name), list(zoo), n=5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise KeyError(f"fw.hub: no built-in model {name!r}{hint}; fw.hub.list('builtin') "
                       f"lists the {len(zoo)} available")
    return zoo[name]


def weights_cached(entry: dict) -> bool:
    """Whether the entry's pretrained weights are in the weights cache (where
    `fw.utils.download.get_weights_path_from_url` puts them): loading them needs no
    network. An entry whose weights come from elsewhere (an installed package) says so
    with an ``"offline"`` callable -> bool."""
    offline = entry.get("offline")
    if callable(offline):
        return bool(offline())
    w = entry.get("weights")
    if not w or not w.get("url"):
        return False
    from fw.utils.download import weights_home

    p = os.path.join(weights_home(), url_file_name(w["url"]))
    return os.path.isfile(p) and os.path.getsize(p) > 0
