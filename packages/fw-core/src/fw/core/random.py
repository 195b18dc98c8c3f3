"""Random number generators: one per device kind, reseeded together by `seed`.

Random ops draw from the generator of the device they run on at the moment
they run (also inside compiled programs), so a program with dropout gives new
masks each run, and `fw.seed(s)` makes eager and compiled runs reproducible.
The cpu generator is NumPy's PCG64; a gpu generator wraps CuPy's.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["Generator", "seed", "default_generator", "get_rng_state", "set_rng_state",
           "initial_seed"]


class Generator:
    """A seedable stream of random numbers (Paddle's ``paddle.framework.Generator``).

    fw's random ops draw from the global generator of the current device (``fw.seed`` seeds
    it); a Generator of your own gives an independent, reproducible stream.

    Args:
        seed_ (int, optional): The seed; None draws one from the OS's entropy. Default: None.
        kind (str, optional): The device kind, "cpu" or "gpu". Default: "cpu".

    Examples:
        >>> import fw
        >>> g = fw.Generator(7)
        >>> g.initial_seed()
        7
        >>> state = g.get_state()
        >>> a = g.np.random()
        >>> g.set_state(state)
        >>> g.np.random() == a
        True
    """

    def __init__(self, seed_: int | None = None, kind: str = "cpu"):
        self.kind = kind
        self._lock = threading.Lock()
        self.manual_seed(np.random.SeedSequence().entropy % (2**63) if seed_ is None else seed_)

    def manual_seed(self, s: int) -> Generator:
        """Reseed the generator.

        Args:
            s (int): The seed.

        Returns:
            fw.Generator: this generator.

        Examples:
            >>> import fw
            >>> fw.Generator().manual_seed(3).initial_seed()
            3
        """
        s = int(s)
        self._seed = s
        if self.kind == "cpu":
            self._gen = np.random.Generator(np.random.PCG64(s))
        else:
            from fw.core import place as _pl

            self._gen = _pl.get_backend(self.kind).make_generator(s)
        return self

    def seed(self) -> int:
        """Reseed from fresh OS entropy.

        Returns:
            int: the new seed.

        Examples:
            >>> import fw
            >>> isinstance(fw.Generator().seed(), int)
            True
        """
        s = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with.

        Returns:
            int: the seed.

        Examples:
            >>> import fw
            >>> fw.Generator(11).initial_seed()
            11
        """
        return self._seed

    @property
    def np(self):
        """The underlying array-library generator (a numpy.random.Generator on the
        CPU); fw's random ops on this generator draw from it.

        Returns:
            numpy.random.Generator: the generator (CuPy's on a GPU generator).

        Examples:
            >>> import fw
            >>> g = fw.Generator(5)
            >>> type(g.np).__name__
            'Generator'
            >>> int(g.np.integers(100)) == int(fw.Generator(5).np.integers(100))
            True
        """
        return self._gen

    def get_state(self):
        """A snapshot of the generator's state, for set_state.

        Returns:
            object: the state.

        Examples:
            >>> import fw
            >>> g = fw.Generator(0)
            >>> s = g.get_state()
            >>> x = g.np.integers(100)
            >>> g.set_state(s)
            >>> bool(g.np.integers(100) == x)
            True
        """
        if self.kind == "cpu":
            return {"seed": self._seed, "bit_generator": self._gen.bit_generator.state}
        return {"seed": self._seed, "state": None}

    def set_state(self, state) -> None:
        """Restore a state returned by get_state.

        Args:
            state (object): The state.

        Returns:
            None

        Examples:
            >>> import fw
            >>> g = fw.Generator(0)
            >>> s = g.get_state()
            >>> g.set_state(s)
            >>> g.initial_seed()
            0
        """
        self._seed = state["seed"]
        if self.kind == "cpu":
            self._gen.bit_generator.state = state["bit_generator"]
        else:
            self.manual_seed(self._seed)


_generators: dict = {}


def default_generator(kind: str = "cpu") -> Generator:
    g = _generators.get(kind)
    if g is None:
        g = Generator(None, kind)
        _generators[kind] = g
    return g


def seed(s: int) -> Generator:
    """Seed the random generators of every device (``paddle.seed``).

    Random ops (fw.rand, dropout, initialisers, ...) then draw the same numbers in every run.

    Args:
        s (int): The seed.

    Returns:
        fw.Generator: the CPU generator.

    Examples:
        >>> import fw
        >>> _ = fw.seed(42)
        >>> a = fw.rand([3])
        >>> _ = fw.seed(42)
        >>> fw.equal_all(a, fw.rand([3])).item()
        True
    """
    s = int(s)
    for kind in set(_generators) | {"cpu"}:
        default_generator(kind).manual_seed(s)
    return default_generator("cpu")


def initial_seed() -> int:
    return default_generator("cpu").initial_seed()


def get_rng_state(device=None) -> list:
    """The state of the random generator of a device, to restore later with set_rng_state.

    Args:
        device (str, optional): "cpu" or "gpu"; None means "cpu". Default: None.

    Returns:
        list: the generator states.

    Examples:
        >>> import fw
        >>> state = fw.get_rng_state()
        >>> a = fw.rand([2])
        >>> fw.set_rng_state(state)
        >>> fw.equal_all(a, fw.rand([2])).item()
        True
    """
    return [default_generator("cpu" if device is None else str(device).split(":")[0]).get_state()]


def set_rng_state(states, device=None) -> None:
    """Restore a state returned by get_rng_state.

    Args:
        states (list|object): The states from get_rng_state.
        device (str, optional): "cpu" or "gpu"; None means "cpu". Default: None.

    Returns:
        None

    Examples:
        >>> import fw
        >>> state = fw.get_rng_state()
        >>> a = fw.randn([2])
        >>> fw.set_rng_state(state)
        >>> fw.equal_all(a, fw.randn([2])).item()
        True
    """
    st = states[0] if isinstance(states, (list, tuple)) else states
    default_generator("cpu" if device is None else str(device).split(":")[0]).set_state(st)
