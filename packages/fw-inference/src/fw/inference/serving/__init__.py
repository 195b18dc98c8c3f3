"""fw.inference.serving — serve fw models over HTTP (starlette + uvicorn), with
dynamic batching.

Needs the ``serving`` extra (``pip install 'fw-inference[serving]'``);
``import fw.inference`` does not import this package. From the shell::

    python -m fw.inference.serve lenet_digits.fwmodel --port 8866

From Python:

>>> import fw
>>> from fw.inference.serving import Server, ServingOptions
>>> opts = ServingOptions(max_batch_size=32, batch_timeout_ms=2)
>>> server = Server({"digits": "lenet_digits.fwmodel"}, opts, port=0).start()  # doctest: +SKIP
>>> server.url                                                    # doctest: +SKIP
'http://127.0.0.1:40713'
>>> server.stop()                                                 # doctest: +SKIP
True

`create_app` gives the ASGI app alone, to run under any ASGI server. The design
(batching, limits, shutdown) is in packages/fw-inference/README.md, "Serving".
"""

EXTRA = "pip install 'fw-inference[serving]'"

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as _e:
    raise ModuleNotFoundError(
        f"fw.inference.serving needs starlette and uvicorn ({_e.name or _e} is missing): "
        f"{EXTRA}", name=_e.name) from None

from fw.inference.serving.app import Serving, create_app
from fw.inference.serving.errors import RequestError
from fw.inference.serving.model import ModelSpec, TensorSpec
from fw.inference.serving.options import ServingOptions
from fw.inference.serving.server import Server, run_workers

__all__ = ["Server", "ServingOptions", "create_app", "run_workers", "Serving", "RequestError",
           "ModelSpec", "TensorSpec", "EXTRA"]
