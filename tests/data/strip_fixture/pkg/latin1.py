# -*- coding: latin-1 -*-
"""Latin-1 module."""
NAME = "café"  # café comment
