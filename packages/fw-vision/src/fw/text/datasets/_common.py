"""What the fw.text datasets share: Paddle's "use the given file or download it" rule,
mode checks, and member reading from tar archives (read, never extracted, so member
paths cannot escape; nothing is unpickled)."""

from __future__ import annotations

import os
import tarfile

from fw.core.errors import InvalidArgumentError


def fetch(path, url: str, md5: str, module: str, download: bool, dataset: str,
          arg: str = "data_file") -> str:
    """An existing ``path`` is used as is; without one (and with ``download``) the file at
    ``url`` is fetched through `fw.utils.download` (md5-checked, atomic, cached under the
    hub cache's ``datasets/<module>``; ``FW_HUB_MIRRORS`` rewrites the URL)."""
    if path:
        if os.path.exists(path):
            return os.fspath(path)
        raise FileNotFoundError(f"{dataset}: argument '{arg}' is {path!r}, which does not exist")
    if not download:
        raise InvalidArgumentError(f"{dataset}: argument '{arg}' is not set and download=False; "
                                   f"pass the path of {url.rsplit('/', 1)[-1]} or "
                                   f"download=True")
    from fw.hub.cache import hub_dir
    from fw.utils.download import get_path_from_url

    return get_path_from_url(url, os.path.join(hub_dir(), "datasets", module), md5sum=md5,
                             decompress=False)


def check_choice(value, name: str, choices, dataset: str, fold=str.lower):
    if not isinstance(value, str) or fold(value) not in choices:
        raise InvalidArgumentError(f"{dataset}: argument '{name}' must be one of "
                                   f"{list(choices)}, got {value!r}")
    return fold(value)


def open_tar(path: str, dataset: str) -> tarfile.TarFile:
    try:
        return tarfile.open(path)
    except (tarfile.TarError, EOFError, OSError) as e:
        raise InvalidArgumentError(f"{dataset}: {path} is not a readable tar archive "
                                   f"(truncated or corrupted?): {e}") from None


def read_member(tar: tarfile.TarFile, name: str, dataset: str) -> bytes:
    """The bytes of member ``name`` (also found as ``./name``)."""
    for candidate in (name, "./" + name, name.removeprefix("./")):
        try:
            member = tar.getmember(candidate)
        except KeyError:
            continue
        if member.isfile():
            return tar.extractfile(member).read()
    raise InvalidArgumentError(f"{dataset}: {tar.name} has no file {name!r}")
