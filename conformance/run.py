"""Run the official array API conformance suite (data-apis/array-api-tests) against strided.

    python conformance/run.py --suite PATH [--module strided] [--version 2025.12]
                              [--max-examples N] [--files test_a.py ...] [-- extra pytest args]

PATH is a checkout of data-apis/array-api-tests with its ``array-api`` submodule populated.  No
skips or xfails file is used.  The run ends with one summary line::

    conformance: N passed, N failed, N skipped (module=..., version=..., max_examples=...)

followed by the failures per test file.  The exit status is pytest's.
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET


def check_suite(path: pathlib.Path) -> None:
    """Fail with a clear message unless ``path`` is a usable suite checkout."""
    if not (path / "array_api_tests").is_dir() or not (path / "conftest.py").is_file():
        sys.exit(
            f"conformance: {path} is not a checkout of data-apis/array-api-tests "
            "(expected array_api_tests/ and conftest.py); clone it with --recurse-submodules"
        )
    spec = path / "array-api" / "spec"
    if not spec.is_dir() or not any(spec.iterdir()):
        sys.exit(
            f"conformance: {path / 'array-api'} is empty: the suite needs its array-api submodule "
            "(run `git submodule update --init` in the suite checkout)"
        )


def summarize(junit: pathlib.Path) -> tuple[collections.Counter, dict[str, list[str]]]:
    """Outcome counts and failing test ids per file, from pytest's JUnit XML."""
    counts: collections.Counter = collections.Counter()
    failures: dict[str, list[str]] = collections.defaultdict(list)
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        counts[outcome] += 1
        if outcome == "failed":
            parts = (case.get("classname") or case.get("name", "")).split(".")
            file = next((p for p in parts if p.startswith("test_")), "collection")
            failures[f"{file}.py"].append(case.get("name", "?"))
    return counts, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite", required=True, type=pathlib.Path, help="array-api-tests checkout"
    )
    parser.add_argument("--module", default="strided", help="array namespace to test")
    parser.add_argument("--version", default="2025.12", help="ARRAY_API_TESTS_VERSION")
    parser.add_argument("--max-examples", type=int, default=100, help="hypothesis max_examples")
    parser.add_argument("--files", nargs="+", default=None, help="only these test files")
    parser.add_argument(
        "--keep-deadline",
        action="store_true",
        help="keep hypothesis deadlines (off by default: first calls include numba compilation)",
    )
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (after --)")
    args = parser.parse_args(argv)

    suite = args.suite.expanduser().resolve()
    check_suite(suite)
    targets = [f"array_api_tests/{f}" for f in args.files] if args.files else ["array_api_tests"]
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=args.module, ARRAY_API_TESTS_VERSION=args.version)
    repo_root = pathlib.Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo_root), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        junit = pathlib.Path(tmp) / "junit.xml"
        cmd = [
            sys.executable, "-m", "pytest", *targets,
            f"--max-examples={args.max_examples}",
            f"--junitxml={junit}",
            "-q", "-p", "no:cacheprovider", "--disable-warnings",
            *([] if args.keep_deadline else ["--disable-deadline"]),
            *args.pytest_args,
        ]  # fmt: skip
        start = time.perf_counter()
        rc = subprocess.call(cmd, cwd=suite, env=env)
        elapsed = time.perf_counter() - start
        if not junit.exists():
            print(f"conformance: pytest produced no report (exit status {rc})")
            return rc or 1
        counts, failures = summarize(junit)
    print()
    print(
        f"conformance: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['skipped']} skipped (module={args.module}, version={args.version}, "
        f"max_examples={args.max_examples}, {elapsed:.0f} s)"
    )
    for file, names in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"  {file}: {len(names)} failed")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
