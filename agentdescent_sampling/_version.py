"""The package version: pyproject.toml reads it from here, and so does ``__version__``."""

__version__ = "0.1.0"
