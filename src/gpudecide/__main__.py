"""`python -m gpudecide` runs the command line."""

from gpudecide.program import main

main()
