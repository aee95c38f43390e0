#!/usr/bin/env python
"""How long reading hostile YAML takes: deeply nested flow collections (`[[[...]]]`,
`{a: {a: ...}}`), on the libyaml fast path and on the pure-Python path (a `{python: m:f}`
flow mapping, which libyaml refuses, sends the whole file there), up to the 2 MiB limit,
and through `agentspec import adk`. It prints figures and asserts nothing. See
bench/README.md.

    .venv/bin/python bench/parse.py [--repeat N] [--sizes 10,50,200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentspec.parse import load_text  # noqa: E402

HEAD = "agentspec: 1\nname: app\n"
PURE = "tools: {python: mod:attr}\n"  # libyaml refuses this: the pure parser reads the file


def nested(kb: int, opening: str, closing: str) -> str:
    depth = kb * 1024 // (len(opening) + len(closing))
    return "x: " + opening * depth + "1" * (opening == "{a: ") + closing * depth + "\n"


def wide_at_limit(kb: int) -> str:
    """100 levels of `[` (the most read), then `kb` KiB of items on one line."""
    items = "a, " * (kb * 1024 // 3)
    return "x: " + "[" * 100 + items + "]" * 100 + "\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "[[[...]]]": lambda kb: nested(kb, "[", "]"),
    "{a: {a: ...}}": lambda kb: nested(kb, "{a: ", "}"),
    "[[[ unclosed": lambda kb: "x: " + "[" * (kb * 1024) + "\n",
    "100 x [ then items": wide_at_limit,
}


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def import_adk(text: str) -> Callable[[], object]:
    from agentspec.adkimport.loader import load_adk

    folder = Path(tempfile.mkdtemp(prefix="bench-parse-"))
    (folder / "root_agent.yaml").write_text(
        "name: root\nmodel: gemini-2.5-flash\ninstruction: hi\n" + text, encoding="utf-8")
    return lambda: load_adk(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="10,50,200,1000",
                        help="KiB of nesting per file, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'shape':22} {'path':8} {'KiB':>6} {'min s':>8} {'median s':>9}  diagnostics")
    for name, shape in SHAPES.items():
        for path, prefix in (("libyaml", HEAD), ("pure", HEAD + PURE)):
            for kb in sizes:
                text = prefix + shape(kb)
                codes: list[str] = []

                def run(text: str = text, codes: list[str] = codes) -> None:
                    parsed = load_text(text, path=Path("bench.yaml"))
                    codes[:] = sorted({d.code for d in parsed.diagnostics})

                low, mid = timed(run, args.repeat)
                print(f"{name:22} {path:8} {len(text) // 1024:6} {low:8.3f} {mid:9.3f}  "
                      f"{','.join(codes) or 'none'}")
    for kb in sizes:
        text = nested(kb, "[", "]")
        low, mid = timed(import_adk(text), args.repeat)
        print(f"{'import adk [[[...]]]':22} {'':8} {len(text) // 1024:6} {low:8.3f} {mid:9.3f}")


if __name__ == "__main__":
    main()
