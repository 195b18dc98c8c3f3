"""fw.hub.list/help/load over the sources (local hubconf, GitHub/Gitee archives from a
loopback server through FW_HUB_MIRRORS, the trust list, the built-in zoo, zoo-loaded
directories, Hugging Face repositories and caches) and load_state_dict_from_url."""

import hashlib
import json
import os
import textwrap
import zipfile

import numpy as np
import pytest

import fw
import fw.hub
from fw.hub import cache, zoo
from fw.hub.errors import OfflineError, UnsafeCacheError, UntrustedRepoError
from fw.hub.testing import serve_directory, write_torch_checkpoint

PADDLE_MODELS = "https://paddle-hapi.bj.bcebos.com/models/"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for v in ("FW_HUB_OFFLINE", "HF_HUB_OFFLINE", "FW_HUB_MIRRORS", "FW_HOME", "HF_HOME",
              "HF_ENDPOINT", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "fwhub"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hfhub"))


@pytest.fixture
def srv(tmp_path):
    d = tmp_path / "srv"
    d.mkdir()
    with serve_directory(d) as base:
        base.root = d
        yield base


HUBCONF = textwrap.dedent('''
    """A test hub repository."""
    import os
    import fw
    dependencies = ["numpy"]
    open(os.environ["HUB_SENTINEL"], "w").close()  # proves the code ran

    def mlp(width=4):
        """A one-layer MLP."""
        return fw.nn.Linear(2, width)

    def _private():
        return None
''')


def _repo_zip(path, top, hubconf=HUBCONF, extra=None):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{top}/hubconf.py", hubconf)
        for name, data in (extra or {}).items():
            z.writestr(name, data)


def test_local_hubconf(tmp_path, monkeypatch):
    monkeypatch.setenv("HUB_SENTINEL", str(tmp_path / "ran"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    assert fw.hub.list(str(repo), source="local") == ["mlp"]
    assert fw.hub.help(str(repo), "mlp", source="local") == "A one-layer MLP."
    m = fw.hub.load(str(repo), "mlp", source="local", width=5)
    assert m.weight.shape == [2, 5]
    with pytest.raises(RuntimeError, match="cannot find callable nope"):
        fw.hub.load(str(repo), "nope", source="local")
    (repo / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_x"]'))
    with pytest.raises(RuntimeError, match="missing dependencies.*no_such_pkg_x"):
        fw.hub.load(str(repo), "mlp", source="local")
    with pytest.raises(ValueError, match="unknown source"):
        fw.hub.list(str(repo), source="svn")


@pytest.mark.parametrize("source,url_prefix,path", [
    ("github", "https://github.com/", "owner/repo/archive/main.zip"),
    ("gitee", "https://gitee.com/", "owner/repo/repository/archive/master.zip")])
def test_remote_hubconf_needs_trust(srv, tmp_path, monkeypatch, source, url_prefix, path):
    sentinel = tmp_path / "ran"
    monkeypatch.setenv("HUB_SENTINEL", str(sentinel))
    monkeypatch.setenv("FW_HUB_MIRRORS", f"{url_prefix}={srv}/")
    (srv.root / path).parent.mkdir(parents=True)
    _repo_zip(srv.root / path, "repo-main")
    with pytest.raises(UntrustedRepoError, match="trust_repo=True") as e:
        fw.hub.load("owner/repo", "mlp", source=source)
    assert "owner_repo" in str(e.value)
    assert not sentinel.exists() and srv.requests == []  # nothing downloaded or run
    m = fw.hub.load("owner/repo", "mlp", source=source, trust_repo=True, width=3)
    assert m.weight.shape == [2, 3] and sentinel.exists()
    n = len(srv.requests)
    # remembered: no trust_repo needed now; the cached repository needs no network
    assert fw.hub.list("owner/repo", source=source) == ["mlp"]
    assert len(srv.requests) == n
    with open(os.path.join(fw.hub.get_dir(), "trusted_list")) as f:
        trusted = f.read().split()
    assert trusted == ["owner_repo"]
    fw.hub.load("owner/repo", "mlp", source=source, force_reload=True)
    assert len(srv.requests) == n + 1


def test_remote_archive_with_traversal_refused(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("HUB_SENTINEL", str(tmp_path / "ran"))
    monkeypatch.setenv("FW_HUB_MIRRORS", f"https://github.com/={srv}/")
    p = srv.root / "o/r/archive/main.zip"
    p.parent.mkdir(parents=True)
    _repo_zip(p, "r-main", extra={"r-main/../../evil.py": "x"})
    with pytest.raises(fw.hub.UnsafeArchiveError, match=r"\.\."):
        fw.hub.load("o/r", "mlp", trust_repo=True)
    assert not (tmp_path / "ran").exists()
    assert not any(n.startswith("o_r_") for n in os.listdir(fw.hub.get_dir()))


def test_bad_repo_specs():
    for bad in ["norepo", "a/b/c", "../x/y", "a/b:../../x"]:
        with pytest.raises(ValueError, match="owner/repo"):
            fw.hub.load(bad, "m", trust_repo=True)


def test_offline_remote_repo_miss(monkeypatch):
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="https://github.com/o/r/archive/main.zip"):
        fw.hub.list("o/r", trust_repo=True)


# ---------------------------------------------------------------- the zoo
ZOO_MODULE = textwrap.dedent('''
    import os
    import fw
    from fw.utils.download import get_weights_path_from_url

    URL = "https://paddle-hapi.bj.bcebos.com/models/tiny_mlp.pdparams"

    def tiny_mlp(pretrained=False, width=3):
        """Linear(2, width)."""
        m = fw.nn.Linear(2, width)
        if pretrained:
            m.set_state_dict(fw.load(get_weights_path_from_url(URL, MD5)))
        return m

    def folder_model(**kw):
        return fw.nn.Linear(1, 1)

    def _detect(path):
        return os.path.isfile(os.path.join(path, "tiny.json"))

    def _from_dir(path, **kw):
        import json
        with open(os.path.join(path, "tiny.json")) as f:
            cfg = json.load(f)
        return fw.nn.Linear(cfg["in"], cfg["out"])

    MD5 = None
    ZOO = {
        "tiny_mlp": {"fn": tiny_mlp, "doc": "A tiny MLP.", "configs": {"width": 3},
                     "task": "test", "weights": {"url": URL, "md5": None, "sha256": None}},
        "folder_model": {"fn": folder_model, "doc": "Loads tiny.json folders.",
                         "configs": {}, "task": "test", "weights": None,
                         "from_dir": _from_dir, "detect": _detect},
    }
''')


@pytest.fixture
def test_zoo(tmp_path, monkeypatch):
    mod_dir = tmp_path / "zoo_mod"
    mod_dir.mkdir()
    (mod_dir / "fw_hub_test_zoo.py").write_text(ZOO_MODULE)
    monkeypatch.syspath_prepend(str(mod_dir))
    monkeypatch.setattr(zoo, "_modules", lambda: [("missing", "fw_not_installed_zoo_x"),
                                                  ("test", "fw_hub_test_zoo")])
    import importlib

    import fw_hub_test_zoo

    importlib.reload(fw_hub_test_zoo)
    return fw_hub_test_zoo


def test_builtin_zoo_listing_and_offline_weights(test_zoo, srv, monkeypatch):
    names = fw.hub.list("builtin")
    assert names == ["folder_model", "tiny_mlp"]
    assert names.details["tiny_mlp"] == {"task": "test", "configs": {"width": 3},
                                         "pretrained": True, "cached": False}
    assert names.available_offline == []
    assert fw.hub.help("builtin", "tiny_mlp") == "A tiny MLP."
    assert fw.hub.load("builtin", "tiny_mlp", width=5).weight.shape == [2, 5]
    assert fw.hub.load("tiny_mlp", source="builtin").weight.shape == [2, 3]
    with pytest.raises(KeyError, match="did you mean tiny_mlp"):
        fw.hub.load("builtin", "tiny_mpl")
    # pretrained weights from Paddle's URL, served by the loopback mirror
    w = {"weight": fw.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
         "bias": fw.to_tensor(np.ones(3, np.float32))}
    fw.save(w, str(srv.root / "tiny_mlp.pdparams"))
    monkeypatch.setenv("FW_HUB_MIRRORS", f"{PADDLE_MODELS}={srv}/")
    m = fw.hub.load("builtin", "tiny_mlp", pretrained=True)
    np.testing.assert_array_equal(m.weight.numpy(), w["weight"].numpy())
    assert fw.hub.list("builtin").available_offline == ["tiny_mlp"]
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    fw.hub.load("builtin", "tiny_mlp", pretrained=True)  # from the cache


def test_local_dir_loaded_by_zoo_entry(test_zoo, tmp_path):
    d = tmp_path / "folder"
    d.mkdir()
    (d / "tiny.json").write_text(json.dumps({"in": 3, "out": 7}))
    assert fw.hub.list(str(d), source="local") == ["folder_model"]
    assert fw.hub.load(str(d), source="local").weight.shape == [3, 7]
    assert fw.hub.load(str(d), "folder_model", source="local").weight.shape == [3, 7]
    with pytest.raises(ValueError, match="no from_dir"):
        fw.hub.load(str(d), "tiny_mlp", source="local")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="detect"):
        fw.hub.load(str(empty), "folder_model", source="local")
    with pytest.raises(ValueError, match="no zoo entries"):
        fw.hub.load(str(empty), source="local")


def test_broken_zoo_module_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "fw_hub_bad_zoo.py").write_text("ZOO = {'x': {'doc': 'no fn'}}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(zoo, "_modules", lambda: [("bad", "fw_hub_bad_zoo")])
    with pytest.raises(TypeError, match="callable 'fn'"):
        fw.hub.list("builtin")


# ---------------------------------------------------------------- Hugging Face
def _hf_repo(root, repo="org/tiny", rev="main", commit="a" * 40):
    d = root / repo / "resolve" / rev
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"in": 2, "out": 4}))
    (d / "tiny.json").write_text(json.dumps({"in": 2, "out": 4}))
    from safetensors.numpy import save_file

    save_file({"w": np.ones(3, np.float32)}, str(d / "model.safetensors"))
    (d / "tf_model.h5").write_bytes(b"never fetched")
    (d / "pytorch_model.bin").write_bytes(b"never fetched: safetensors is there")
    return d


def _hf_api(root, repo, names, rev="main"):
    api = root / "api" / "models" / repo / "revision"
    api.mkdir(parents=True)
    (api / rev).write_text(json.dumps({"sha": "a" * 40,
                                       "siblings": [{"rfilename": n} for n in names]}))


def test_hf_source_downloads_into_hf_layout(test_zoo, srv, monkeypatch):
    _hf_repo(srv.root)
    _hf_api(srv.root, "org/tiny", ["config.json", "tiny.json", "model.safetensors",
                                   "tf_model.h5", "pytorch_model.bin", "README.md"])
    monkeypatch.setenv("HF_ENDPOINT", srv)
    snap = fw.hub.hf_snapshot("org/tiny")
    repo = os.path.join(fw.hub.get_dir(), "models--org--tiny")
    assert snap == os.path.join(repo, "snapshots", "main")
    assert sorted(os.listdir(snap)) == ["config.json", "model.safetensors", "tiny.json"]
    with open(os.path.join(snap, "model.safetensors"), "rb") as f:
        data = f.read()
    blob = os.path.join(repo, "blobs", hashlib.sha256(data).hexdigest())
    assert os.path.realpath(os.path.join(snap, "model.safetensors")) == blob
    n = len(srv.requests)
    # cached: no network, even offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert fw.hub.load("org/tiny", "folder_model", source="hf").weight.shape == [2, 4]
    assert len(srv.requests) == n
    with pytest.raises(OfflineError, match="resolve/main/config.json"):
        fw.hub.hf_snapshot("org/other")


def test_hf_without_listing_api_fetches_known_files(srv, monkeypatch):
    _hf_repo(srv.root)
    monkeypatch.setenv("HF_ENDPOINT", srv)
    snap = fw.hub.hf_snapshot("org/tiny")
    assert sorted(os.listdir(snap)) == ["config.json", "model.safetensors"]
    fetched = {r[1] for r in srv.requests if r[0] == "GET"}
    assert "/org/tiny/resolve/main/tf_model.h5" not in fetched
    assert "/org/tiny/resolve/main/pytorch_model.bin" not in fetched


def test_hf_cache_reused_read_only(test_zoo, tmp_path):
    # a Hugging Face cache as huggingface_hub lays it out (blobs, snapshots, refs)
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hfhub" / "models--org--cached"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for name, data in [("config.json", b"{}"), ("tiny.json", b'{"in": 5, "out": 2}'),
                       ("model.safetensors", b"x")]:
        h = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / h).write_bytes(data)
        os.symlink(os.path.join("..", "..", "blobs", h), snap / name)
    before = sorted(str(p) for p in (tmp_path / "hfhub").rglob("*"))
    m = fw.hub.load("org/cached", "folder_model", source="hf")
    assert m.weight.shape == [5, 2]
    assert sorted(str(p) for p in (tmp_path / "hfhub").rglob("*")) == before
    assert cache.cached_file("org/cached", "tiny.json") == str(snap / "tiny.json")


def test_symlink_out_of_cache_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    snap = tmp_path / "hfhub" / "models--org--evil" / "snapshots" / "main"
    snap.mkdir(parents=True)
    os.symlink(str(secret), snap / "config.json")
    with pytest.raises(UnsafeCacheError, match="outside the cache"):
        cache.cached_file("org/evil", "config.json")
    with pytest.raises(UnsafeCacheError):
        fw.hub.hf_snapshot("org/evil")
    # a planted link among otherwise good files of a snapshot
    good = tmp_path / "fwhub" / "models--org--mixed" / "snapshots" / "main"
    good.mkdir(parents=True)
    (good / "config.json").write_text("{}")
    (good / "model.safetensors").write_bytes(b"x")
    os.symlink(str(secret), good / "tokenizer.json")
    with pytest.raises(UnsafeCacheError, match="tokenizer.json"):
        fw.hub.hf_snapshot("org/mixed")


def test_hf_repo_spec_validation():
    for bad in ["../x", "a/b/c", "org/na me", "org/x@../../y"]:
        with pytest.raises(ValueError):
            cache.parse_hf_repo(bad)
    assert cache.parse_hf_repo("org/x@v1.0") == ("org/x", "v1.0")


# ---------------------------------------------------------------- load_state_dict_from_url
def test_load_state_dict_from_url(srv, tmp_path):
    fw.save({"w": fw.to_tensor([1.0, 2.0])}, str(srv.root / "m.pdparams"))
    data = (srv.root / "m.pdparams").read_bytes()
    good = f"m-{hashlib.sha256(data).hexdigest()[:10]}.pdparams"
    (srv.root / good).write_bytes(data)
    sd = fw.hub.load_state_dict_from_url(f"{srv}/{good}")
    assert sd["w"].numpy().tolist() == [1.0, 2.0]
    assert os.path.isfile(os.path.join(fw.hub.get_dir(), "checkpoints", good))
    (srv.root / "m-deadbeef.pdparams").write_bytes(data)
    with pytest.raises(fw.hub.ChecksumError, match="expected deadbeef"):
        fw.hub.load_state_dict_from_url(f"{srv}/m-deadbeef.pdparams")
    with pytest.warns(UserWarning, match="without verification"):
        sd = fw.hub.load_state_dict_from_url(f"{srv}/m.pdparams", map_location="numpy")
    assert isinstance(sd["w"], np.ndarray)
    # a PyTorch checkpoint comes back marked, for the layout-aware loader
    write_torch_checkpoint(srv.root / "t.bin", {"weight": np.eye(2, dtype=np.float32)})
    with pytest.warns(UserWarning):
        sd = fw.hub.load_state_dict_from_url(f"{srv}/t.bin", check_hash=True)
    assert isinstance(sd, fw.hub.api.TorchStateDict)
    # Paddle's legacy format: a zip of one weights file
    with zipfile.ZipFile(srv.root / "legacy.zip", "w") as z:
        z.write(srv.root / "m.pdparams", "m.pdparams")
    sd = fw.hub.load_state_dict_from_url(f"{srv}/legacy.zip", check_hash=False,
                                         model_dir=str(tmp_path / "md"))
    assert sd["w"].numpy().tolist() == [1.0, 2.0]


def test_zoo_entry_point_registrations():
    # the contract: fw-vision and fw-hub's text models register their ZOO modules
    mods = dict(zoo._modules())
    assert mods.get("text") == "fw.hub.text._zoo"
    assert mods.get("vision") == "fw.vision.models._zoo"
    listing = fw.hub.list("builtin")  # whatever is installed lists without error
    assert listing == sorted(listing)


def test_hf_pytorch_bin_and_sharded_safetensors(srv, monkeypatch):
    from safetensors.numpy import save_file

    monkeypatch.setenv("HF_ENDPOINT", srv)
    # a PyTorch-only repository (no listing API): the .bin is fetched, read as torch
    d = srv.root / "org" / "pt" / "resolve" / "main"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    write_torch_checkpoint(d / "pytorch_model.bin", {"fc.weight": np.eye(2, dtype=np.float32)})
    snap = fw.hub.hf_snapshot("org/pt")
    sd = fw.hub.read_state_dict(os.path.join(snap, "pytorch_model.bin"))
    assert isinstance(sd, fw.hub.api.TorchStateDict)
    np.testing.assert_array_equal(sd["fc.weight"], np.eye(2))
    # sharded safetensors: the index names the shards
    d = srv.root / "org" / "big" / "resolve" / "main"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    save_file({"a": np.ones(2, np.float32)}, str(d / "model-00001-of-00002.safetensors"))
    save_file({"b": np.zeros(2, np.float32)}, str(d / "model-00002-of-00002.safetensors"))
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    snap = fw.hub.hf_snapshot("org/big")
    assert sorted(os.listdir(snap)) == ["config.json", "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors",
                                        "model.safetensors.index.json"]
    # an index naming a file outside the repository is refused
    d = srv.root / "org" / "evil" / "resolve" / "main"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "a": "../../../../etc/passwd"}}))
    with pytest.raises(ValueError, match="shard name"):
        fw.hub.hf_snapshot("org/evil")
