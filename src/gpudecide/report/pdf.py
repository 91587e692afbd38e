"""The report as a PDF for the archive (WeasyPrint): every section expanded, the print
stylesheet, fonts embedded (DejaVu Sans holds Cyrillic and the Kazakh letters ә ғ қ ң ө ұ ү
һ і), nothing fetched: the renderer may read only the page itself and `data:` URLs.

WeasyPrint needs Pango from the system (Debian: libpango-1.0-0 libpangoft2-1.0-0) and a
font (fonts-dejavu-core); without them `pdf_bytes` says what to install.
"""

from __future__ import annotations

from typing import Any

from gpudecide.errors import InputError

__all__ = ["pdf_bytes"]


def _offline(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """WeasyPrint's URL fetcher, refusing everything but inline data (air-gapped)."""
    if url.startswith("data:"):
        from weasyprint.urls import default_url_fetcher

        return dict(default_url_fetcher(url, *args, **kwargs))
    raise ValueError(f"the report fetches nothing from outside: {url}")


def pdf_bytes(html: str) -> bytes:
    """The PDF of a self-contained HTML page."""
    try:
        from weasyprint import HTML
    except (ImportError, OSError) as exc:
        raise InputError(
            "the PDF needs WeasyPrint and the system's Pango library ({reason})",
            hint="pip install 'gpudecide[pdf]'; on Debian: apt-get install libpango-1.0-0 "
            "libpangoft2-1.0-0 fonts-dejavu-core",
            reason=str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__,
        ) from None
    document = HTML(string=html, url_fetcher=_offline, base_url=None)
    return bytes(document.write_pdf(pdf_variant=None, uncompressed_pdf=False) or b"")
