"""``PredictorPool``: Paddle Inference's fixed-size set of predictors for one model.

The first predictor is built from the config; the others are its clones, so the pool
holds one copy of the weights however large it is (``Predictor.clone`` shares them), and
each member has its own inputs and outputs, so members may run concurrently from
different threads.
"""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.inference.config import Config
from fw.inference.predictor import Predictor, create_predictor

__all__ = ["PredictorPool"]


class PredictorPool:
    """``size`` predictors of one model, sharing its weights.

    Args:
        config (Config): the model's config (copied, as ``create_predictor`` does).
        size (int, optional): how many predictors; at least 1. Default 1.

    Examples:
        .. code-block:: python

            >>> import fw.inference as infer
            >>> pool = infer.PredictorPool(infer.Config("model.fwmodel"), 4)  # doctest: +SKIP
            >>> predictor = pool.retrieve(2)  # doctest: +SKIP
    """

    def __init__(self, config: Config, size: int = 1):
        if not isinstance(config, Config):
            raise InvalidTypeError(f"PredictorPool: 'config' must be a fw.inference.Config, "
                                   f"got {type(config).__name__}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidArgumentError(f"PredictorPool: 'size' must be an int >= 1, "
                                       f"got {size!r}")
        first = create_predictor(config)
        self._predictors = [first] + [first.clone() for _ in range(size - 1)]

    def retrieve(self, idx: int) -> Predictor:
        """The predictor at ``idx`` (0 <= idx < size).

        Args:
            idx (int): its index.

        Returns:
            Predictor: that predictor (each one is a clone sharing the weights).

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> pool = infer.PredictorPool(infer.Config(path), 2)
            >>> out = pool.retrieve(1).run([np.zeros((1, 4), np.float32)])
            >>> out[0].shape
            [1, 2]
        """
        if isinstance(idx, bool) or not isinstance(idx, int) or \
                not 0 <= idx < len(self._predictors):
            raise InvalidArgumentError(f"PredictorPool.retrieve: 'idx' must be an int in "
                                       f"[0, {len(self._predictors)}), got {idx!r}")
        return self._predictors[idx]

    def __len__(self) -> int:
        return len(self._predictors)
