"""benchwright.exports: releases and export formats. Takes domain objects from core, writes files.

Releases (JSONL, Parquet, dataset card, manifest) arrive with the releases issue; the layer exists now so
the import rules hold from the first commit.
"""
