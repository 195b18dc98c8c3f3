"""The WMT'14 English-French translation subset (Paddle's ``paddle.text.WMT14``)."""

from __future__ import annotations

import numpy as np

from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch, open_tar

URL_DEV_TEST = "http://www-lium.univ-lemans.fr/~schwenk/cslm_joint_paper/data/dev+test.tgz"
MD5_DEV_TEST = "7d7897317ddd8ba0ae5c5fa7248d3ff5"
URL_TRAIN = "http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz"
MD5_TRAIN = "0791583d57d5beb693b9414c5b36798c"
START, END, UNK = "<s>", "<e>", "<unk>"
UNK_IDX = 2


def _to_dict(data: bytes, size: int) -> dict:
    out = {}
    for i, line in enumerate(data.splitlines()):
        if size >= 0 and i >= size:
            break
        out[line.strip().decode()] = i
    return out


class WMT14(Dataset):
    """Sentence pairs as ids: source ``<s> words <e>``, target ``<s> words`` and the
    next-word target ``words <e>``; pairs longer than 80 ids are dropped, unknown words
    map to ``UNK_IDX`` (2).

    Args:
        data_file (str, optional): the path of ``wmt14.tgz`` (members ending in
            ``src.dict``, ``trg.dict`` and ``{mode}/{mode}``, tab-separated pairs); None
            downloads it. Default None.
        mode (str, optional): 'train', 'test' or 'gen'. Default 'train'.
        dict_size (int, optional): how many dictionary lines to use (Paddle's default -1
            reads none, so every word is unknown; pass a size). Default -1.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: items ``(src int64[n], trg int64[m], trg_next int64[m])``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "wmt14.tgz")
            >>> files = {"wmt14/src.dict": b"<s>\\n<e>\\n<unk>\\nhello\\n",
            ...          "wmt14/trg.dict": b"<s>\\n<e>\\n<unk>\\nbonjour\\n",
            ...          "wmt14/train/train": b"hello world\\tbonjour\\n"}
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for name, data in files.items():
            ...         info = tarfile.TarInfo(name)
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> ds = fw.text.WMT14(data_file=path, dict_size=4)
            >>> [x.tolist() for x in ds[0]]
            [[0, 3, 2, 1], [0, 3], [3, 1]]
    """

    def __init__(self, data_file: str | None = None, mode: str = "train",
                 dict_size: int = -1, download: bool = True):
        self.mode = check_choice(mode, "mode", ("train", "test", "gen"), "WMT14")
        self.data_file = fetch(data_file, URL_TRAIN, MD5_TRAIN, "wmt14", download, "WMT14")
        self.dict_size = dict_size
        self._load_data()

    def _load_data(self):
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        # Paddle's loop stops before reading any line when dict_size is -1
        size = self.dict_size if self.dict_size >= 0 else 0
        with open_tar(self.data_file, "WMT14") as tar:
            members = [m for m in tar.getmembers() if m.isfile()]

            def first(suffix):
                for m in members:
                    if m.name.endswith(suffix):
                        return tar.extractfile(m).read()
                return b""

            self.src_dict = _to_dict(first("src.dict"), size)
            self.trg_dict = _to_dict(first("trg.dict"), size)
            suffix = f"{self.mode}/{self.mode}"
            for m in members:
                if not m.name.endswith(suffix):
                    continue
                for line in tar.extractfile(m).read().decode().splitlines():
                    parts = line.strip().split("\t")
                    if len(parts) != 2:
                        continue
                    src = [self.src_dict.get(w, UNK_IDX) for w in [START, *parts[0].split(),
                                                                   END]]
                    trg = [self.trg_dict.get(w, UNK_IDX) for w in parts[1].split()]
                    if len(src) > 80 or len(trg) > 80:
                        continue
                    self.src_ids.append(src)
                    self.trg_ids.append([self.trg_dict.get(START, UNK_IDX), *trg])
                    self.trg_ids_next.append([*trg, self.trg_dict.get(END, UNK_IDX)])

    def __getitem__(self, idx):
        return (np.array(self.src_ids[idx]), np.array(self.trg_ids[idx]),
                np.array(self.trg_ids_next[idx]))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, reverse: bool = False):
        """The (source, target) dictionaries, word -> id, or id -> word if ``reverse``.

        Args:
            reverse (bool, optional): give id -> word dictionaries. Default: False.

        Returns:
            tuple[dict, dict]: the source and the target dictionary.

        Examples:
            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "wmt14.tgz")
            >>> files = {"wmt14/src.dict": b"<s>\\n<e>\\n<unk>\\nhello\\n",
            ...          "wmt14/trg.dict": b"<s>\\n<e>\\n<unk>\\nbonjour\\n",
            ...          "wmt14/train/train": b"hello world\\tbonjour\\n"}
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for name, data in files.items():
            ...         info = tarfile.TarInfo(name)
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> ds = fw.text.WMT14(data_file=path, dict_size=4)
            >>> src, trg = ds.get_dict()
            >>> src["hello"], trg["bonjour"]
            (3, 3)
            >>> ds.get_dict(reverse=True)[1][3]
            'bonjour'
        """
        src, trg = self.src_dict, self.trg_dict
        if reverse:
            src, trg = {v: k for k, v in src.items()}, {v: k for k, v in trg.items()}
        return src, trg
