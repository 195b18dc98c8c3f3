"""Distillation: the soft-label loss and its gradient against NumPy, feature
losses with a learned adapter, a Distiller in a plain loop and in fw.Model.fit."""

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.slim as slim


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _kd_ref(s, t, temp):
    ps, pt = _softmax(s / temp), _softmax(t / temp)
    return (temp ** 2) * (pt * (np.log(pt) - np.log(ps))).sum(-1)


@pytest.mark.parametrize("temp", [1.0, 4.0])
def test_soft_label_loss_and_gradient(temp):
    rng = np.random.default_rng(0)
    s = rng.standard_normal((5, 7)) * 3
    t = rng.standard_normal((5, 7)) * 3
    st = fw.to_tensor(s.astype("float64"), stop_gradient=False)
    tt = fw.to_tensor(t.astype("float64"), stop_gradient=False)
    loss = slim.soft_label_loss(st, tt, temperature=temp)
    np.testing.assert_allclose(loss.numpy(), _kd_ref(s, t, temp).mean(), rtol=1e-10)
    loss.backward()
    # d/ds T^2 KL(pt || ps(s/T)) = T (ps - pt), per row; mean over 5 rows
    want = temp * (_softmax(s / temp) - _softmax(t / temp)) / 5
    np.testing.assert_allclose(st.grad.numpy(), want, rtol=1e-8, atol=1e-12)
    assert tt.grad is None or np.all(tt.grad.numpy() == 0)  # the teacher gets none
    # finite differences in one random direction
    d = rng.standard_normal(s.shape)
    eps = 1e-6
    fd = (_kd_ref(s + eps * d, t, temp).mean() - _kd_ref(s - eps * d, t, temp).mean()) / (2 * eps)
    assert float((st.grad.numpy() * d).sum()) == pytest.approx(fd, rel=1e-5)
    none = slim.soft_label_loss(fw.to_tensor(s), fw.to_tensor(t), temp, reduction="none")
    np.testing.assert_allclose(none.numpy(), _kd_ref(s, t, temp), rtol=1e-10)
    same = slim.soft_label_loss(fw.to_tensor(s), fw.to_tensor(s), temp)
    assert abs(float(same.numpy())) < 1e-12


def test_soft_label_loss_errors():
    a, b = fw.ones([2, 3]), fw.ones([2, 4])
    with pytest.raises(ValueError, match=r"soft_label_loss: student logits \[2, 3\] and teacher "
                                         r"logits \[2, 4\]"):
        slim.soft_label_loss(a, b)
    with pytest.raises(ValueError, match="'temperature' must be > 0"):
        slim.soft_label_loss(a, a, 0.0)


def test_feature_loss_with_adapter():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((2, 3, 4, 4)).astype("float32")
    t = rng.standard_normal((2, 5, 4, 4)).astype("float32")
    fw.seed(0)
    ad = slim.FeatureAdapter(3, 5)
    got = slim.feature_loss(fw.to_tensor(s), fw.to_tensor(t), ad)
    w = ad.proj.weight.numpy()[:, :, 0, 0]
    b = ad.proj.bias.numpy()
    proj = np.einsum("oc,nchw->nohw", w, s) + b[None, :, None, None]
    np.testing.assert_allclose(got.numpy(), ((proj - t) ** 2).mean(), rtol=1e-5)
    got.backward()
    assert ad.proj.weight.grad is not None and np.abs(ad.proj.weight.grad.numpy()).sum() > 0
    l1 = slim.feature_loss(fw.to_tensor(t), fw.to_tensor(t * 0.5), loss="l1")
    np.testing.assert_allclose(l1.numpy(), np.abs(t * 0.5).mean(), rtol=1e-5)
    cos = slim.feature_loss(fw.to_tensor(t), fw.to_tensor(2 * t), loss="cosine")
    assert abs(float(cos.numpy())) < 1e-5
    with pytest.raises(ValueError, match="differ in shape.*FeatureAdapter"):
        slim.feature_loss(fw.to_tensor(s), fw.to_tensor(t))


def _mlp(width, seed):
    fw.seed(seed)
    return nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, 3))


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0.5).astype("int64")
    return x, y


def test_distiller_in_a_loop_moves_student_to_teacher():
    teacher, student = _mlp(32, 0), _mlp(6, 1)
    x, _ = _data()
    xt = fw.to_tensor(x)
    distiller = slim.Distiller(teacher, student, features={"0": "0"}, adapters=True, sample=xt)
    assert list(distiller.adapters.keys()) == ["0"]
    # the teacher is frozen and not the distiller's: the optimizer sees student + adapter
    n_student = len(student.parameters()) + 2
    assert len(distiller.parameters()) == n_student
    loss_fn = slim.DistillLoss(distiller, temperature=2.0, alpha=1.0, beta=0.5, hard_loss=None)
    opt = fw.optimizer.Adam(learning_rate=0.01, parameters=distiller.parameters())
    t_logits = teacher(xt).numpy()
    t_w = teacher[0].weight.numpy().copy()

    def gap():
        return float(np.mean(_kd_ref(student(xt).numpy(), t_logits, 2.0)))

    g0 = gap()
    distiller.train()
    assert not teacher.training
    for _ in range(30):
        loss = loss_fn(distiller(xt))
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert gap() < 0.5 * g0
    np.testing.assert_array_equal(teacher[0].weight.numpy(), t_w)
    distiller.remove_hooks()
    distiller.student_features.clear()
    student(xt)
    assert distiller.student_features == {}


def test_distill_in_model_fit():
    teacher, student = _mlp(32, 2), _mlp(6, 3)
    x, y = _data(128, 1)
    # a teacher that knows the task: a few steps of plain training
    topt = fw.optimizer.Adam(learning_rate=0.02, parameters=teacher.parameters())
    for _ in range(60):
        loss = nn.functional.cross_entropy(teacher(fw.to_tensor(x)), fw.to_tensor(y))
        loss.backward()
        topt.step()
        topt.clear_grad()
    distiller = slim.Distiller(teacher, student)
    model = fw.Model(distiller)
    opt = fw.optimizer.Adam(learning_rate=0.02, parameters=distiller.parameters())
    model.prepare(opt, slim.DistillLoss(distiller, temperature=4.0, alpha=0.7),
                  fw.metric.Accuracy())
    ds = fw.io.TensorDataset([fw.to_tensor(x), fw.to_tensor(y[:, None])])
    before = model.evaluate(ds, batch_size=32, verbose=0)
    model.fit(ds, epochs=4, batch_size=32, verbose=0)
    after = model.evaluate(ds, batch_size=32, verbose=0)
    assert after["loss"][0] < before["loss"][0]
    assert after["acc"] > before["acc"]
    # the Model's predictions are the student's
    (pred,) = model.predict_batch([x[:4]])
    np.testing.assert_allclose(pred, student(fw.to_tensor(x[:4])).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="call the Distiller"):
        slim.DistillLoss(slim.Distiller(teacher, _mlp(4, 5)))(fw.ones([1, 3]))


def test_distill_step_to_static_equals_eager():
    """A whole distillation step (soft-label + feature loss through an adapter)
    converted by fw.jit.to_static gives the eager losses and weights."""
    import fw.jit

    def setup():
        fw.seed(0)
        teacher = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        student = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 3))
        d = slim.Distiller(teacher, student, features={"0": "0"},
                           adapters={"0": slim.FeatureAdapter(4, 16, "linear")})
        loss_fn = slim.DistillLoss(d, temperature=2.0, alpha=0.5, beta=0.1)
        opt = fw.optimizer.Adam(learning_rate=0.01, parameters=d.parameters())

        def step(x, y):
            loss = loss_fn(d(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss

        return d, step

    rng = np.random.default_rng(0)
    batches = [(fw.to_tensor(rng.standard_normal((16, 8)).astype("float32")),
                fw.to_tensor(rng.integers(0, 3, 16))) for _ in range(3)]
    d1, eager = setup()
    d2, step = setup()
    static = fw.jit.to_static(step)
    t_w = d2.teacher[0].weight.numpy().copy()
    for x, y in batches:
        le, ls = eager(x, y), static(x, y)
        np.testing.assert_allclose(ls.numpy(), le.numpy(), rtol=1e-5)
    for (k, a), (_, b) in zip(d1.named_parameters(), d2.named_parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-6, err_msg=k)
    np.testing.assert_array_equal(d2.teacher[0].weight.numpy(), t_w)
