"""The MovieLens 1M ratings data set (Paddle's ``paddle.text.Movielens``)."""

from __future__ import annotations

import re
import zipfile

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch

URL = "https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip"
MD5 = "c4d9eecfca2ab87c1945afe126590906"
age_table = [1, 18, 25, 35, 45, 50, 56]


class MovieInfo:
    """A movie: id, categories, title (the year removed)."""

    def __init__(self, index, categories, title):
        self.index = int(index)
        self.categories = categories
        self.title = title

    def value(self, categories_dict, movie_title_dict):
        return [[self.index], [categories_dict[c] for c in self.categories],
                [movie_title_dict[w.lower()] for w in self.title.split()]]

    def __repr__(self):
        return (f"<MovieInfo id({self.index}), title({self.title}), "
                f"categories({self.categories})>")


class UserInfo:
    """A user: id, gender, age bucket (index into ``age_table``), job id."""

    def __init__(self, index, gender, age, job_id):
        self.index = int(index)
        self.is_male = gender == "M"
        self.age = age_table.index(int(age))
        self.job_id = int(job_id)

    def value(self):
        return [[self.index], [0 if self.is_male else 1], [self.age], [self.job_id]]

    def __repr__(self):
        return (f"<UserInfo id({self.index}), gender({'M' if self.is_male else 'F'}), "
                f"age({age_table[self.age]}), job({self.job_id})>")


class Movielens(Dataset):
    """Ratings joined with user and movie features. Each rating goes to 'test' with
    probability ``test_ratio`` (NumPy's global generator seeded with ``rand_seed``, as
    Paddle, so the split is Paddle's); the rating r becomes ``2r - 5``.

    Args:
        data_file (str, optional): the path of ``ml-1m.zip`` (members
            ``ml-1m/{movies,users,ratings}.dat``, '::'-separated, latin-1); None downloads
            it. Default None.
        mode (str, optional): 'train' or 'test'. Default 'train'.
        test_ratio (float, optional): the share of ratings in 'test'. Default 0.1.
        rand_seed (int, optional): the seed of the split. Default 0.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: items of 8 int arrays and a float one: user id, gender, age bucket, job,
        movie id, category ids, title word ids, rating. Title words and categories are
        numbered in sorted order (Paddle numbers them in ``set`` order, which changes
        from run to run).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, zipfile
            >>> path = os.path.join(tempfile.mkdtemp(), "ml-1m.zip")
            >>> with zipfile.ZipFile(path, "w") as z:
            ...     z.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation|Comedy\\n")
            ...     z.writestr("ml-1m/users.dat", "1::F::1::10::48067\\n")
            ...     z.writestr("ml-1m/ratings.dat", "1::1::5::978300760\\n")
            >>> ds = fw.text.Movielens(data_file=path, test_ratio=0.0)
            >>> [x.tolist() for x in ds[0]]
            [[1], [1], [0], [10], [1], [0, 1], [1, 0], [5.0]]
    """

    def __init__(self, data_file: str | None = None, mode: str = "train",
                 test_ratio: float = 0.1, rand_seed: int = 0, download: bool = True):
        self.mode = check_choice(mode, "mode", ("train", "test"), "Movielens")
        # Paddle caches this file under 'sentiment'
        self.data_file = fetch(data_file, URL, MD5, "sentiment", download, "Movielens")
        self.test_ratio = test_ratio
        self.rand_seed = rand_seed
        np.random.seed(rand_seed)
        try:
            with zipfile.ZipFile(self.data_file) as z:
                movies = self._lines(z, "movies.dat")
                users = self._lines(z, "users.dat")
                ratings = self._lines(z, "ratings.dat")
        except zipfile.BadZipFile as e:
            raise InvalidArgumentError(f"Movielens: {self.data_file} is not a zip file: "
                                       f"{e}") from None
        self._load_meta_info(movies, users)
        self._load_data(ratings)

    def _lines(self, z, name):
        try:
            return z.read("ml-1m/" + name).decode("latin-1").splitlines()
        except KeyError:
            raise InvalidArgumentError(f"Movielens: {self.data_file} has no ml-1m/{name}") \
                from None

    def _load_meta_info(self, movies, users):
        pattern = re.compile(r"^(.*)\((\d+)\)$")
        self.movie_info, self.user_info = {}, {}
        title_words, categories = set(), set()
        for line in movies:
            if not line.strip():
                continue
            movie_id, title, cats = line.strip().split("::")
            cats = cats.split("|")
            categories.update(cats)
            m = pattern.match(title)
            title = m.group(1) if m else title
            self.movie_info[int(movie_id)] = MovieInfo(movie_id, cats, title)
            title_words.update(w.lower() for w in title.split())
        self.movie_title_dict = {w: i for i, w in enumerate(sorted(title_words))}
        self.categories_dict = {c: i for i, c in enumerate(sorted(categories))}
        for line in users:
            if line.strip():
                uid, gender, age, job, _ = line.strip().split("::")
                self.user_info[int(uid)] = UserInfo(uid, gender, age, job)

    def _load_data(self, ratings):
        self.data = []
        is_test = self.mode == "test"
        for line in ratings:
            # one draw per line, taken before parsing, as Paddle's split does
            if (np.random.random() < self.test_ratio) == is_test:
                uid, mov_id, rating, _ = line.strip().split("::")
                usr, mov = self.user_info[int(uid)], self.movie_info[int(mov_id)]
                self.data.append(usr.value()
                                 + mov.value(self.categories_dict, self.movie_title_dict)
                                 + [[float(rating) * 2 - 5.0]])

    def __getitem__(self, idx):
        return tuple(np.array(d) for d in self.data[idx])

    def __len__(self):
        return len(self.data)
