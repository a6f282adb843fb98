"""The fixture package."""

from .core import Greeter  # re-exported
