"""Reports: one self-contained HTML file, Markdown and JSON, rendered from evidence records."""
