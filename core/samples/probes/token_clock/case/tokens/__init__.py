"""Session tokens."""

from .issuer import Token, TokenIssuer

__all__ = ["Token", "TokenIssuer"]
