"""A physics-informed network for the 1-D Poisson equation.

Solve -u''(x) = f(x) on [0, 1] with u(0) = u(1) = 0 and f(x) = pi^2 sin(pi x),
whose exact solution is u(x) = sin(pi x). A small MLP u_theta(x) is trained so
that its second derivative (taken through the network with
``fw.grad(create_graph=True)``, twice) satisfies the equation at collocation
points, plus a penalty on the boundary values. The loss therefore contains
second derivatives, and its gradient with respect to the weights third-order
ones: all from the same VJP rules.

fw.nn does not exist yet: the MLP is raw fw tensors (stop_gradient=False) and the
optimiser a hand-written Adam. Run:

    PYTHONPATH=packages/fw-core/src:packages/fw-autograd/src python examples/pde_poisson.py
"""

from __future__ import annotations

import math
import time

import numpy as np

import fw

PI = math.pi


def init_mlp(sizes, rng):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * math.sqrt(2.0 / (fan_in + fan_out))
        params.append(fw.to_tensor(w, dtype="float64", stop_gradient=False))
        params.append(fw.to_tensor(np.zeros(fan_out), dtype="float64", stop_gradient=False))
    return params


def mlp(params, x):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = fw.tanh(fw.matmul(h, params[i]) + params[i + 1])
    return fw.matmul(h, params[-2]) + params[-1]


def residual_loss(params, x_in, x_bd):
    """mean((u'' + f)^2) inside + mean(u^2) on the boundary."""
    x = x_in.detach()
    x.stop_gradient = False
    u = mlp(params, x)
    (du,) = fw.grad(u.sum(), x, create_graph=True)
    (d2u,) = fw.grad(du.sum(), x, create_graph=True)
    f = (PI * PI) * fw.sin(x * PI)
    interior = fw.mean((d2u + f) ** 2)
    boundary = fw.mean(mlp(params, x_bd) ** 2)
    return interior + 10.0 * boundary


class Adam:
    def __init__(self, params, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        self.params, self.lr, self.b1, self.b2, self.eps = params, lr, b1, b2, eps
        self.m = [np.zeros(p.shape) for p in params]
        self.v = [np.zeros(p.shape) for p in params]
        self.t = 0

    def step(self):
        self.t += 1
        for p, m, v in zip(self.params, self.m, self.v):
            g = p.grad.numpy()
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            mh = m / (1 - self.b1 ** self.t)
            vh = v / (1 - self.b2 ** self.t)
            p.set_value(p.numpy() - self.lr * mh / (np.sqrt(vh) + self.eps))
            p.clear_grad()


def l2_error(params, n=201):
    x = np.linspace(0, 1, n).reshape(-1, 1)
    with fw.no_grad():
        u = mlp(params, fw.to_tensor(x, dtype="float64")).numpy()
    exact = np.sin(PI * x)
    return float(np.sqrt(np.mean((u - exact) ** 2)) / np.sqrt(np.mean(exact ** 2)))


def main(steps=1500, seed=0):
    rng = np.random.default_rng(seed)
    params = init_mlp([1, 20, 20, 1], rng)
    opt = Adam(params, lr=5e-3)
    x_in = fw.to_tensor(np.linspace(0, 1, 32)[1:-1].reshape(-1, 1), dtype="float64")
    x_bd = fw.to_tensor(np.array([[0.0], [1.0]]), dtype="float64")
    start_err = l2_error(params)
    print(f"relative L2 error vs sin(pi x) before training: {start_err:.3e}")
    t0 = time.time()
    for step in range(1, steps + 1):
        loss = residual_loss(params, x_in, x_bd)
        loss.backward()
        opt.step()
        if step % 250 == 0 or step == 1:
            print(f"step {step:5d}  loss {float(loss):.3e}  L2 error {l2_error(params):.3e}")
    err = l2_error(params)
    print(f"relative L2 error after {steps} steps ({time.time() - t0:.1f} s): {err:.3e}")
    return start_err, err


if __name__ == "__main__":
    main()
