"""`diff --format markdown`: a pull-request comment in which the spec's text is only ever
text. A pull request writes the spec, and the reviewer reads this comment: no value of it
(an instruction, a state value, a tool's arguments, a file name) may become markdown or
HTML of the comment, hide a row, or end the block it is shown in."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from agentspec.diagnostics.model import Risk
from agentspec.review.changes import RISKS, Change

__all__ = ["code", "fenced", "inline", "markdown"]


def markdown(changes: Sequence[Change], counts: Counter[Risk], spec: str) -> str:
    """A table of the changes, high risks first, then each detail (a unified diff) in a
    block of its own."""
    changes = sorted(changes, key=lambda c: RISKS.index(c.risk))  # stable: agents' order kept
    lines = [f"**agentspec diff** {code(spec)}: {counts[Risk.HIGH]} high, "
             f"{counts[Risk.MEDIUM]} medium, {counts[Risk.LOW]} low", "",
             "| risk | category | agent | change | what | old | new |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {c.risk} | {c.category or ''} | {', '.join(f'`{a}`' for a in c.agents)} | "
              f"`{c.change}` | "
              f"{inline(c.reason)} | {inline(c.old or '')} | {inline(c.new or '')} |"
              for c in changes]
    for change in changes:
        if change.detail:
            lines += ["", f"<details><summary>{change.agent}: {change.change}</summary>", "",
                      *fenced(change.detail), "</details>"]
    return "\n".join(lines)


#: what may start markup inside a table cell (emphasis, strikethrough, links and images,
#: HTML, entities, escapes, the cell's end); CommonMark lets a backslash escape each
_MARKUP = frozenset("\\*_~[]!<>&|")
_BACKTICKS = re.compile(r"`+")
#: the line endings CommonMark knows
_LINES = re.compile(r"\r\n|\r|\n")


def inline(text: object) -> str:
    """`text` for one table cell, shown as written: its code spans (`name`, as the reasons
    write names) stay code spans, and outside them every character that may start markup
    is escaped with a backslash, so no `<` starts HTML, no `[`, `!`, `*` or `~` starts a
    link, an image, emphasis or strikethrough, and no `|` ends the cell; a line break is a
    space."""
    text = _LINES.sub(" ", str(text))
    out: list[str] = []
    at = 0
    while at < len(text):
        run = _BACKTICKS.match(text, at)
        if run is not None:
            end = _closing(text, run)
            if end is not None:  # a code span: literal in CommonMark, but for a table's `|`
                out.append(text[at:end].replace("|", "\\|"))
                at = end
                continue
            out.append("\\`" * len(run.group()))
            at = run.end()
            continue
        char = text[at]
        out.append("\\" + char if char in _MARKUP else char)
        at += 1
    return "".join(out)


def _closing(text: str, run: re.Match[str]) -> int | None:
    """Where the code span that `run` opens ends: after the next run of as many backticks
    (CommonMark's rule), None when there is none."""
    for after in _BACKTICKS.finditer(text, run.end()):
        if len(after.group()) == len(run.group()):
            return after.end()
    return None


def code(text: str) -> str:
    """`text` as one code span, whatever backticks it holds: delimited by a run longer than
    any inside, padded with a space when it starts or ends with a backtick, or with a space
    at both ends (which CommonMark would strip)."""
    text = _LINES.sub(" ", text)
    longest = max((len(r) for r in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    stripped = text[:1] == text[-1:] == " " and bool(text.strip(" "))
    pad = " " if "`" in (text[:1], text[-1:]) or stripped else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: a line CommonMark may read as a code fence: up to three spaces, then ``` or ~~~
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def fenced(detail: str) -> list[str]:
    """`detail` as a fenced `diff` block no line of it can close: the spec's text (an
    instruction's context line ` ```` `) must never end the block and become markdown or
    HTML of the review comment. When a line would read as a fence, every line is indented
    by four spaces (more than a fence may have), and a note says so."""
    body = _LINES.split(detail.rstrip("\r\n"))
    if not any(_FENCE.match(line) for line in body):
        return ["```diff", *body, "```"]
    return ["(each line is indented by four spaces: a line of it would end this block)",
            "", "```diff", *(f"    {line}" for line in body), "```"]
