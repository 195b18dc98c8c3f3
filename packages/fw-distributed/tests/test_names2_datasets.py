"""PS datasets and fleet's data generators against files written here: the
MultiSlot text format byte for byte, a generator run as a dataset's pipe_command,
batches (dense and LoD slots), shuffles, and the errors that name file and line."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import fw.distributed as dist
from fw.distributed import fleet

# the generator runs in a fresh interpreter per file; it loads data_generator.py by
# path (the module needs only the standard library) instead of importing fw, whose
# import costs seconds per process on a loaded 2-core machine
GEN = textwrap.dedent("""
    import importlib.util
    spec = importlib.util.spec_from_file_location("data_generator", {module!r})
    dg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dg)

    class Gen(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                words = line.split()
                if not words:
                    return
                ids = [int(w) for w in words[1:]]
                yield [("ids", ids), ("label", [float(words[0])])]
            return it

    Gen().run_from_stdin()
""")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def test_generators_write_the_multislot_format(capsys):
    class Gen(fleet.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                for i in range(3):
                    yield [("ids", [i, i + 10]), ("w", [i] if i < 2 else [0.25])]
            return it

        def generate_batch(self, samples):     # batch-level work sees whole batches
            def it():
                for s in samples:
                    yield s + [("n", [len(samples)])]
            return it

    g = Gen()
    g.set_batch(2)
    g.run_from_memory()
    assert capsys.readouterr().out == "2 0 10 1 0 1 2\n2 1 11 1 1 1 2\n2 2 12 1 0.25 1 1\n"
    assert g._proto_info == [("ids", "uint64"), ("w", "float"), ("n", "uint64")]
    s = fleet.MultiSlotStringDataGenerator()
    assert s._gen_str([("q", ["a", "bc"]), ("t", ["x"])]) == "2 a bc 1 x\n"
    with pytest.raises(ValueError, match="slot 'q' is empty"):
        fleet.MultiSlotDataGenerator()._gen_str([("q", [])])
    g2 = fleet.MultiSlotDataGenerator()
    g2._gen_str([("a", [1])])
    with pytest.raises(ValueError, match="slot 0 is 'b' but was 'a'"):
        g2._gen_str([("b", [1])])
    with pytest.raises(ValueError, match="values must be int or float"):
        fleet.MultiSlotDataGenerator()._gen_str([("a", ["1"])])
    with pytest.raises(ValueError, match="without spaces"):
        s._gen_str([("q", ["a b"])])


def test_queue_dataset_through_a_generator_pipe(tmp_path):
    import fw
    from fw.distributed.fleet import data_generator

    gen = _write(tmp_path / "gen.py", GEN.format(module=data_generator.__file__))
    raw = [_write(tmp_path / "raw0.txt", "1 5 6 7\n0 8\n"),
           _write(tmp_path / "raw1.txt", "1 9 9\n")]
    ds = dist.QueueDataset()
    ds.init(batch_size=2, use_var=[("ids", "int64"), ("label", "float32")],
            pipe_command=f"{sys.executable} {gen}")
    ds.set_filelist(raw)
    batches = list(ds)
    assert len(batches) == 2
    values, offsets = batches[0]["ids"]             # lengths 3 and 1: LoD form
    assert values.tolist() == [5, 6, 7, 8] and offsets == [0, 3, 4]
    assert batches[0]["label"].tolist() == [[1.0], [0.0]]
    assert batches[1]["ids"].numpy().tolist() == [[9, 9]]     # one sample: dense
    assert batches[1]["ids"].dtype == fw.int64
    assert len(list(ds)) == 2                        # a queue dataset reads again


def test_in_memory_dataset_load_shuffle_and_sizes(tmp_path):
    lines = "".join(f"2 {i} {i + 100} 1 {i}.5\n" for i in range(10))
    ds = dist.InMemoryDataset()
    ds.init(batch_size=4, use_var=[("ids", "int64"), ("y", "float32")], drop_last=True)
    ds.set_filelist([_write(tmp_path / "d.txt", lines)])
    ds.load_into_memory()
    assert ds.get_memory_data_size() == 10
    first = [b["ids"].numpy() for b in ds]
    assert [a.shape for a in first] == [(4, 2), (4, 2)]    # drop_last: 10 -> 2 batches
    np.testing.assert_array_equal(first[0][:, 1] - first[0][:, 0], 100)
    ds.local_shuffle()
    ds.update_settings(batch_size=10, drop_last=False)
    b = next(iter(ds))
    got = b["ids"].numpy()
    assert sorted(got[:, 0].tolist()) == list(range(10)) and got[:, 0].tolist() != list(range(10))
    np.testing.assert_array_equal(got[:, 1] - got[:, 0], 100)         # samples stay whole
    np.testing.assert_allclose(b["y"].numpy()[:, 0], got[:, 0] + 0.5)
    ds.slots_shuffle(["y"])
    b = next(iter(ds))
    np.testing.assert_array_equal(b["ids"].numpy(), got)           # other slots untouched
    assert sorted(b["y"].numpy()[:, 0].tolist()) == [i + 0.5 for i in range(10)]
    ds.release_memory()
    with pytest.raises(RuntimeError, match="load_into_memory"):
        iter(ds)


def test_use_var_takes_static_data_variables(tmp_path):
    import fw

    prog = fw.static.Program()
    with fw.static.program_guard(prog):
        ids = fw.static.data("ids", [None, 1], "int64")
        y = fw.static.data("y", [None, 1], "float32")
    ds = dist.QueueDataset()
    ds.init(batch_size=2, use_var=[ids, y])
    ds.set_filelist([_write(tmp_path / "v.txt", "1 4 1 0.5\n1 5 1 1.5\n")])
    b = next(iter(ds))
    assert b["ids"].dtype == fw.int64 and b["ids"].tolist() == [[4], [5]]
    assert b["y"].dtype == fw.float32 and b["y"].tolist() == [[0.5], [1.5]]


def test_dataset_errors_name_file_and_line(tmp_path):
    ds = dist.InMemoryDataset()
    ds.init(use_var=[("ids", "int64"), ("y", "float32")])
    bad = _write(tmp_path / "bad.txt", "1 3 1 0.5\n2 4 1 0.5\n")
    ds.set_filelist([bad])
    with pytest.raises(ValueError, match=r"bad.txt:2: not a MultiSlot line"):
        ds.load_into_memory()
    ds.set_filelist([_write(tmp_path / "extra.txt", "1 3 1 0.5 9\n")])
    with pytest.raises(ValueError, match=r"extra.txt:1: 1 values left over"):
        ds.load_into_memory()
    ds.set_filelist([str(tmp_path / "missing.txt")])
    with pytest.raises(FileNotFoundError, match="missing.txt does not exist"):
        ds.load_into_memory()
    ds.update_settings(pipe_command="exit 3")
    ds.set_filelist([bad])
    with pytest.raises(RuntimeError, match="exited with status 3"):
        ds.load_into_memory()
    with pytest.raises(TypeError, match="dtype float16"):
        ds.init(use_var=[("h", "float16")])
    with pytest.raises(NotImplementedError, match="HDFS"):
        ds.init(fs_name="hdfs://x")
    with pytest.raises(TypeError, match=r"unknown settings \['batchsize'\]"):
        ds.init(batchsize=3)


def test_pipe_command_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("FW_DATASET_PIPE_TIMEOUT", "0.5")
    ds = dist.QueueDataset()
    ds.init(use_var=[("ids", "int64")], pipe_command="sleep 5")
    ds.set_filelist([_write(tmp_path / "a.txt", "1 1\n")])
    with pytest.raises(TimeoutError, match="ran over 0.5 s"):
        list(ds)
