"""A module with nothing but its docstring.

It becomes an empty file.
"""
