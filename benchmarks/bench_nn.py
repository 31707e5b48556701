"""strided.nn's convolutions and pooling against PyTorch CPU, measured in one process.

Cases (forward + backward unless noted; weights require grad, the input batch does not):

* two 3x3 convolutions (3->32, 32->32, padding 1, bias) over a 64x3x32x32 batch, then ``sum``;
  the forward alone too;
* a training step of a small digits CNN on 8x8 images, batch 64: conv 1->16 3x3 pad 1, relu,
  max_pool 2, conv 16->32 3x3 pad 1, relu, max_pool 2, linear 128->10, cross-entropy, backward,
  an SGD update of every parameter;
* an MLP training step (batch 64, 784 -> 256 -> 10, ReLU, cross-entropy, SGD with momentum)
  with each library's layers, loss and optimizer;
* 2x2 max pooling and 3x3/stride-2 average pooling of 64x32x32x32.

Targets (issue 10): conv fwd+bwd, the digits step and the MLP step take at most 1.5x PyTorch's
time.  Every
case's result is checked against PyTorch once, so a broken kernel cannot look fast.  Both
libraries use every core; on a shared machine the figures are noisy: compare the ratios of
several runs.  (BLAS note: the project's machines set OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE, which
slow OpenBLAS's float32 GEMM; unset both for this command only to see the hardware's figures.)

With ``--threads 1`` both libraries run on one thread (numba, OpenBLAS and PyTorch) and the
figures are CPU time: on a machine shared with other work this is the steadier comparison,
since every library's thread pool otherwise waits for cores it does not get (OpenBLAS's
spinning threads most of all).

    python benchmarks/bench_nn.py [--repeat N] [--dtype float32|float64] [--threads N]
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_nn.py --threads 1

Measured on the 2-core development machine under other agents' load (load average 4-6; float32,
--threads 1, BLAS variables as the machine sets them, three runs each, ratio = strided /
PyTorch): conv fwd+bwd 0.95-1.40 (strided 51-58 ms; PyTorch's own time varied from 30 to 56
ms between runs), forward alone 0.74-1.94, digits step 1.32-1.42 (1.39-1.43 ms against
1.0), MLP step 1.20-1.23, max_pool2d 0.55-0.63, avg_pool2d 1.16-1.21.  Before the small-image
and Winograd convolution kernels, in the same runs: conv 1.42-1.91, digits 1.87-2.05.  Per
primitive (64x32x32x32, 32->32, one thread): forward 13-15 ms, input gradient 13.6, weight
gradient 12-13.5 against PyTorch's ~6.3/6.0/6.7 (oneDNN with AVX-512; strided's products are
OpenBLAS float32 GEMM under OPENBLAS_CORETYPE=Haswell).  With both libraries' default threads
a busy machine gave ratios anywhere from 0.4 to 18 before the BLAS thread policy
(``strided/backends/cpu/_blas_threads.py``: the kernels' own products run on one BLAS thread).
What is left of that noise is numba's OpenMP pool, not BLAS: on the same machine (load 4 on 2
cores) the digits step took 1.4 ms with NUMBA_NUM_THREADS=1 and BLAS at its default 2
threads, but 32-64 ms with numba's 2 OpenMP threads (their active spin-wait; every prange
region of the elementwise kernels waits for a core), 1.5-1.8 ms with OMP_WAIT_POLICY=PASSIVE
and 1.8 ms with NUMBA_THREADING_LAYER=workqueue.  On a shared machine use --threads 1, or set
OMP_WAIT_POLICY=PASSIVE.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _threads_from_argv() -> None:
    # thread pools read their size when the libraries load: set it before importing them
    if "--threads" in sys.argv:
        n = sys.argv[sys.argv.index("--threads") + 1]
        for var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ[var] = n


_threads_from_argv()

import torch  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import strided as xp  # noqa: E402
import strided.nn as nn  # noqa: E402
import strided.nn.functional as F  # noqa: E402

CLOCK = time.perf_counter  # process CPU time with --threads 1 (see main)


def median_time(fn, repeat: int) -> float:
    """Median time of ``repeat`` calls (seconds), after two warm-up calls (numba compiles or
    loads from its cache, BLAS spins up its threads)."""
    fn()
    fn()
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return statistics.median(times)


def _close(got, want, what: str, rtol: float) -> None:
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else want
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol, err_msg=what)


def _pair(a: np.ndarray, grad: bool):
    return xp.asarray(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def conv_case(rng, dtype, rtol):
    x = rng.standard_normal((64, 3, 32, 32)).astype(dtype)
    arrays = [
        rng.standard_normal(s).astype(dtype) * 0.2
        for s in ((32, 3, 3, 3), (32,), (32, 32, 3, 3), (32,))
    ]
    sx, tx = _pair(x, False)
    sp, tp = zip(*(_pair(a, True) for a in arrays))

    def run_s(backward=True):
        w1, b1, w2, b2 = sp
        y = F.conv2d(F.conv2d(sx, w1, b1, padding=1), w2, b2, padding=1)
        if backward:
            xp.sum(y).backward()
        return y

    def run_t(backward=True):
        w1, b1, w2, b2 = tp
        y = TF.conv2d(TF.conv2d(tx, w1, b1, padding=1), w2, b2, padding=1)
        if backward:
            y.sum().backward()
        return y

    _close(run_s(), run_t(), "conv forward", rtol)
    for a, b in zip(sp, tp):
        _close(a.grad, b.grad, "conv gradient", rtol * 10)

    def fwd_s():
        with xp.autograd.no_grad():
            run_s(False)

    def fwd_t():
        with torch.no_grad():
            run_t(False)

    yield "conv2d 64x3x32x32 3->32->32 fwd+bwd", run_s, run_t
    yield "conv2d 64x3x32x32 3->32->32 fwd", fwd_s, fwd_t


def _cross_entropy_s(logits, labels, onehot):
    if hasattr(F, "cross_entropy"):
        return F.cross_entropy(logits, labels)
    # until nn.functional has it: the mean negative log-softmax at the labels
    return -xp.mean(xp.sum(F.log_softmax(logits, dim=1) * onehot, axis=1))


def digits_case(rng, dtype, rtol):
    x = rng.standard_normal((64, 1, 8, 8)).astype(dtype)
    labels = rng.integers(0, 10, 64)
    onehot = np.eye(10, dtype=dtype)[labels]
    shapes = ((16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (10, 128), (10,))
    arrays = [rng.standard_normal(s).astype(dtype) * 0.3 for s in shapes]
    sx, tx = xp.asarray(x), torch.tensor(x)
    s_oh, s_lab, t_lab = xp.asarray(onehot), xp.asarray(labels), torch.tensor(labels)
    sp = [xp.asarray(a, requires_grad=True) for a in arrays]
    tp = [torch.tensor(a, requires_grad=True) for a in arrays]
    lr = 0.01

    def step_s(update=True):
        w1, b1, w2, b2, w3, b3 = sp
        h = F.max_pool2d(F.relu(F.conv2d(sx, w1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
        logits = F.linear(xp.reshape(h, (64, 128)), w3, b3)
        loss = _cross_entropy_s(logits, s_lab, s_oh)
        for p in sp:
            p.grad = None
        loss.backward()
        if update:
            with xp.autograd.no_grad():
                for p in sp:
                    p -= lr * p.grad
        return loss

    def step_t(update=True):
        w1, b1, w2, b2, w3, b3 = tp
        h = TF.max_pool2d(TF.relu(TF.conv2d(tx, w1, b1, padding=1)), 2)
        h = TF.max_pool2d(TF.relu(TF.conv2d(h, w2, b2, padding=1)), 2)
        logits = TF.linear(h.reshape(64, 128), w3, b3)
        loss = TF.cross_entropy(logits, t_lab)
        for p in tp:
            p.grad = None
        loss.backward()
        if update:
            with torch.no_grad():
                for p in tp:
                    p -= lr * p.grad
        return loss

    _close(step_s(False), step_t(False), "digits loss", rtol)
    for a, b in zip(sp, tp):
        _close(a.grad, b.grad, "digits gradient", rtol * 10)
    yield "digits CNN train step (batch 64, 8x8)", step_s, step_t


def mlp_case(rng, dtype, rtol):
    """An MLP training step with the layers, loss and optimizer of both libraries: batch 64,
    784 -> 256 -> 10, ReLU, cross-entropy, SGD with momentum."""
    from strided import optim

    x = rng.standard_normal((64, 784)).astype(dtype)
    labels = rng.integers(0, 10, 64)
    model_t = torch.nn.Sequential(
        torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)
    ).to(getattr(torch, np.dtype(dtype).name))
    model_s = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    model_s.to(dtype=getattr(xp, np.dtype(dtype).name))
    model_s.load_state_dict({k: xp.asarray(v.detach().numpy()) for k, v in
                             model_t.state_dict().items()})  # fmt: skip
    opt_s = optim.SGD(model_s.parameters(), lr=0.01, momentum=0.9)
    opt_t = torch.optim.SGD(model_t.parameters(), lr=0.01, momentum=0.9)
    sx, s_lab = xp.asarray(x), xp.asarray(labels)
    tx, t_lab = torch.tensor(x), torch.tensor(labels)

    def step_s():
        loss = F.cross_entropy(model_s(sx), s_lab)
        opt_s.zero_grad()
        loss.backward()
        opt_s.step()
        return loss

    def step_t():
        loss = TF.cross_entropy(model_t(tx), t_lab)
        opt_t.zero_grad()
        loss.backward()
        opt_t.step()
        return loss

    _close(step_s(), step_t(), "MLP loss", rtol)
    _close(step_s(), step_t(), "MLP loss after a step", rtol * 10)
    yield "MLP train step (64x784 -> 256 -> 10, SGD)", step_s, step_t


def pool_case(rng, dtype, rtol):
    x = rng.standard_normal((64, 32, 32, 32)).astype(dtype)
    sx, tx = _pair(x, True)

    def max_s():
        xp.sum(F.max_pool2d(sx, 2)).backward()

    def max_t():
        TF.max_pool2d(tx, 2).sum().backward()

    def avg_s():
        xp.sum(F.avg_pool2d(sx, 3, 2, 1)).backward()

    def avg_t():
        TF.avg_pool2d(tx, 3, 2, 1).sum().backward()

    _close(F.max_pool2d(sx, 2), TF.max_pool2d(tx, 2), "max_pool2d", rtol)
    _close(F.avg_pool2d(sx, 3, 2, 1), TF.avg_pool2d(tx, 3, 2, 1), "avg_pool2d", rtol)
    yield "max_pool2d 2x2 64x32x32x32 fwd+bwd", max_s, max_t
    yield "avg_pool2d 3x3/2 pad 1 64x32x32x32 fwd+bwd", avg_s, avg_t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--threads", type=int, default=None, help="threads of every library")
    args = parser.parse_args()
    global CLOCK
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.threads == 1:
        # one thread each: CPU time is the work done, whatever else the machine runs
        CLOCK = time.process_time
    dtype = np.dtype(args.dtype)
    rtol = 2e-3 if dtype == np.float32 else 1e-9
    rng = np.random.default_rng(0)
    clock = "CPU" if CLOCK is time.process_time else "wall"
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; dtype {dtype.name}; "
        f"{clock} time, median of {args.repeat}"
    )
    print(f"{'case':<46} {'strided ms':>11} {'torch ms':>9} {'ratio':>6}")
    for case in (conv_case, digits_case, mlp_case, pool_case):
        for name, fs, ft in case(rng, dtype, rtol):
            ts, tt = median_time(fs, args.repeat), median_time(ft, args.repeat)
            print(f"{name:<46} {ts * 1e3:11.2f} {tt * 1e3:9.2f} {ts / tt:6.2f}")


if __name__ == "__main__":
    main()
