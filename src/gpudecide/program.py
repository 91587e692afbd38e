"""`gpudecide` as a program (the console script, `python -m gpudecide`): the settings of a
process that runs one command and ends, around the command line (`cli.main`).

They are the program's, not the library's: code that imports gpudecide, the tests among it,
keeps its interpreter as it was.
"""

from __future__ import annotations

import gc

__all__ = ["main"]


def main() -> None:
    """Run one command and end the process (exit status as `cli.main` sets it)."""
    # A command builds tens of thousands of objects that live to its end (modules, models,
    # validators, records). At the default threshold (700) the collector ran 144 times in
    # `assess`, 27 ms of its 0.3 s, walking them again and again; rarer young collections
    # still bound cyclic garbage, as in mypy's main (issue 25). Set before the command line
    # is imported: its import makes a third of those objects.
    gc.set_threshold(100_000, 10, 10)
    from gpudecide.cli import main as run

    try:
        run()
    finally:
        # The collections the interpreter runs while it tears its modules down would walk
        # every one of those objects once more: ~35 ms of `assess`, more than it spends
        # deciding. Frozen, they are left to the process's end; atexit handlers, the
        # joining of threads and every close driven by a reference count still run.
        gc.freeze()
