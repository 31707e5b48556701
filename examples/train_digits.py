"""Train a small CNN (and an MLP) on scikit-learn's bundled digits with strided.nn.

Real data, offline: the 1797 8x8 images of ``sklearn.datasets.load_digits``, split 80/20 by a
fixed seed.  The loop is PyTorch's, with the imports changed::

    python examples/train_digits.py                 # the CNN, then the MLP
    python examples/train_digits.py --model cnn --epochs 30 --out runs/

It prints a tqdm progress bar with the loss and accuracy, saves a matplotlib plot of the
curves and a safetensors checkpoint, reloads the checkpoint into a fresh model and checks that
it scores the same held-out accuracy.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import strided as xp
import strided.nn as nn
import strided.nn.functional as F
from strided import optim
from strided.utils.data import DataLoader, TensorDataset


def cnn() -> nn.Module:
    """Two 3x3 convolutions with max pooling, then a linear classifier."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 8x8 -> 4x4
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def mlp() -> nn.Module:
    """One hidden layer of 128 units."""
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


MODELS = {"cnn": cnn, "mlp": mlp}


def digits(seed: int = 0):
    """(train, test) TensorDatasets: images (N, 1, 8, 8) float32 in [0, 1], labels int64."""
    data = load_digits()
    images = (data.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    cut = int(0.8 * len(labels))
    train, test = order[:cut], order[cut:]
    return (
        TensorDataset(xp.asarray(images[train]), xp.asarray(labels[train])),
        TensorDataset(xp.asarray(images[test]), xp.asarray(labels[test])),
    )


def accuracy(model: nn.Module, dataset: TensorDataset) -> float:
    """Fraction of ``dataset`` classified correctly (eval mode, no recording)."""
    model.eval()
    correct = 0
    with xp.autograd.no_grad():
        for images, labels in DataLoader(dataset, batch_size=512):
            predicted = xp.argmax(model(images), axis=1)
            correct += int(xp.count_nonzero(predicted == labels))
    model.train()
    return correct / len(dataset)


def train(name: str, epochs: int, lr: float, batch_size: int, seed: int, out: pathlib.Path):
    """Train model ``name``; returns (held-out accuracy, history, seconds)."""
    xp.random.manual_seed(seed)
    train_set, test_set = digits(seed)
    model = MODELS[name]()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=seed)
    history = {"loss": [], "train_acc": [], "test_acc": []}
    t0 = time.perf_counter()
    bar = tqdm(range(epochs), desc=f"{name}", unit="epoch")
    for _ in bar:
        total, seen, correct = 0.0, 0, 0
        for images, labels in loader:
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            n = labels.shape[0]
            total += float(loss) * n
            seen += n
            correct += int(xp.count_nonzero(xp.argmax(logits, axis=1) == labels))
        scheduler.step()
        test_acc = accuracy(model, test_set)
        history["loss"].append(total / seen)
        history["train_acc"].append(correct / seen)
        history["test_acc"].append(test_acc)
        bar.set_postfix(loss=f"{total / seen:.4f}", acc=f"{correct / seen:.3f}",
                        test_acc=f"{test_acc:.3f}")  # fmt: skip
    seconds = time.perf_counter() - t0
    final = history["test_acc"][-1]

    # a safetensors checkpoint, reloaded into a fresh model, scores the same
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"digits_{name}.safetensors"
    xp.save_file(model.state_dict(), path)
    fresh = MODELS[name]()
    fresh.load_state_dict(xp.load_file(path))
    reloaded = accuracy(fresh, test_set)
    if reloaded != final:
        raise RuntimeError(f"{name}: the reloaded checkpoint scores {reloaded}, not {final}")
    print(f"{name}: held-out accuracy {final:.2%} after {epochs} epochs in {seconds:.1f} s; "
          f"checkpoint {path} reloaded: {reloaded:.2%}")  # fmt: skip
    return final, history, seconds


def plot(histories: dict, path: pathlib.Path) -> None:
    """Loss and accuracy curves of every model trained, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    for (name, h), color in zip(histories.items(), ("tab:blue", "tab:orange")):
        epochs = range(1, len(h["loss"]) + 1)
        ax_loss.plot(epochs, h["loss"], color=color, label=name)
        ax_acc.plot(epochs, h["train_acc"], "--", color=color, label=f"{name} train")
        ax_acc.plot(epochs, h["test_acc"], color=color, label=f"{name} held out")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", title="training loss", yscale="log")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy", ylim=(0.8, 1.0))
    ax_loss.legend()
    ax_acc.legend()
    fig.suptitle("strided.nn on scikit-learn's digits (1797 8x8 images, 80/20 split)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["cnn", "mlp", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=None, help="default: 25 (cnn), 40 (mlp)")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("runs"))
    parser.add_argument("--fast", action="store_true", help="fewer epochs (make demo)")
    args = parser.parse_args(argv)
    names = ["cnn", "mlp"] if args.model == "both" else [args.model]
    targets = {"cnn": 0.97, "mlp": 0.96}
    histories = {}
    missed = []
    for name in names:
        epochs = (
            args.epochs or ({"cnn": 12, "mlp": 20} if args.fast else {"cnn": 25, "mlp": 40})[name]
        )
        acc, histories[name], _ = train(name, epochs, args.lr, args.batch_size, args.seed, args.out)
        if acc < targets[name]:
            missed.append(f"{name} {acc:.2%} < {targets[name]:.0%}")
    png = args.out / "digits_training.png"
    plot(histories, png)
    print(f"curves: {png}")
    if missed:
        print("below target: " + ", ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
