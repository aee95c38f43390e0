import os  # noqa: F401 - the test: a spec must not reach these through this module
import subprocess as sp  # noqa: F401
from shutil import rmtree  # noqa: F401


def search(query: str) -> str:
    """Search."""
    return query
