from . import shown  # noqa: F401 - the test: makes `shown` an attribute
