"""`python -m pytest_qualbench compare ...`: the qualstat command without its script."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pytest_qualbench.cli import qualstat

COMMANDS = {"compare": qualstat.main}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(f"usage: python -m pytest_qualbench {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return 2
    return COMMANDS[args[0]](args[1:])


if __name__ == "__main__":
    sys.exit(main())
