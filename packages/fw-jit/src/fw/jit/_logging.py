"""``fw.jit.set_verbosity`` / ``set_code_level``: what to_static tells about its conversion.

Paddle's names and environment variables (``TRANSLATOR_VERBOSITY``,
``TRANSLATOR_CODE_LEVEL``). Messages go to the ``fw.jit`` logger (a stderr handler is
added the first time a level is switched on and the logger has none) and, with
``also_to_stdout``, to stdout as well. fw converts a function in one AST pass, so every
code level >= 0 shows the same thing: the final converted code (Paddle numbers its
transformers and 100 means "after all of them", its default).
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_verbosity", "set_code_level", "log", "log_code"]

_LOGGER = logging.getLogger("fw.jit")


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


_state = {"verbosity": _env_int("TRANSLATOR_VERBOSITY", 0), "verbosity_stdout": False,
          "code_level": _env_int("TRANSLATOR_CODE_LEVEL", -1), "code_stdout": False}


def _check(fn: str, level, also_to_stdout) -> None:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"fw.jit.{fn}: 'level' must be an int, got {type(level).__name__}")
    if not isinstance(also_to_stdout, bool):
        raise TypeError(f"fw.jit.{fn}: 'also_to_stdout' must be a bool, "
                        f"got {type(also_to_stdout).__name__}")


def _ensure_handler() -> None:
    if not _LOGGER.handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(asctime)s fw.jit %(message)s"))
        _LOGGER.addHandler(h)
    _LOGGER.setLevel(logging.INFO)


def set_verbosity(level: int = 0, also_to_stdout: bool = False) -> None:
    """Sets how much to_static logs about converting functions (0: nothing).

    Level 1 logs each function converted and each one that runs eagerly instead, with
    the reason. The environment variable ``TRANSLATOR_VERBOSITY`` gives the initial
    level; this call overrides it.

    Args:
        level (int, optional): the verbosity; 0 turns the messages off. Default 0.
        also_to_stdout (bool, optional): print the messages to stdout too (they always
            go to the ``fw.jit`` logger). Default False.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.jit.set_verbosity(1)
            >>> fw.jit.set_verbosity(0)
    """
    _check("set_verbosity", level, also_to_stdout)
    _state["verbosity"], _state["verbosity_stdout"] = level, also_to_stdout
    if level > 0:
        _ensure_handler()


def set_code_level(level: int = 100, also_to_stdout: bool = False) -> None:
    """Shows the code to_static generates for each converted function.

    fw converts in one pass, so any level >= 0 shows the final converted code, as
    Paddle's default level 100 does; a negative level turns it off. The environment
    variable ``TRANSLATOR_CODE_LEVEL`` gives the initial level (default -1, off).

    Args:
        level (int, optional): the code level; negative turns it off. Default 100.
        also_to_stdout (bool, optional): print the code to stdout too (it always goes
            to the ``fw.jit`` logger). Default False.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.jit.set_code_level(100)
            >>> fw.jit.set_code_level(-1)
    """
    _check("set_code_level", level, also_to_stdout)
    _state["code_level"], _state["code_stdout"] = level, also_to_stdout
    if level >= 0:
        _ensure_handler()


def log(level: int, message: str) -> None:
    """Logs ``message`` when the verbosity is at least ``level``."""
    if 0 < level <= _state["verbosity"]:
        _LOGGER.info(message)
        if _state["verbosity_stdout"]:
            print(message, flush=True)


def log_code(qualname: str, code: str) -> None:
    """Shows a function's converted code when a code level is set."""
    if _state["code_level"] >= 0:
        text = f"converted code of {qualname}:\n{code}"
        _LOGGER.info(text)
        if _state["code_stdout"]:
            print(text, flush=True)
