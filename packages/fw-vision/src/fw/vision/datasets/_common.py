"""What the fw.vision datasets share: where downloads go, Paddle's "use the given path
or download" rule, argument checks, and a tar reader safe to use from DataLoader
worker processes."""

from __future__ import annotations

import os
import tarfile

import numpy as np

import fw

_BACKENDS = ("pil", "cv2")
_MODES = ("train", "valid", "test")


def data_home() -> str:
    """The directory datasets download into: ``<hub dir>/datasets`` where the hub dir is
    fw.hub's cache (``FW_HUB_CACHE``, else ``FW_HOME/hub``, else ``~/.cache/fw/hub``), so
    one variable moves all of fw's downloads (Paddle: ``~/.cache/paddle/dataset``)."""
    from fw.hub.cache import hub_dir

    return os.path.join(hub_dir(), "datasets")


def fetch(path, url: str, md5: str, module: str, download: bool, dataset: str,
          arg: str) -> str:
    """Paddle's ``_check_exists_and_download``: an existing ``path`` is used as is (a
    given path that does not exist is an error naming it, where Paddle would silently
    download into its cache instead); without a path, with ``download``, the file at
    ``url`` is fetched into ``data_home()/module`` through `fw.utils.download`
    (md5-checked, atomic, reused offline once cached; ``FW_HUB_MIRRORS`` rewrites the
    URL, ``FW_HUB_OFFLINE=1`` turns a cache miss into an error naming the file to
    place)."""
    if path:
        if os.path.exists(path):
            return os.fspath(path)
        raise FileNotFoundError(f"{dataset}: argument '{arg}' is {path!r}, which does not exist")
    if not download:
        raise ValueError(f"{dataset}: argument '{arg}' is not set and download=False; pass "
                         f"the path of the file ({url.rsplit('/', 1)[-1]}) or download=True")
    from fw.utils.download import get_path_from_url

    return get_path_from_url(url, os.path.join(data_home(), module), md5sum=md5,
                             decompress=False)


def check_backend(backend, dataset: str) -> str:
    if backend is None:
        from fw.vision.image import get_image_backend

        backend = get_image_backend()
    if backend not in _BACKENDS:
        raise ValueError(f"{dataset}: argument 'backend' must be one of {list(_BACKENDS)}, "
                         f"got {backend!r}")
    return backend


def check_mode(mode, dataset: str, modes=_MODES) -> str:
    if not isinstance(mode, str) or mode.lower() not in modes:
        raise ValueError(f"{dataset}: argument 'mode' must be one of {list(modes)}, got "
                         f"{mode!r}")
    return mode.lower()


def default_float() -> str:
    """The default float dtype's NumPy name (what Paddle's datasets cast cv2 images to)."""
    return np.dtype(fw.get_default_dtype().np).name


def as_dtype(image, dtype: str):
    """Cast a transformed cv2-backend sample as Paddle does (``image.astype(dtype)``):
    arrays stay arrays and tensors (e.g. after ``ToTensor``) stay tensors."""
    if hasattr(image, "astype"):
        return image.astype(dtype)
    return np.asarray(image).astype(dtype)


class TarMembers:
    """Read members of a tar file by name, opened lazily and reopened in each process
    (a tarfile handle shared with forked DataLoader workers would interleave seeks).
    Member data is only read, never extracted, so member paths cannot escape anywhere."""

    def __init__(self, path: str, dataset: str):
        self.path = path
        self.dataset = dataset
        self._pid = None
        self._tar = None
        try:
            with tarfile.open(path) as t:
                self.names = {m.name: m for m in t.getmembers() if m.isfile()}
        except (tarfile.TarError, EOFError, OSError) as e:
            raise ValueError(f"{dataset}: {path} is not a readable tar archive "
                             f"(truncated or corrupted?): {e}") from None

    def read(self, name: str) -> bytes:
        if name not in self.names:
            raise KeyError(f"{self.dataset}: {self.path} has no member {name!r}")
        if self._tar is None or self._pid != os.getpid():
            self._tar = tarfile.open(self.path)
            self._pid = os.getpid()
        try:
            return self._tar.extractfile(self.names[name]).read()
        except (tarfile.TarError, EOFError, OSError) as e:
            raise ValueError(f"{self.dataset}: cannot read {name!r} from {self.path}: {e}") \
                from None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_tar"] = None
        state["_pid"] = None
        return state

    def close(self):
        if self._tar is not None:
            self._tar.close()
            self._tar = None

    def __del__(self):
        self.close()
