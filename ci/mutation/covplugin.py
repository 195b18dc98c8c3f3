"""pytest plugin for building a coverage map (loaded as ``-p _fwmut_covplugin`` in the
scratch copy by `covmap`): which test executes which line, and each test's outcome
and duration.

Each test runs in its own coverage *context* named by its node id (coverage.py's
dynamic contexts, switched here rather than through pytest-cov); lines run while
importing or collecting belong to the empty context.
"""

from __future__ import annotations

import json
import os

import coverage
import pytest

_cov: coverage.Coverage | None = None
_tests: dict[str, dict] = {}


def pytest_configure(config):
    global _cov
    data = os.environ.get("FWMUT_COV_DATA")
    if not data or _cov is not None:
        return
    include = os.environ["FWMUT_COV_INCLUDE"].split(os.pathsep)
    _cov = coverage.Coverage(data_file=data, include=include, config_file=False)
    _cov.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


def pytest_runtest_logreport(report):
    rec = _tests.setdefault(report.nodeid, {"outcome": "passed", "duration": 0.0})
    rec["duration"] += report.duration
    if report.failed:
        rec["outcome"] = "failed"
    elif report.skipped and rec["outcome"] == "passed":
        rec["outcome"] = "skipped"


def pytest_unconfigure(config):
    data = os.environ.get("FWMUT_COV_DATA")
    if _cov is None or not data:
        return
    _cov.stop()
    _cov.save()
    with open(data + ".tests.json", "w", encoding="utf-8") as f:
        json.dump(_tests, f)
