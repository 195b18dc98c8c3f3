"""`fw.hub.list` / `help` / `load` over the sources, `load_state_dict_from_url` and
`load_state_dict`.

Sources:

- ``"github"`` / ``"gitee"``: ``"owner/repo[:ref]"``, a repository with a ``hubconf.py``
  (Paddle's protocol), fetched as an archive; its code runs only when trusted
  (`fw.hub.trust`).
- ``"local"``: a directory. With a ``hubconf.py``: Paddle's protocol (the user's own
  code, no trust check). Without: the zoo entries whose ``detect(path)`` accepts the
  directory load it with ``from_dir`` (e.g. a sentence-transformers folder).
- ``"hf"``: ``"org/name[@revision]"``, a Hugging Face repository: its config,
  weights, tokenizer and sentence-transformers files are taken from fw's or the HF cache
  or downloaded (resolve URLs) into fw's cache, then loaded as a local directory.
- ``"builtin"`` (or ``repo_dir="builtin"``): the zoo (`fw.hub.zoo`).
"""

from __future__ import annotations

import builtins
import json
import os
import re
import shutil
import urllib.parse
import warnings
import zipfile
from collections import OrderedDict

from fw.hub import cache as _cache
from fw.hub import hubconf as _hubconf
from fw.hub import sources as _sources
from fw.hub import trust as _trust
from fw.hub import zoo as _zoo
from fw.hub.convert import from_torch, torch_to_fw
from fw.hub.download import fetch, url_file_name
from fw.hub.errors import DownloadError, LayoutError

__all__ = ["list", "help", "load", "load_state_dict_from_url", "load_state_dict",
           "get_dir", "read_state_dict", "ZooList", "TorchStateDict", "hf_snapshot"]

_SOURCES = ("github", "gitee", "local", "hf", "builtin")


def get_dir() -> str:
    """fw's hub directory (Paddle's ``paddle.hub.get_dir``).

    Returns:
        str: ``FW_HUB_CACHE``, else ``FW_HOME/hub``, else ``~/.cache/fw/hub``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, fw.hub
            >>> saved_env = dict(os.environ)
            >>> os.environ["FW_HUB_CACHE"] = "/data/fw-hub"
            >>> fw.hub.get_dir()
            '/data/fw-hub'
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    return _cache.hub_dir()


class ZooList(builtins.list):
    """The names `list` returns for the zoo (a plain ``list`` of str), plus ``details``:
    name -> ``{"task", "configs", "pretrained" (has a weights URL), "cached" (weights
    available offline)}``, and ``available_offline``: the names whose weights are
    cached."""

    details: dict

    @property
    def available_offline(self) -> builtins.list:
        return [n for n in self if self.details[n]["cached"]]


def _is_builtin(repo_or_dir, source) -> bool:
    if source not in _SOURCES:
        raise ValueError(f'fw.hub: unknown source "{source}"; allowed values: '
                         f'{" | ".join(_SOURCES)}')
    return source == "builtin" or (repo_or_dir == "builtin" and source == "github")


def _zoo_list(names=None) -> ZooList:
    zoo = _zoo.entries()
    out = ZooList(sorted(zoo if names is None else names))
    out.details = {n: {"task": zoo[n].get("task", ""), "configs": zoo[n].get("configs", {}),
                       "pretrained": bool((zoo[n].get("weights") or {}).get("url")),
                       "cached": _zoo.weights_cached(zoo[n])} for n in out}
    return out


def _local_matches(path) -> builtins.list:
    return sorted(n for n, e in _zoo.entries().items()
                  if callable(e.get("detect")) and callable(e.get("from_dir"))
                  and e["detect"](path))


def _repo_dir(repo_or_dir, source, force_reload, trust_repo):
    """(kind, directory): kind "hubconf" or "dir" (a directory for the zoo loaders)."""
    if source in ("github", "gitee"):
        owner, name, _ = _sources.parse_repo_info(repo_or_dir, source)
        _trust.check_trust(owner, name, trust_repo, source)  # before any download
        return "hubconf", _sources.get_repo_dir(repo_or_dir, source, force_reload)
    if source == "hf":
        return "dir", hf_snapshot(repo_or_dir, force_reload=force_reload)
    path = os.path.abspath(os.path.expanduser(os.fspath(repo_or_dir)))
    if not os.path.isdir(path):
        raise FileNotFoundError(f"fw.hub: local source {repo_or_dir!r} is not a directory")
    if os.path.isfile(os.path.join(path, _hubconf.HUBCONF)):
        return "hubconf", path
    return "dir", path


def list(repo_dir, source: str = "github", force_reload: bool = False,  # noqa: A001
         trust_repo=None) -> builtins.list:
    """List the entry points of a hub repository, or the built-in models.

    Args:
        repo_dir (str): ``"owner/repo[:ref]"`` (github/gitee), a directory (local),
            ``"org/name[@revision]"`` (hf), or ``"builtin"`` (Paddle's argument name;
            torch.hub calls it ``repo_or_dir``).
        source (str, optional): ``github`` | ``gitee`` | ``local`` | ``hf`` | ``builtin``.
            Default ``github``.
        force_reload (bool, optional): fetch a remote repository again. Default False.
        trust_repo (bool, optional): run a remote hubconf.py (see `fw.hub.trust`).

    Returns:
        list[str]: entry names. For the zoo, a `ZooList` (sorted names with ``details``
        and ``available_offline``: the models whose weights are cached); for a
        directory without hubconf.py, the zoo entries that can load it.

    Examples:
        .. code-block:: python

            >>> import os, tempfile
            >>> import fw.hub
            >>> d = tempfile.mkdtemp()
            >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
            ...     _ = f.write("dependencies = []\\ndef tiny(n=2):\\n    return n\\n")
            >>> fw.hub.list(d, source="local")
            ['tiny']
    """
    if _is_builtin(repo_dir, source):
        return _zoo_list()
    kind, path = _repo_dir(repo_dir, source, force_reload, trust_repo)
    if kind == "hubconf":
        return _hubconf.entry_names(_hubconf.import_hubconf(path))
    return _zoo_list(_local_matches(path))


def help(repo_dir, model: str, source: str = "github", force_reload: bool = False,  # noqa: A001
         trust_repo=None) -> str:
    """The docstring of an entry point (or zoo entry).

    Args:
        repo_dir (str): as in `list`.
        model (str): the entry name.
        source (str, optional): as in `list`. Default ``github``.
        force_reload (bool, optional): fetch a remote repository again. Default False.
        trust_repo (bool, optional): run a remote hubconf.py (see `fw.hub.trust`).

    Returns:
        str: the documentation.

    Examples:
        .. code-block:: python

            >>> import os, tempfile
            >>> import fw.hub
            >>> d = tempfile.mkdtemp()
            >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
            ...     _ = f.write('def tiny():\\n    "A tiny model."\\n    return 1\\n')
            >>> fw.hub.help(d, "tiny", source="local")
            'A tiny model.'
    """
    if _is_builtin(repo_dir, source):
        return _zoo.get(model)["doc"]
    kind, path = _repo_dir(repo_dir, source, force_reload, trust_repo)
    if kind == "hubconf":
        return _hubconf.get_entry(_hubconf.import_hubconf(path), model).__doc__
    return _zoo.get(model)["doc"]


def load(repo_dir, model: str | None = None, source: str = "github",
         force_reload: bool = False, trust_repo=None, **kwargs):
    """Build a model from a hub repository, a directory, a Hugging Face repository or
    the built-in zoo.

    Args:
        repo_dir (str): ``"owner/repo[:ref]"`` (github/gitee), a directory (local),
            ``"org/name[@revision]"`` (hf), ``"builtin"`` (or, with
            ``source="builtin"``, the model name itself).
        model (str): the entry point / zoo name (for local and hf directories the zoo
            entry that loads them; found by its ``detect`` when omitted).
        source (str, optional): ``github`` | ``gitee`` | ``local`` | ``hf`` | ``builtin``.
            Default ``github``.
        force_reload (bool, optional): fetch the repository again. Default False.
        trust_repo (bool, optional): allow a remote hubconf.py to run (True is
            remembered in the trusted list); None refuses an untrusted repository with
            `fw.hub.errors.UntrustedRepoError` before downloading it.
        **kwargs: passed to the entry (e.g. ``pretrained=True``).

    Returns:
        fw.nn.Layer: the model (whatever the entry returns).

    Examples:
        .. code-block:: python

            >>> import os, tempfile
            >>> import fw.hub
            >>> d = tempfile.mkdtemp()
            >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
            ...     _ = f.write("import fw\\ndef mlp(width=4):\\n"
            ...                 "    return fw.nn.Linear(2, width)\\n")
            >>> fw.hub.load(d, "mlp", source="local", width=3).weight.shape
            [2, 3]
    """
    if _is_builtin(repo_dir, source):
        name = model if model is not None else repo_dir
        return _zoo.get(name)["fn"](**kwargs)
    kind, path = _repo_dir(repo_dir, source, force_reload, trust_repo)
    if kind == "hubconf":
        module = _hubconf.import_hubconf(path)
        _hubconf.check_dependencies(module)
        return _hubconf.get_entry(module, model)(**kwargs)
    if model is None:
        matches = _local_matches(path)
        if len(matches) != 1:
            raise ValueError(f"fw.hub.load: {repo_dir} has no hubconf.py and "
                             f"{'no' if not matches else 'several'} zoo entries can load it "
                             f"({', '.join(matches)}); pass model=")
        model = matches[0]
    entry = _zoo.get(model)
    if not callable(entry.get("from_dir")):
        raise ValueError(f"fw.hub.load: the zoo entry {model!r} does not load directories "
                         f"(no from_dir); entries that can load {repo_dir}: "
                         f"{_local_matches(path)}")
    if callable(entry.get("detect")) and not entry["detect"](path):
        raise ValueError(f"fw.hub.load: {repo_dir} does not look like a {model!r} directory "
                         f"(its detect() refused it); entries that can load it: "
                         f"{_local_matches(path)}")
    return entry["from_dir"](path, **kwargs)


# ---------------------------------------------------------------- Hugging Face snapshots
_HF_OPTIONAL = ("modules.json", "config_sentence_transformers.json",
                "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json",
                "special_tokens_map.json", "vocab.txt", "generation_config.json")
_HF_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
               "pytorch_model.bin.index.json")


# files of other frameworks / runtimes that fw does not read: never downloaded
_SKIP = re.compile(r"(^|/)(tf_model\.h5|flax_model\.msgpack|rust_model\.ot|.*\.onnx|"
                   r"onnx/.*|openvino/.*|.*\.ckpt(\..*)?|\.gitattributes|.*\.md|.*\.png)$")


def _hf_file_list(repo_id, rev, snap):
    """The repository's file names from the hub API (``/api/models/<repo>/revision/<rev>``,
    its ``siblings``), or None where the server has no API."""
    import tempfile

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/api/models/{repo_id}/revision/{urllib.parse.quote(rev, safe='')}"
    fd, tmp = tempfile.mkstemp(prefix=".listing-", dir=os.path.dirname(snap))
    os.close(fd)
    os.remove(tmp)
    try:
        fetch(url, tmp, progress=False, lock=False)
        with open(tmp, encoding="utf-8") as f:
            info = json.load(f)
    except (DownloadError, ValueError):
        return None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    sib = info.get("siblings") if isinstance(info, dict) else None
    if not isinstance(sib, builtins.list):
        return None
    names = [s.get("rfilename") for s in sib if isinstance(s, dict)]
    names = [n for n in names if isinstance(n, str) and n]
    for n in names:
        _cache._check_rel(n, "file name")
    return names


def _pick_hf_files(names) -> builtins.list:
    """Of a repository's files, those fw's loaders read: configs, tokenizer and module
    files, and one weights format (safetensors when present, else PyTorch .bin)."""
    keep = [n for n in names if not _SKIP.search(n)]
    has_st = any(n.endswith(".safetensors") for n in keep)
    out = []
    for n in keep:
        if n.endswith(".bin") or n.endswith(".bin.index.json"):
            if has_st or not os.path.basename(n).startswith("pytorch_model"):
                continue
        elif n.endswith((".h5", ".msgpack", ".pt", ".pth", ".tflite", ".mlmodel")):
            continue
        out.append(n)
    return out


def _has_weights(d) -> bool:
    return any(os.path.isfile(os.path.join(d, w)) for w in _HF_WEIGHTS)


def hf_snapshot(spec: str, *, force_reload: bool = False, progress: bool = True) -> str:
    """A local directory with a Hugging Face repository's files (config.json, weights —
    safetensors preferred, shards followed —, tokenizer and sentence-transformers
    module files): a complete cached snapshot (fw's or the HF cache) when there is one,
    else downloaded into fw's cache.

    Args:
        spec (str): ``"org/name[@revision]"``.
        force_reload (bool, optional): download again. Default False.
        progress (bool, optional): tqdm bars on a terminal. Default True.

    Returns:
        str: the snapshot directory.

    Examples:
        .. code-block:: python

            >>> import os, json, tempfile
            >>> saved_env = dict(os.environ)
            >>> import fw.hub
            >>> from fw.hub.testing import serve_directory
            >>> src = tempfile.mkdtemp()
            >>> d = os.path.join(src, "org", "tiny", "resolve", "main")
            >>> os.makedirs(d)
            >>> for name in ("config.json", "model.safetensors"):
            ...     with open(os.path.join(d, name), "w") as f:
            ...         _ = f.write("{}")
            >>> with serve_directory(src) as base:
            ...     os.environ["HF_ENDPOINT"] = base
            ...     snap = fw.hub.hf_snapshot("org/tiny", progress=False)
            >>> os.environ.clear(); os.environ.update(saved_env)
            >>> sorted(os.listdir(snap))
            ['config.json', 'model.safetensors']
    """
    repo_id, rev = _cache.parse_hf_repo(spec)
    if not force_reload:
        snap = _cache.cached_snapshot(repo_id, rev)
        if snap is not None and _has_weights(snap):
            return snap
    # assembled in fw's cache (the HF cache is only read, and only as a whole snapshot)
    kw = {"progress": progress, "force_download": force_reload, "include_hf_cache": False}
    snap = os.path.dirname(_cache.hf_hub_download(repo_id, "config.json", rev, **kw))

    def get(name, required=False):
        p = (_cache.hf_hub_download if required else _cache.try_hf_hub_download)(
            repo_id, name, rev, **kw)
        want = os.path.join(snap, *name.split("/"))
        if p is not None and os.path.abspath(p) != want:
            # the branch moved to another commit between two files: keep them together
            os.makedirs(os.path.dirname(want), exist_ok=True)
            shutil.copyfile(p, want)
            p = want
        return p

    listed = _hf_file_list(repo_id, rev, snap)
    if listed is not None:
        for name in _pick_hf_files(listed):
            get(name, required=True)
        if not _has_weights(snap):
            raise FileNotFoundError(f"fw.hub: Hugging Face repo {repo_id}@{rev} lists no "
                                    f"weights fw reads ({', '.join(_HF_WEIGHTS)})")
        return snap
    # no listing (a mirror serving only resolve URLs): the files fw's loaders read
    for name in _HF_OPTIONAL:
        get(name)
    modules = os.path.join(snap, "modules.json")
    if os.path.isfile(modules):
        with open(modules, encoding="utf-8") as f:
            mods = json.load(f)
        for m in mods if isinstance(mods, builtins.list) else []:
            sub = str(m.get("path", "")).strip("/") if isinstance(m, dict) else ""
            if sub:
                _cache._check_rel(sub, "module path")
                get(f"{sub}/config.json")
    for name in _HF_WEIGHTS:
        p = get(name)
        if p is None:
            continue
        if name.endswith(".index.json"):
            with open(p, encoding="utf-8") as f:
                index = json.load(f)
            for shard in sorted(set((index.get("weight_map") or {}).values())):
                _cache._check_rel(str(shard), "shard name")
                get(str(shard), required=True)
        break  # the first weights format found is enough (safetensors preferred)
    if not _has_weights(snap):
        raise FileNotFoundError(f"fw.hub: Hugging Face repo {repo_id}@{rev} has none of "
                                f"{', '.join(_HF_WEIGHTS)}")
    return snap


# ---------------------------------------------------------------- state dicts
class TorchStateDict(OrderedDict):
    """A state dict read from a PyTorch checkpoint (PyTorch names and layouts): load it
    with `fw.hub.convert.from_torch` or `load_state_dict` (which refuses square Linear
    weights without an explicit choice), not ``set_state_dict``."""

    source = "torch"


_HASH = re.compile(r"-([a-f0-9]*)\.")  # torch.hub's "name-<sha256 prefix>.ext"


def read_state_dict(path, *, return_numpy: bool = False):
    """Read weights from `path` without running code: fw / safetensors checkpoints and
    Paddle ``.pdparams`` through `fw.load`; PyTorch zip checkpoints through
    `fw.hub.torch_pickle` (a `TorchStateDict` of NumPy arrays); a zip holding one such
    file (Paddle's legacy zip) is read from inside.

    Args:
        path (str): the weights file.
        return_numpy (bool, optional): NumPy arrays instead of tensors (PyTorch files
            always give NumPy arrays). Default False.

    Returns:
        dict: the state dict.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, numpy as np
            >>> from fw.hub import read_state_dict
            >>> from fw.hub.testing import write_torch_checkpoint
            >>> p = os.path.join(tempfile.mkdtemp(), "pytorch_model.bin")
            >>> write_torch_checkpoint(p, {"fc.bias": np.zeros(2, np.float32)})
            >>> sd = read_state_dict(p)
            >>> type(sd).__name__, sd["fc.bias"]
            ('TorchStateDict', array([0., 0.], dtype=float32))
    """
    import fw
    from fw.hub import torch_pickle

    path = os.fspath(path)
    if zipfile.is_zipfile(path):
        if torch_pickle.is_torch_zip(path):
            return TorchStateDict(torch_pickle.load(path))
        with zipfile.ZipFile(path) as z:
            infos = [i for i in z.infolist() if not i.is_dir()]
        if len(infos) != 1:
            raise ValueError(f"fw.hub: {path} is a zip of {len(infos)} files, neither a PyTorch "
                             f"checkpoint nor a zip of one weights file")
        from fw.hub import archive

        out = os.path.splitext(path)[0] + ".unzipped"
        if not os.path.isdir(out):
            archive.extract_all(path, out)
        path = os.path.join(out, *infos[0].filename.replace("\\", "/").split("/"))
        return read_state_dict(path, return_numpy=return_numpy)
    sd = fw.load(path, return_numpy=return_numpy)
    if _safetensors_format(path) == "pt":
        return TorchStateDict((k, v if return_numpy else v.numpy()) for k, v in sd.items())
    return sd


def _safetensors_format(path) -> str | None:
    """The ``format`` of a safetensors file's metadata (``"pt"`` for files written from
    PyTorch by the HF libraries), or None."""
    import struct

    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8:
                return None
            (n,) = struct.unpack("<Q", head)
            if n > 100 * 1024 * 1024 or n > os.path.getsize(path) - 8:
                return None
            header = json.loads(f.read(n).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    return meta.get("format") if isinstance(meta, dict) else None


def load_state_dict_from_url(url: str, model_dir: str | None = None, check_hash: bool = True,
                             file_name: str | None = None, map_location=None):
    """Download a weights file (into ``<hub dir>/checkpoints`` by default) and read it
    without running code (see `read_state_dict`).

    Args:
        url (str): the file's URL (rewritten by ``FW_HUB_MIRRORS``).
        model_dir (str, optional): directory to keep it in.
        check_hash (bool, optional): verify the sha256 prefix in the file name
            (``name-<sha256 prefix>.ext``, torch.hub's convention); a name without one
            is downloaded unverified, with a warning. Default True (Paddle's is False:
            fw always checks a hash it knows).
        file_name (str, optional): the name to store it under.
        map_location (str, optional): ``"numpy"``/``"np"`` returns NumPy arrays; ``"cpu"``
            and None return tensors (fw computes on the CPU here); Paddle's other values
            are accepted.

    Returns:
        dict: the state dict (a `TorchStateDict` for PyTorch files).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, hashlib, numpy as np, fw
            >>> from fw.hub import load_state_dict_from_url
            >>> from fw.hub.testing import serve_directory
            >>> src = tempfile.mkdtemp()
            >>> fw.save({"w": fw.ones([2])}, os.path.join(src, "m.pdparams"))
            >>> with open(os.path.join(src, "m.pdparams"), "rb") as f:
            ...     name = f"m-{hashlib.sha256(f.read()).hexdigest()[:8]}.pdparams"
            >>> os.rename(os.path.join(src, "m.pdparams"), os.path.join(src, name))
            >>> with serve_directory(src) as base:
            ...     sd = load_state_dict_from_url(base + "/" + name, tempfile.mkdtemp())
            >>> sd["w"].numpy()
            array([1., 1.], dtype=float32)
    """
    if map_location not in (None, "cpu", "gpu", "xpu", "npu", "numpy", "np"):
        raise ValueError(f"fw.hub.load_state_dict_from_url: map_location must be one of "
                         f"cpu, gpu, xpu, npu, numpy, np, got {map_location!r}")
    default_dir = model_dir is None
    model_dir = model_dir or os.path.join(_cache.hub_dir(), "checkpoints")
    name = file_name or url_file_name(url)
    if os.path.basename(name) != name or name in ("", ".", ".."):
        raise ValueError(f"fw.hub.load_state_dict_from_url: file_name must be a plain file "
                         f"name, got {name!r}")
    if default_dir:
        _cache.check_inside(os.path.join(model_dir, name), _cache.hub_dir())
    sha = None
    if check_hash:
        m = _HASH.search(os.path.basename(urllib.parse.urlsplit(url).path))
        sha = m.group(1) if m and m.group(1) else None
        if sha is None:
            warnings.warn(f"fw.hub.load_state_dict_from_url: {url} has no sha256 prefix in its "
                          f"name (name-<sha256>.ext): downloaded without verification",
                          stacklevel=2)
    path = fetch(url, os.path.join(model_dir, name), sha256=sha)
    return read_state_dict(path, return_numpy=map_location in ("numpy", "np"))


def load_state_dict(model, state_dict_or_path, *, convert=None, strict: bool = True):
    """Load weights into `model`, converting PyTorch layouts when the source is PyTorch.

    Args:
        model (fw.nn.Layer): the model (loaded in place).
        state_dict_or_path: a path (read by `read_state_dict`) or a state dict.
        convert (str | bool | None, optional): ``"torch"``: convert from PyTorch (names
            and Linear transposes, `fw.hub.convert.from_torch`); ``False``/``"none"``:
            load as is; None (default): convert when the weights are known to come from
            PyTorch (a PyTorch checkpoint, a `TorchStateDict`, a safetensors file marked
            ``format: pt``) — refusing with `fw.hub.errors.LayoutError` when a square
            Linear weight makes the layout ambiguous —, else load as is.
        strict (bool, optional): raise when keys are missing, unexpected or mis-shaped
            (before loading anything). Default True.

    Returns:
        The load report (`fw.hub.convert.ConversionReport` when converted, else the
        model's ``set_state_dict`` report).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np, fw
            >>> from fw.hub import load_state_dict
            >>> from fw.hub.api import TorchStateDict
            >>> model = fw.nn.Linear(2, 2)
            >>> sd = TorchStateDict(weight=np.eye(2, dtype=np.float32),
            ...                     bias=np.zeros(2, np.float32))
            >>> load_state_dict(model, sd)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.hub.errors.LayoutError: ... square Linear weights ['weight'], ...
            >>> load_state_dict(model, sd, convert="torch").transposed
            ['weight']
    """
    if convert not in (None, False, "none", "torch"):
        raise ValueError(f"fw.hub.load_state_dict: convert must be 'torch', False/'none' or "
                         f"None, got {convert!r}")
    if isinstance(state_dict_or_path, (str, os.PathLike)):
        sd = read_state_dict(state_dict_or_path)
        what = os.fspath(state_dict_or_path)
    elif isinstance(state_dict_or_path, dict):
        sd, what = state_dict_or_path, "the state dict"
    else:
        raise TypeError(f"fw.hub.load_state_dict: expected a path or a dict, got "
                        f"{type(state_dict_or_path).__name__}")
    is_torch = isinstance(sd, TorchStateDict)
    if convert == "torch" or (convert is None and is_torch):
        if convert is None:
            _, report = torch_to_fw(sd, model)
            if report.ambiguous:
                raise LayoutError(
                    f"fw.hub.load_state_dict: {what} comes from PyTorch and has square Linear "
                    f"weights {report.ambiguous}, whose layout ([out, in] in PyTorch, [in, out]"
                    f" in fw) cannot be told from their shape. Pass convert='torch' to "
                    f"transpose every Linear weight and map names (fw.hub.convert.from_torch),"
                    f" or convert=False if they are already in fw's layout")
        return from_torch(sd, model, strict=strict)
    if strict:
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        got = {k: tuple(getattr(v, "shape", ())) for k, v in sd.items()}
        bad = ([f"missing {k}" for k in expected if k not in got]
               + [f"unexpected {k}" for k in got if k not in expected]
               + [f"{k}: model {builtins.list(expected[k])} vs file "
                  f"{builtins.list(got[k])}" for k in got
                  if k in expected and tuple(got[k]) != expected[k]])
        if bad:
            raise LayoutError(f"fw.hub.load_state_dict: {what} does not fit "
                              f"{type(model).__name__}: {'; '.join(bad[:20])}"
                              f"{' ...' if len(bad) > 20 else ''} (strict=False loads what fits)")
    return model.set_state_dict(sd)
