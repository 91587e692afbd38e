"""`python -m gpudecide.schemas`: rewrite the published JSON Schemas from their models."""

from gpudecide.schemas import main

main()
