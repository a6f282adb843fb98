project = "fixture"  # a Sphinx setting
