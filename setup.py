"""The one compiled module, `pytest_qualbench.engine._postings`; every other setting is in
pyproject.toml.

It lives here because pyproject.toml's `[[tool.setuptools.ext-modules]]` can neither make
an extension optional nor give each compiler its own flags.

- Optional: a failed compile (no C compiler, no Python headers) only warns and the package
  installs without it; the engine then runs on the reference kernel in Python
  (`pytest_qualbench.engine.kernel`), slower, with one warning. cibuildwheel sets
  CIBUILDWHEEL=1, and there a failed compile fails the build: a published wheel always
  holds the extension.
- No fused multiply-add on any compiler: scores must keep the bits of plain float64 (the
  reference kernel and the recorded rankings compare them bit for bit).
- Stable ABI: on Python 3.11 and later the module is built against Py_LIMITED_API 3.11
  and the wheel is tagged abi3, so one wheel per platform serves every later Python. On
  3.10, and on a free-threaded build (which has no limited API before 3.15), it is an
  ordinary version-specific build.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# gcc and clang (the "unix" compiler, and the gcc behind mingw32 and cygwin).
UNIX_FLAGS = ["-O2", "-ffp-contract=off"]
# MSVC: Microsoft's docs (the fp_contract pragma and /fp pages, msvc-170) say that since
# Visual Studio 2022 version 17.0 fp_contract defaults to off and /fp:precise generates no
# contractions unless /fp:contract is also given; earlier compilers could contract under
# /fp:precise. Python 3.11 and later are built with VS 2022, as are the wheels (the
# windows-latest runner), so this is enough there.
MSVC_FLAGS = ["/O2", "/fp:precise"]

LIMITED_API = sys.version_info >= (3, 11) and not sysconfig.get_config_var("Py_GIL_DISABLED")
LIMITED_API_TAG = "cp311"
LIMITED_API_VERSION = "0x030B0000"


class BuildPostings(build_ext):
    """build_ext with the flags of the compiler it found."""

    def build_extensions(self) -> None:
        flags = MSVC_FLAGS if self.compiler.compiler_type == "msvc" else UNIX_FLAGS
        for extension in self.extensions:
            extension.extra_compile_args = [*flags, *extension.extra_compile_args]
        super().build_extensions()


postings = Extension(
    "pytest_qualbench.engine._postings",
    sources=["pytest_qualbench/engine/_postings.c"],
    optional=os.environ.get("CIBUILDWHEEL") != "1",
    py_limited_api=LIMITED_API,
    define_macros=[("Py_LIMITED_API", LIMITED_API_VERSION)] if LIMITED_API else [],
)

setup(
    ext_modules=[postings],
    cmdclass={"build_ext": BuildPostings},
    options={"bdist_wheel": {"py_limited_api": LIMITED_API_TAG}} if LIMITED_API else {},
)
