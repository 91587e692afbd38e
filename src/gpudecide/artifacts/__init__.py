"""Artifacts: hashing, run manifest, format detection and the export audit (SPEC A1-A8, E2, E5).

Nothing here executes an artifact: pickles are read by their opcodes, safetensors and GGUF by
their headers, JSON with the standard parser. See `audit.py` for the whole pipeline.
"""
