"""A physics-informed network for the 1-D Poisson equation.

Solve -u''(x) = f(x) on [0, 1] with u(0) = u(1) = 0 and f(x) = pi^2 sin(pi x),
whose exact solution is u(x) = sin(pi x). A small tanh MLP u_theta(x) (fw.nn) is
trained with fw.optimizer.Adam so that its second derivative, taken through the
network with ``fw.grad(create_graph=True)`` twice, satisfies the equation at
collocation points, plus a penalty on the boundary values. The loss therefore
contains second derivatives, and its gradient with respect to the weights
third-order ones: all from the same VJP rules. Everything runs in float64.

    PYTHONPATH=packages/fw-core/src:packages/fw-autograd/src:packages/fw-nn/src \\
        python examples/pde_poisson.py [--quick] [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import fw
import fw.nn as nn

PI = math.pi


def make_mlp(sizes):
    """Linear layers with tanh between them (a smooth network: u'' exists), float64."""
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers).to(dtype="float64")


def residual_loss(model, x_in, x_bd, boundary_weight=10.0):
    """mean((u'' + f)^2) at the interior points + weight * mean(u^2) on the boundary."""
    x = x_in.detach()
    x.stop_gradient = False
    u = model(x)
    (du,) = fw.grad(u.sum(), x, create_graph=True)
    (d2u,) = fw.grad(du.sum(), x, create_graph=True)
    f = (PI * PI) * fw.sin(x * PI)
    interior = fw.mean((d2u + f) ** 2)
    boundary = fw.mean(model(x_bd) ** 2)
    return interior + boundary_weight * boundary


def l2_error(model, n=201):
    """Relative L2 error of u_theta against sin(pi x) on n uniform points."""
    x = np.linspace(0, 1, n).reshape(-1, 1)
    with fw.no_grad():
        u = model(fw.to_tensor(x, dtype="float64")).numpy()
    exact = np.sin(PI * x)
    return float(np.sqrt(np.mean((u - exact) ** 2)) / np.sqrt(np.mean(exact ** 2)))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (300 steps)")
    ap.add_argument("--steps", type=int, default=None, help="default 2000 (quick: 300)")
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--width", type=int, default=20, help="hidden units per layer")
    ap.add_argument("--points", type=int, default=32, help="collocation points incl. ends")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def main(argv=None):
    """Train and return ``{"initial_error", "final_error", "losses", "seconds"}``."""
    args = parse_args(argv)
    steps = args.steps if args.steps is not None else (300 if args.quick else 2000)
    fw.seed(args.seed)
    model = make_mlp([1, args.width, args.width, 1])
    opt = fw.optimizer.Adam(learning_rate=args.lr, parameters=model.parameters())
    x_in = fw.to_tensor(np.linspace(0, 1, args.points)[1:-1].reshape(-1, 1), dtype="float64")
    x_bd = fw.to_tensor(np.array([[0.0], [1.0]]), dtype="float64")

    start_err = l2_error(model)
    print(f"relative L2 error vs sin(pi x) before training: {start_err:.3e}")
    every = max(steps // 8, 1)
    losses = []
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        loss = residual_loss(model, x_in, x_bd)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
        if step % every == 0 or step == 1:
            print(f"step {step:5d}  loss {losses[-1]:.3e}  L2 error {l2_error(model):.3e}")
    seconds = time.perf_counter() - t0
    err = l2_error(model)
    print(f"relative L2 error after {steps} steps ({seconds:.1f} s, "
          f"{1e3 * seconds / steps:.1f} ms/step): {err:.3e} ({start_err / err:.0f}x lower)")
    return {"initial_error": start_err, "final_error": err, "losses": losses,
            "seconds": seconds}


if __name__ == "__main__":
    main()
