"""Command line for :func:`strided.nn.summary`: the cost table of any importable model factory.

    python -m strided.summary examples/gpt.py:gpt --config gpt3-175b --input "1,2048:int64"
    python -m strided.summary mypackage.models:resnet18 --input "8,3,224,224" --device cpu

``TARGET`` is ``path/to/file.py:factory`` or ``package.module:factory``; options the command does
not know (``--config gpt3-175b``, ``--n-layer 4``) are passed to the factory as keyword arguments
(dashes become underscores; integers and floats are converted).  The factory is called with
``device=`` (meta by default) when it accepts it, and the model is moved there otherwise.
``--input`` lists the example inputs as ``shape:dtype`` separated by ``;`` (zeros; dtype float32
when left out).  ``--eval`` costs forward only; ``--optimizer`` and ``--precision`` (native or
mixed) set the memory estimate; ``--csv`` prints the rows as CSV instead of the table.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import importlib.util
import inspect
import pathlib
import sys

from .nn._summary import parse_inputs, summary


def _load(target: str):
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise SystemExit(
            f"summary: TARGET must be file.py:factory or module:factory, not {target!r}"
        )
    if where.endswith(".py"):
        path = pathlib.Path(where)
        if not path.is_file():
            raise SystemExit(f"summary: no such file: {where}")
        sys.path.insert(0, str(path.resolve().parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemExit(f"summary: {where} has no attribute {attr!r}") from None
    return obj


def _value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _factory_kwargs(extra: list) -> dict:
    kwargs = {}
    i = 0
    while i < len(extra):
        item = extra[i]
        if not item.startswith("--"):
            raise SystemExit(f"summary: unexpected argument {item!r}")
        key, eq, value = item[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                value = "true"
            else:
                i += 1
                value = extra[i]
        kwargs[key.replace("-", "_")] = _value(value)
        i += 1
    return kwargs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m strided.summary", description=__doc__.splitlines()[0]
    )
    parser.add_argument("target", help="file.py:factory or package.module:factory")
    parser.add_argument("--input", default="", help='example inputs, e.g. "1,2048:int64"')
    parser.add_argument("--device", default="meta")
    parser.add_argument("--eval", action="store_true", help="forward only (no backward)")
    parser.add_argument("--optimizer", default="adamw")
    parser.add_argument("--precision", choices=["native", "mixed"], default="native")
    parser.add_argument("--csv", action="store_true", help="the rows as CSV")
    args, extra = parser.parse_known_args(argv)
    factory = _load(args.target)
    kwargs = _factory_kwargs(extra)
    try:
        accepts_device = "device" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepts_device = False
    if accepts_device:
        kwargs.setdefault("device", args.device)
    model = factory(**kwargs)
    if not accepts_device:
        model = model.to(device=args.device)
    inputs = parse_inputs(args.input, args.device)
    optimizer = None if args.optimizer.lower() == "none" else args.optimizer.lower()
    result = summary(
        model, *inputs, train=not args.eval, optimizer=optimizer, precision=args.precision
    )
    if args.csv:
        rows = result.as_dicts()
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    else:
        print(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
