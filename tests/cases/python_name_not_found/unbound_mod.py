from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from helpers import Checked  # noqa: F401 - the test: never runs

only_annotated: int
removed = 1
del removed
maybe = 1
if len(__file__) > 1000:
    del maybe
