"""This file does not parse; it is copied unchanged."""

def broken(:  # a comment that stays
    return 1
