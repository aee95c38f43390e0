import sys

setattr(sys.modules[__name__], "anything", len)  # noqa: B010 - the test: a dynamic binding
