"""The benchmark gate run against an installed pytest-qualbench, not the source tree.

Usage: python .ci/installed_gate.py PROJECT KERNEL

In a fresh temporary folder it puts a copy of PROJECT's bench_fixtures/ and a pytest.ini
holding the gate's settings from PROJECT's pyproject.toml (its floors and the other
`qualbench_*` options, and `xfail_strict`), then runs `pytest --qualbench` there with this
interpreter. Nothing of the source tree is importable from that folder, so the package
under test is the installed one (checked). The run must pass, floors enforced, and its
report must name KERNEL (`c` or `python`) as the kernel that ran. QUALBENCH_KERNEL is
unset for the run: the automatic choice is what is tested.

Used by .ci/install_check (a wheel and an sdist installed without a compiler) and by
cibuildwheel's test-command (each built wheel), so it runs on Linux, macOS and Windows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest depends on tomli before 3.11
    import tomli as tomllib

KERNELS = ("c", "python")
# The warning the engine gives when it falls back to the reference kernel.
FALLBACK_WARNING = "KernelFallbackWarning"


def gate_settings(project: Path) -> list[str]:
    """pytest.ini lines for the project's gate settings."""
    with (project / "pyproject.toml").open("rb") as file:
        ini = tomllib.load(file)["tool"]["pytest"]["ini_options"]
    lines = ["[pytest]"]
    for key, value in ini.items():
        if not (key.startswith("qualbench_") or key == "xfail_strict"):
            continue
        if isinstance(value, list):
            lines.append(f"{key} =")
            lines.extend(f"    {item}" for item in value)
        elif isinstance(value, bool):
            lines.append(f"{key} = {str(value).lower()}")
        else:
            lines.append(f"{key} = {value}")
    return lines


def main(project: Path, kernel: str) -> int:
    if kernel not in KERNELS:
        print(f"installed_gate: KERNEL must be one of {', '.join(KERNELS)}, not {kernel!r}")
        return 2
    environment = {k: v for k, v in os.environ.items() if k != "QUALBENCH_KERNEL"}
    with tempfile.TemporaryDirectory(prefix="qualbench-gate-") as folder:
        work = Path(folder)
        shutil.copytree(project / "bench_fixtures", work / "bench_fixtures")
        (work / "pytest.ini").write_text("\n".join(gate_settings(project)) + "\n")

        imported = subprocess.run(
            [sys.executable, "-c", "import pytest_qualbench; print(pytest_qualbench.__file__)"],
            cwd=work,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if Path(imported).resolve().is_relative_to(project.resolve()):
            print(f"installed_gate: pytest_qualbench is imported from the source tree: {imported}")
            return 1
        print(f"installed_gate: pytest_qualbench imported from {imported}")

        run = subprocess.run(
            [sys.executable, "-m", "pytest", "--qualbench", "-q", "-p", "no:cacheprovider"],
            cwd=work,
            env=environment,
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            print(run.stdout[-6000:], run.stderr[-3000:], sep="\n")
            print(f"installed_gate: pytest --qualbench exited {run.returncode}")
            return 1
        print(f"installed_gate: pytest --qualbench passed: {run.stdout.strip().splitlines()[-1]}")

        report = json.loads((work / ".qualbench" / "report.json").read_text())
        ran = report["metadata"]["engine"]["config"].get("kernel")
        if ran != kernel:
            print(f"installed_gate: the report's kernel is {ran!r}, expected {kernel!r}")
            return 1
        # The fallback is announced when, and only when, it is taken.
        warned = FALLBACK_WARNING in run.stdout + run.stderr
        if warned != (kernel == "python"):
            print(
                f"installed_gate: {FALLBACK_WARNING} {'shown' if warned else 'not shown'}"
                f" with kernel {kernel}"
            )
            return 1
        print(
            f"installed_gate: the report names kernel {ran!r}"
            + (f", and the run showed the {FALLBACK_WARNING}" if warned else "")
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1])
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
