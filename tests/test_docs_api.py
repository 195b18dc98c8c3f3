"""The API reference generator (``hatch run docs`` = ci/build_api_docs.py, pdoc) runs
and its pages carry the docstrings' sections: fw.matmul's signature and arguments."""

import html
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_ARG = re.compile(r"^\s{4,}(\w+) \(", re.M)


def _section(page: str, anchor: str) -> str:
    """The text of the member `anchor` on a pdoc page (up to the next member)."""
    start = page.index(f'id="{anchor}"')
    end = page.find('<section id="', start + 1)
    text = re.sub(r"<[^>]+>", " ", page[start:end if end > 0 else None])
    return html.unescape(re.sub(r"\s+", " ", text))


def _args(doc: str) -> list[str]:
    """The parameter names listed under a docstring's ``Args:`` (empty: none)."""
    m = re.search(r"^\s*Args:\s*\n(.*?)(?=^\s*\w[\w ]*:\s*$|\Z)", doc, flags=re.M | re.S)
    return _ARG.findall(m.group(1)) if m else []


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """fw's and fw.optimizer.lr's pages, built in a subprocess (the build sets each
    module's ``__all__``: it must not run in the test process)."""
    out = tmp_path_factory.mktemp("api")
    run = subprocess.run([sys.executable, str(ROOT / "ci" / "build_api_docs.py"), "fw",
                          "fw.optimizer.lr", "--no-source", "-o", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_pages_written(api):
    assert (api / "fw.html").stat().st_size > 100_000
    assert (api / "fw" / "optimizer" / "lr.html").exists()
    assert (api / "index.html").exists() and (api / "search.js").exists()


def test_matmul_page_has_its_signature_and_args(api):
    import fw

    page = (api / "fw.html").read_text(encoding="utf-8")
    text = _section(page, "matmul")
    assert "matmul(x,y,transpose_x=False,transpose_y=False,name=None)" in "".join(text.split())
    # the docstring's summary line and every argument it documents are on the page
    assert fw.matmul.__doc__.strip().splitlines()[0].strip() in text
    for name in _args(fw.matmul.__doc__):
        assert name in text
    if _args(fw.matmul.__doc__):
        assert "Arguments:" in text


def test_args_sections_are_rendered(api):
    """A documented name's Args/Returns render as pdoc's sections, with each argument."""
    import fw

    page = (api / "fw.html").read_text(encoding="utf-8")
    documented = [n for n in ("matmul", "matrix_transpose", "add", "reshape")
                  if len(_args(getattr(fw, n).__doc__ or "")) >= 2]
    assert documented, "none of the probed fw functions has an Args section"
    text = _section(page, documented[0])
    assert "Arguments:" in text and "Returns:" in text
    for name in _args(getattr(fw, documented[0]).__doc__):
        assert name in text


def test_unknown_module_is_refused(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "ci" / "build_api_docs.py"), "fw.nope",
                          "-o", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert run.returncode != 0 and "fw.nope" in run.stderr
