"""gpudecide: decide where to fine-tune from evidence the team produces itself."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gpudecide")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
