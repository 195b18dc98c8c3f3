"""Record PyTorch's NAdam, RAdam, Rprop and LBFGS trajectories on small deterministic
problems into fixtures/optimizer_torch.json; test_optimizer_parity.py replays them with
fw. Run once with a Python that has PyTorch (CI never needs it):

    /path/to/torch-venv/bin/python packages/fw-nn/tests/gen_optimizer_fixture.py

The problems: least squares ``|A w + b - y|^2 / n`` (float64, fixed data from a seeded
NumPy generator) and the 2-D Rosenbrock function for LBFGS.
"""

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def problem():
    rng = np.random.default_rng(1234)
    A = rng.standard_normal((16, 5))
    y = rng.standard_normal(16)
    w0 = rng.standard_normal(5) * 0.5
    b0 = np.array([0.3])
    return A, y, w0, b0


CONFIGS = {
    "nadam": [{"lr": 0.05}, {"lr": 0.02, "betas": [0.8, 0.99], "eps": 1e-6,
                             "momentum_decay": 0.01}],
    "radam": [{"lr": 0.05}, {"lr": 0.01, "betas": [0.85, 0.95], "eps": 1e-6}],
    "rprop": [{"lr": 0.01}, {"lr": 0.05, "etas": [0.3, 1.5], "step_sizes": [1e-3, 0.2]}],
}


def main():
    import torch

    torch.set_default_dtype(torch.float64)
    A, y, w0, b0 = problem()
    At, yt = torch.tensor(A), torch.tensor(y)
    out = {"torch_version": torch.__version__, "problem": {"A": A.tolist(), "y": y.tolist(),
                                                           "w0": w0.tolist(),
                                                           "b0": b0.tolist()},
           "runs": []}
    cls = {"nadam": torch.optim.NAdam, "radam": torch.optim.RAdam, "rprop": torch.optim.Rprop}
    for name, cfgs in CONFIGS.items():
        for cfg in cfgs:
            w = torch.tensor(w0, requires_grad=True)
            b = torch.tensor(b0, requires_grad=True)
            opt = cls[name]([w, b], **cfg)
            traj = []
            for _ in range(12):
                opt.zero_grad()
                loss = ((At @ w + b - yt) ** 2).mean()
                loss.backward()
                opt.step()
                traj.append(w.detach().numpy().tolist() + b.detach().numpy().tolist())
            out["runs"].append({"opt": name, "cfg": cfg, "trajectory": traj})
    # LBFGS: Rosenbrock from (-1.2, 1), with and without the line search
    for cfg in [{"lr": 1.0, "max_iter": 20, "history_size": 10,
                 "line_search_fn": "strong_wolfe"},
                {"lr": 0.05, "max_iter": 10, "history_size": 5},
                {"lr": 1.0, "max_iter": 5, "history_size": 3,
                 "line_search_fn": "strong_wolfe"}]:
        x = torch.tensor([-1.2, 1.0], requires_grad=True)
        opt = torch.optim.LBFGS([x], **cfg)

        def closure(opt=opt, x=x):
            opt.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss

        traj, losses = [], []
        for _ in range(4):
            losses.append(float(opt.step(closure)))
            traj.append(x.detach().numpy().tolist())
        st = opt.state[opt._params[0]]
        out["runs"].append({"opt": "lbfgs", "cfg": cfg, "trajectory": traj, "losses": losses,
                            "func_evals": st["func_evals"], "n_iter": st["n_iter"]})
    path = HERE / "fixtures" / "optimizer_torch.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=0) + "\n")
    print(f"wrote {len(out['runs'])} runs to {path}")


if __name__ == "__main__":
    main()
