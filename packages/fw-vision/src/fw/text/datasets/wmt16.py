"""The WMT'16 English-German multimodal translation data (Paddle's
``paddle.text.WMT16``)."""

from __future__ import annotations

import collections

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch, open_tar, read_member

DATA_URL = "http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz"
DATA_MD5 = "0c38be43600334966403524a40dcd81e"
TOTAL_EN_WORDS = 11250
TOTAL_DE_WORDS = 19220
START_MARK, END_MARK, UNK_MARK = "<s>", "<e>", "<unk>"


class WMT16(Dataset):
    """Sentence pairs as ids. Each language's dictionary is ``<s>``, ``<e>``, ``<unk>``
    then the words of that language's column of ``wmt16/train`` by falling count (ties in
    first-seen order), cut to ``dict_size`` entries. Paddle writes the
    dictionaries to files in its cache; fw builds them in memory. (Paddle 3.3 builds the
    target dictionary from the source column — a bug fw does not copy.)

    Args:
        data_file (str, optional): the path of ``wmt16.tar.gz`` (members
            ``wmt16/{train,test,val}``, tab-separated English/German pairs); None
            downloads it. Default None.
        mode (str, optional): 'train', 'test' or 'val'. Default 'train'.
        src_dict_size (int): the source dictionary size (> 0; Paddle's default -1 is
            rejected, as Paddle does).
        trg_dict_size (int): the target dictionary size (> 0).
        lang (str, optional): the source language, 'en' or 'de'. Default 'en'.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: items ``(src int64[n], trg int64[m], trg_next int64[m])``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "wmt16.tar.gz")
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for split in ("train", "test", "val"):
            ...         data = b"a cat\\teine katze\\n"
            ...         info = tarfile.TarInfo("wmt16/" + split)
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> ds = fw.text.WMT16(data_file=path, mode="test", src_dict_size=10,
            ...                   trg_dict_size=10)
            >>> [x.tolist() for x in ds[0]]
            [[0, 3, 4, 1], [0, 3, 4], [3, 4, 1]]
    """

    def __init__(self, data_file: str | None = None, mode: str = "train",
                 src_dict_size: int = -1, trg_dict_size: int = -1, lang: str = "en",
                 download: bool = True):
        self.mode = check_choice(mode, "mode", ("train", "test", "val"), "WMT16")
        if lang not in ("en", "de"):
            raise InvalidArgumentError(f"WMT16: argument 'lang' must be 'en' or 'de', got "
                                       f"{lang!r}")
        for arg, v in (("src_dict_size", src_dict_size), ("trg_dict_size", trg_dict_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise InvalidArgumentError(f"WMT16: argument '{arg}' must be a positive int "
                                           f"(the dictionary size), got {v!r}")
        self.lang = lang
        self.data_file = fetch(data_file, DATA_URL, DATA_MD5, "wmt16", download, "WMT16")
        self.src_dict_size = min(src_dict_size,
                                 TOTAL_EN_WORDS if lang == "en" else TOTAL_DE_WORDS)
        self.trg_dict_size = min(trg_dict_size,
                                 TOTAL_DE_WORDS if lang == "en" else TOTAL_EN_WORDS)
        with open_tar(self.data_file, "WMT16") as tar:
            train = self._pairs(read_member(tar, "wmt16/train", "WMT16"))
            data = train if self.mode == "train" else \
                self._pairs(read_member(tar, f"wmt16/{self.mode}", "WMT16"))
        src_col = 0 if lang == "en" else 1
        self.src_dict = self._build_dict(train, src_col, src_dict_size)
        self.trg_dict = self._build_dict(train, 1 - src_col, trg_dict_size)
        start, end = self.src_dict[START_MARK], self.src_dict[END_MARK]
        unk = self.src_dict[UNK_MARK]
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        for pair in data:
            src = [start, *(self.src_dict.get(w, unk) for w in pair[src_col].split()), end]
            trg = [self.trg_dict.get(w, unk) for w in pair[1 - src_col].split()]
            self.src_ids.append(src)
            self.trg_ids.append([start, *trg])
            self.trg_ids_next.append([*trg, end])

    @staticmethod
    def _pairs(raw: bytes):
        out = []
        for line in raw.decode().splitlines():
            parts = line.strip().split("\t")
            if len(parts) == 2:
                out.append(parts)
        return out

    @staticmethod
    def _build_dict(pairs, col, dict_size):
        freq = collections.Counter(w for p in pairs for w in p[col].split())
        words = [START_MARK, END_MARK, UNK_MARK]
        for w, _ in sorted(freq.items(), key=lambda x: x[1], reverse=True):
            if len(words) >= dict_size:
                break
            words.append(w)
        return {w: i for i, w in enumerate(words)}

    def __getitem__(self, idx):
        return (np.array(self.src_ids[idx]), np.array(self.trg_ids[idx]),
                np.array(self.trg_ids_next[idx]))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, lang: str, reverse: bool = False):
        """The dictionary of ``lang`` ('en' or 'de'), word -> id, or id -> word if
        ``reverse``.

        Args:
            lang (str): 'en' or 'de'.
            reverse (bool, optional): give the id -> word dictionary. Default: False.

        Returns:
            dict: a copy of the dictionary.

        Examples:
            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "wmt16.tar.gz")
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for split in ("train", "test", "val"):
            ...         data = b"a cat\\teine katze\\n"
            ...         info = tarfile.TarInfo("wmt16/" + split)
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> ds = fw.text.WMT16(data_file=path, src_dict_size=10, trg_dict_size=10)
            >>> ds.get_dict("de")
            {'<s>': 0, '<e>': 1, '<unk>': 2, 'eine': 3, 'katze': 4}
            >>> ds.get_dict("en", reverse=True)[4]
            'cat'
        """
        if lang not in ("en", "de"):
            raise InvalidArgumentError(f"WMT16.get_dict: argument 'lang' must be 'en' or "
                                       f"'de', got {lang!r}")
        d = self.src_dict if lang == self.lang else self.trg_dict
        return {v: k for k, v in d.items()} if reverse else dict(d)
