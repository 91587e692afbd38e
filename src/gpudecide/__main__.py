"""`python -m gpudecide` runs the command line."""

from gpudecide.cli import main

main()
