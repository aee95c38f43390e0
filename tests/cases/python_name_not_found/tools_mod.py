from helpers import thing as guard  # noqa: F401 - the test: bound by an import

first, (second, third) = 1, (2, 3)
LIMIT: int = 3

try:
    from fast import fallback
except ImportError:
    def fallback() -> None:
        return None


def setup() -> None:
    global late
    late = 1


def lookup(q: str) -> str:
    return q
