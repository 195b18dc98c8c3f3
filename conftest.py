"""Shared pytest configuration: hypothesis profiles.

FW_HYPOTHESIS_PROFILE=thorough runs many more examples (the fast "ci" profile is
the default)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=8, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.load_profile(os.environ.get("FW_HYPOTHESIS_PROFILE", "ci"))


# Guard: a test must never leave files in the checkout (doc examples that save a model or
# a log once wrote m.pdmodel, img.gz and logs/ into the repository root, and a merge
# committed them). Untracked, non-ignored files that appear during the session fail it.
def _untracked():
    import subprocess

    root = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--others", "--exclude-standard"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return set(out.stdout.splitlines()) if out.returncode == 0 else None


def pytest_sessionstart(session):
    session.config._fw_untracked_before = _untracked()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_fw_untracked_before", None)
    after = _untracked() if before is not None else None
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = ("tests wrote files into the checkout (use tmp_path / monkeypatch.chdir): "
               + ", ".join(new[:20]) + (" ..." if len(new) > 20 else ""))
        if tr is not None:
            tr.ensure_newline()
            tr.write_line(msg, red=True)
        else:
            print(msg)
        session.exitstatus = 1
