"""Artifacts: hashing, run manifest, format detection and the export audit (SPEC A1-A8, E2, E5).

Nothing here executes an artifact: pickles are read by their opcodes, safetensors and GGUF by
their headers, JSON with the standard parser. See `audit.py` for the whole pipeline.

The modules a caller uses: `runs` (one run of each command), `audit` (the export audit),
`figures` (the audit record's figures as a model: `figures_of`), `hashing`, `manifest`,
`retention`, `remote` (copying an export from an fsspec URL), `report` (the section) and
`words` (the schema's words); each declares its names in `__all__`.
"""
