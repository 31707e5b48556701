"""A short tour of strided: views that share memory, broadcasting, the device registry, the meta
device checking a product of matrices far larger than any machine, the linalg and fft extensions,
and autograd.

Run with ``make demo``.
"""

from __future__ import annotations

import time

import numpy as np

import strided as xp
from strided import autograd


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * (70 - len(title)))


section("1. Arrays are a buffer plus shape, strides (in elements) and an offset")
x = xp.reshape(xp.arange(12, dtype=xp.float32), (3, 4))
print("x =")
print(x)
print("x.shape", x.shape, " x.strides", x.strides, " x.offset", x.offset)

section("2. Views share memory: slicing, transposes, reshape write through")
v = x[1:, ::-2]  # rows 1.., every other column backwards
print("v = x[1:, ::-2] has strides", v.strides, "and offset", v.offset)
v[0, 0] = -100.0  # writes into x[1, 3]
print("after v[0, 0] = -100, x[1, 3] is", float(x[1, 3]))
t = x.mT
print("x.mT has strides", t.strides, "- no data moved")
flat = xp.reshape(x, (12,))
flat[0] = 42.0
print("reshape is a view when the layout allows it: x[0, 0] is now", float(x[0, 0]))
print("reshape of the transpose must copy; copy=False says so:")
try:
    xp.reshape(t, (12,), copy=False)
except ValueError as e:
    print("  ValueError:", e)

section("3. Broadcasting: stride-0 views, no copies")
row = xp.asarray([10.0, 20.0, 30.0, 40.0], dtype=xp.float32)
b = xp.broadcast_to(row, (3, 4))
print("broadcast_to(row, (3, 4)).strides =", b.strides)
print("x + row =")
print(x + row)
print("Python scalars take the array's dtype:", (x * 2).dtype, (x + 0.5).dtype)

section("4. Every operation is dispatched on (op, device)")
keys = xp.dispatch.registered()
devices = sorted({dev for _, dev in keys})
print(f"{len(keys)} registered kernels on devices {devices}")
print("e.g. ('matmul', 'cpu') registered:", ("matmul", "cpu") in keys)
print("the cpu kernels are numba code; NumPy only allocates and checks:")
a_np = np.random.default_rng(0).standard_normal((500, 400)).astype(np.float32)
a = xp.asarray(a_np)
err = float(xp.max(xp.abs(a @ a.mT - xp.asarray(a_np @ a_np.T))))
print(f"  max |strided - numpy| for a 500x400 @ 400x500 float32 matmul: {err:.2e}")
print(
    "  sum over axis 0 agrees:",
    np.allclose(np.asarray(xp.sum(a, axis=0)), a_np.sum(axis=0), rtol=1e-4),
)

section("5. The meta device: shapes and dtypes only, no memory, no compute")
start = time.perf_counter()
p = xp.ones((10**6, 2 * 10**6), device="meta")
q = xp.ones((2 * 10**6, 3 * 10**6), device="meta")
r = p @ q
elapsed = (time.perf_counter() - start) * 1e6
print(f"(10^6 x 2*10^6) @ (2*10^6 x 3*10^6) on meta -> {r.shape}, {r.dtype}, in {elapsed:.0f} us")
print(f"  that result would need {r.size * 8 / 2**40:,.0f} TiB on a real device")
print("  mistakes surface at once, naming the op and the shapes:")
try:
    p @ xp.ones((3 * 10**6, 5), device="meta")
except ValueError as e:
    print("  ValueError:", e)
print("  values cannot be read from meta:")
try:
    float(xp.sum(r))
except RuntimeError as e:
    print("  RuntimeError:", e)

section("6. The linalg and fft extensions, batched, on every device")
stack = xp.asarray(np.random.default_rng(1).standard_normal((4, 3, 3)))
u, s, vh = xp.linalg.svd(stack)
rebuilt = u @ (xp.expand_dims(s, axis=-1) * vh)
print("svd of a stack of 4 matrices rebuilds it:", bool(xp.all(xp.abs(rebuilt - stack) < 1e-12)))
signal = xp.sin(xp.linspace(0, 8 * xp.pi, 64, endpoint=False))
peak = int(xp.argmax(xp.abs(xp.fft.rfft(signal))))
print(f"the rfft of 4 periods of a sine peaks at frequency bin {peak}")
big = xp.linalg.eigh(xp.empty((100, 4096, 4096), device="meta"))
print(
    f"eigh of 100 matrices of 4096^2 on meta: values {big.eigenvalues.shape}, vectors "
    f"{big.eigenvectors.shape}"
)

section("7. Autograd: a tape, PyTorch's names, gradients on every device")
w = xp.asarray([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)
x = xp.asarray([1.0, 3.0])
loss = xp.sum(xp.tanh(w @ x) ** 2)
loss.backward()
print("d loss / d w =")
print(w.grad)
print("gradcheck of det(w) against central differences:", autograd.gradcheck(xp.linalg.det, [w]))
(g,) = autograd.grad(xp.sum(w**3), w, create_graph=True)
(h,) = autograd.grad(xp.sum(g), w)
print("second derivative of sum(w**3), summed: 6 * w =", np.asarray(h).tolist())
wm = xp.ones((12_288, 49_152), device="meta", requires_grad=True)
xm = xp.ones((2048, 12_288), device="meta")
xp.mean(xp.tanh(xm @ wm)).backward()
print(f"a GPT-3-sized layer on meta: grad {wm.grad.shape} {wm.grad.dtype}, no memory used")
