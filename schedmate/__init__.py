"""schedmate: semantic-aware GPU cluster scheduling."""

__version__ = "0.1.0"
