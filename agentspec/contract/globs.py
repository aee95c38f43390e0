"""Glob patterns, matched in time linear in the name, whatever the pattern.

A glob was once translated to a regular expression; `*a*a*a...*ab` then backtracks for
ever, and Python's `re` holds the GIL while it does, so the event loop, signals and every
other job of the process stop with it. Here a pattern is compiled to a Thompson NFA and run
over the name one character at a time, the set of live states cached per character (a lazy
DFA, as RE2 does): each character costs at most one pass over the states, never a retry.

Syntax: `**/` any number of directories, `**` anything (across `/`), `*` anything within one
directory level, `?` one character other than `/`, `[abc]`, `[a-z]`, `[!abc]` (or `[^abc]`)
a character set, `{a,b}` alternatives (not nested). Anything else is literal.

Linear is not cheap: a pattern of a few hundred states (`*a` then 200 `?`) that keeps
forgetting its DFA costs those hundreds of state visits per character, seconds over a few
thousand names. So each tool call matches within a `GlobBudget` of state visits; past it the
call fails with an error the model reads (`GlobTooCostly`) instead of running on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from agentspec.contract.virtual_paths import BackendError, normalize

__all__ = ["MAX_GLOB_STEPS", "GlobBudget", "GlobPattern", "GlobTooCostly", "compile_glob",
           "coverage", "glob_match", "grep_glob_match", "matches_nothing", "permits"]

_Test = Callable[[str], bool]

#: the lazy DFA forgets what it built past this many transitions, or this many NFA states in
#: all its sets (bounds on memory, a few MB a pattern, not on time)
_MAX_CACHED = 4096
_MAX_CACHED_STATES = 50_000
MAX_GLOB_STEPS = 2_000_000
"""State visits one glob or grep call may spend building DFA transitions (about half a
second of CPU; an ordinary pattern builds a few dozen transitions and then only looks them
up, which is not charged)."""


class GlobTooCostly(BackendError):
    """A call's matching went past its budget."""


class GlobBudget:
    """The state visits a call has left; shared by every match of that call."""

    def __init__(self, steps: int | None = None) -> None:
        self.limit = MAX_GLOB_STEPS if steps is None else steps
        self.left = self.limit

    def spend(self, pattern: str, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise GlobTooCostly(
                f"The glob {pattern[:80]!r} is too costly to match against this many files "
                f"(over {self.limit:,} steps); use a simpler pattern (fewer `*`, `?` and "
                "alternatives) or a narrower path.")


@dataclass
class _State:
    test: _Test | None = None  # consumes one character passing the test, then goes to `to`
    to: int = -1
    jumps: list[int] = field(default_factory=list)  # taken without consuming anything


class _Invalid(Exception):
    """The pattern has a character range such as `[z-a]`: it matches nothing."""


class GlobPattern:
    """One compiled glob. `steps` counts the state visits of every `matches` so far, so a
    test can check the work done against the length of the input."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.steps = 0
        self.states: list[_State] = [_State()]  # state 0 accepts
        try:
            start: frozenset[int] | None = self._closure({self._compile(pattern, 0)})
        except _Invalid:
            start = None
        self._start = start
        self._forget()

    @property
    def matches_nothing(self) -> bool:
        """Whether the pattern is malformed (a range such as `[z-a]`, an empty set)."""
        return self._start is None

    def _forget(self) -> None:
        """Drops the DFA built so far (its states are numbered, so a transition is one
        lookup of a small key, however many NFA states a set holds)."""
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._next: dict[tuple[int, str], int] = {}
        self._held = 0  # NFA states in all of _sets
        if self._start is not None:
            self._id(self._start)

    def _id(self, found: frozenset[int]) -> int:
        number = self._ids.get(found)
        if number is None:
            number = self._ids[found] = len(self._sets)
            self._sets.append(found)
            self._held += len(found)
        return number

    def matches(self, text: str, budget: GlobBudget | None = None) -> bool:
        """Whether the whole of `text` matches the pattern. The work of building the DFA
        (a character's step from a set of states not seen with it before, the costly part)
        is charged to `budget` as it is done: GlobTooCostly when spent."""
        if self._start is None:
            return False
        current = 0  # the start set's number
        unpaid = 0
        for char in text:
            found = self._next.get((current, char))
            if found is None:
                here = self._sets[current]
                before = self.steps
                reached = self._step(here, char)
                unpaid += self.steps - before
                if budget is not None and unpaid > 4096:
                    budget.spend(self.pattern, unpaid)
                    unpaid = 0
                if len(self._next) >= _MAX_CACHED or self._held >= _MAX_CACHED_STATES:
                    self._forget()
                    current = self._id(here)
                found = self._next[current, char] = self._id(reached)
            current = found
            self.steps += 1
            if not self._sets[current]:
                break
        if budget is not None:
            budget.spend(self.pattern, unpaid)
        return 0 in self._sets[current]

    def _step(self, current: frozenset[int], char: str) -> frozenset[int]:
        reached = set()
        for index in current:
            state = self.states[index]
            if state.test is not None and state.test(char):
                reached.add(state.to)
        self.steps += len(current)
        return self._closure(reached)

    def _closure(self, indices: set[int]) -> frozenset[int]:
        seen = set(indices)
        todo = list(indices)
        while todo:
            for target in self.states[todo.pop()].jumps:
                self.steps += 1
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return frozenset(seen)

    # -- compiling: right to left, each piece handed the state that follows it --------------

    def _add(self, state: _State) -> int:
        self.states.append(state)
        return len(self.states) - 1

    def _consume(self, test: _Test, to: int) -> int:
        return self._add(_State(test=test, to=to))

    def _loop(self, test: _Test, then: int) -> int:
        """Zero or more characters passing `test`, then `then`."""
        split = self._add(_State(jumps=[then]))
        self.states[split].jumps.append(self._consume(test, split))
        return split

    def _compile(self, pattern: str, then: int) -> int:
        pieces: list[Callable[[int], int]] = []
        i = 0
        while i < len(pattern):
            piece, i = self._piece(pattern, i)
            pieces.append(piece)
        for piece in reversed(pieces):
            then = piece(then)
        return then

    def _piece(self, pattern: str, i: int) -> tuple[Callable[[int], int], int]:
        """The piece of the pattern at `i` (a function of the state after it) and the index
        after it."""
        char = pattern[i]
        if pattern.startswith("**/", i):
            def any_directories(then: int) -> int:  # `(.*/)?`
                dirs = self._add(_State())
                self.states[dirs].jumps = [self._consume(_anything, dirs),
                                           self._consume(_slash, then)]
                return self._add(_State(jumps=[then, dirs]))
            return any_directories, i + 3
        if pattern.startswith("**", i):
            return functools.partial(self._loop, _anything), i + 2
        if char == "*":
            return functools.partial(self._loop, _not_slash), i + 1
        if char == "?":
            return functools.partial(self._consume, _not_slash), i + 1
        if char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if end != -1:
                return functools.partial(self._consume, _char_set(pattern[i + 1:end])), end + 1
        elif char == "{":
            end = pattern.find("}", i)
            if end != -1:
                alternatives = pattern[i + 1:end].split(",")

                def either(then: int) -> int:
                    return self._add(_State(jumps=[self._compile(a, then)
                                                   for a in alternatives]))
                return either, end + 1
        return functools.partial(self._consume, char.__eq__), i + 1


def _anything(char: str) -> bool:
    return True


def _not_slash(char: str) -> bool:
    return char != "/"


def _slash(char: str) -> bool:
    return char == "/"


def _char_set(body: str) -> _Test:
    """The test of a `[...]` set: its body, `!` or `^` first to negate, `]` first taken
    literally, `a-z` a range (a `-` first or last is literal)."""
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    if not body:
        raise _Invalid
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if high < low:
                raise _Invalid
            ranges.append((low, high))
            i += 3
        else:
            singles.add(body[i])
            i += 1

    def test(char: str) -> bool:
        inside = char in singles or any(low <= char <= high for low, high in ranges)
        return inside != negated

    return test


@functools.lru_cache(maxsize=64)
def compile_glob(pattern: str) -> GlobPattern:
    """The compiled glob, once per pattern (a search over ten thousand files matches each
    against the same one)."""
    return GlobPattern(pattern)


def glob_match(pattern: str, relpath: str, budget: GlobBudget | None = None) -> bool:
    """Whether `relpath` (relative, `/`-separated) matches a glob (`**`, `*`, `?`, `[]`, `{}`).
    As in deepagents (and .gitignore), a pattern without `/` matches the file's name at any
    depth: `*.py` finds every Python file. The work is charged to `budget`."""
    pattern = pattern.lstrip("/")
    if "/" not in pattern:
        relpath = relpath.rsplit("/", 1)[-1]
    return compile_glob(pattern).matches(relpath, budget)


def grep_glob_match(glob: str | None, path: str, budget: GlobBudget | None = None) -> bool:
    """grep's file filter: a pattern without `/` matches the file name, else the whole path."""
    if not glob:
        return True
    if "/" in glob:
        return glob_match(glob.lstrip("/"), path.lstrip("/"), budget) or glob_match(
            "**/" + glob.lstrip("/"), path.lstrip("/"), budget)
    return glob_match(glob, path.rsplit("/", 1)[-1], budget)


def matches_nothing(pattern: str) -> bool:
    """Whether a glob is malformed, so that it matches no path (validate refuses such a
    permission rather than let it deny everything quietly)."""
    return compile_glob(pattern.lstrip("/")).matches_nothing


def permits(globs: tuple[str, ...] | None, path: str, budget: GlobBudget | None = None) -> bool:
    """Whether a backend's path permission list (`read` / `write`; None: every path)
    allows virtual `path`: a glob matches the whole normalized path (`/*.md` is a file at
    the top, not every Markdown file)."""
    if globs is None:
        return True
    clean = normalize(path).lstrip("/")
    return any(pattern.matches(clean, budget) for pattern in _compiled(tuple(globs)))


@functools.lru_cache(maxsize=64)
def _compiled(globs: tuple[str, ...]) -> tuple[GlobPattern, ...]:
    """A permission list's patterns, compiled once for the list: one by one through
    `compile_glob`, a list longer than its cache was compiled again for every path."""
    return tuple(compile_glob(glob.lstrip("/")) for glob in globs)


#: a piece of a set of paths (`coverage`): one character of the set, or (flag set) one or more
Piece = tuple[frozenset[str], bool]
#: the state visits (as `GlobPattern.steps` counts them) `coverage` spends before it gives
#: up: a few hundredths of a second, so validate stays fast whatever the pattern
_MAX_COVERAGE_STEPS = 300_000


def coverage(globs: tuple[str, ...], pieces: tuple[Piece, ...]) -> tuple[bool, bool] | None:
    """Whether some, and whether every, path of the set `pieces` spells (a `/`-rooted path
    without its leading `/`) is permitted by `globs` (as `permits` matches them): a walk
    over pairs of the globs' states and positions in the set, every character of the set's
    alphabet tried from each (so exact, not sampled). None when the walk grows past
    `_MAX_COVERAGE_STEPS` of work (a pattern too intricate to tell statically)."""
    patterns = [compile_glob(glob.lstrip("/")) for glob in globs]
    alphabet = sorted(frozenset().union(*(chars for chars, _ in pieces)))
    end = len(pieces)

    def advance(positions: frozenset[int], char: str) -> frozenset[int]:
        reached = set()
        for at in positions:
            if at < end and char in pieces[at][0]:
                reached.add(at + 1)
            if at > 0 and pieces[at - 1][1] and char in pieces[at - 1][0]:
                reached.add(at)
        return frozenset(reached)

    empty: frozenset[int] = frozenset()
    start = (tuple(p._start if p._start is not None else empty for p in patterns),
             frozenset({0}))
    seen = {start}
    todo = [start]
    spent = -sum(p.steps for p in patterns)
    some, every = False, True
    while todo:
        states, positions = todo.pop()
        if end in positions:
            permitted = any(0 in found for found in states)
            some, every = some or permitted, every and permitted
        for char in alphabet:
            moved = advance(positions, char)
            if not moved:
                continue
            pair = (tuple(p._step(found, char) if found else empty
                          for p, found in zip(patterns, states, strict=True)), moved)
            if spent + sum(p.steps for p in patterns) > _MAX_COVERAGE_STEPS:
                return None
            if pair not in seen:
                seen.add(pair)
                todo.append(pair)
    return some, every
