"""A tool module with a syntax error."""


def run(:
    pass
