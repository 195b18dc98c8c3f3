"""fw.io.DataLoader throughput: batches per second in the main process and with
worker processes (shared memory and pipe transport), for MNIST-sized samples."""

import numpy as np

import fw


class Images(fw.io.Dataset):
    def __init__(self, n=2048, shape=(1, 28, 28)):
        rng = np.random.default_rng(0)
        self.x = rng.random((n,) + shape).astype(np.float32)
        self.y = rng.integers(0, 10, n)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


class Epoch:
    """One epoch of 2048 samples in batches of 64 (32 batches)."""

    params = [(0, True), (2, True), (2, False)]
    param_names = ["num_workers, use_shared_memory"]
    timeout = 120

    def setup(self, cfg):
        workers, shm = cfg
        self.loader = fw.io.DataLoader(Images(), batch_size=64, shuffle=True,
                                       num_workers=workers, use_shared_memory=shm,
                                       persistent_workers=workers > 0)
        for _ in self.loader:  # start the workers outside the timing
            break

    def time_epoch(self, cfg):
        for _ in self.loader:
            pass

    def teardown(self, cfg):
        it = getattr(self.loader, "_iterator", None)
        if it is not None:
            it._shutdown_workers()


class Collate:
    """default_collate_fn on 64 (image, label) samples."""

    def setup(self):
        ds = Images(64)
        self.batch = [ds[i] for i in range(64)]

    def time_default_collate(self):
        fw.io.default_collate_fn(self.batch)
