"""The rules about the spec as a whole (reported under `(spec)`): what it may read outside
the project, the session state, plugins, the global instruction, compaction, where
conversations are kept and the app's name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from agentspec.contract.compaction import compaction_kwargs
from agentspec.contract.urls import redacted
from agentspec.diagnostics import codes
from agentspec.diagnostics.model import Risk
from agentspec.ir.tree import AppNode, Compaction, PyObject
from agentspec.review.rules.models import MODEL_VARIANTS
from agentspec.review.rules.views import python_text
from agentspec.review.ruletypes import AppPair, Found, Rule, model_text, short, text_diff

__all__ = ["RULES"]


def _covers(entries: tuple[str, ...], entry: str) -> bool:
    """Whether `entry` is one of `entries` or below one of them."""
    return any(PurePosixPath(entry).is_relative_to(PurePosixPath(e)) for e in entries)


def _outside(pair: AppPair) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (pair.old.app.outside_project if pair.old.app else (),
            pair.new.app.outside_project if pair.new.app else ())


def _widened(pair: AppPair) -> Iterator[Found]:
    """`outside_project` widened: the spec may now read or write more outside the
    project."""
    before, after = _outside(pair)
    for index, entry in enumerate(after):
        if not _covers(before, entry):
            yield Found(Risk.HIGH, f"the spec may now name paths under `{entry}`, outside the "
                        "project", None, ("outside_project", index))


def _narrowed(pair: AppPair) -> Iterator[Found]:
    before, after = _outside(pair)
    for index, entry in enumerate(before):
        if not _covers(after, entry):
            yield Found(Risk.LOW, f"the spec may no longer name paths under `{entry}`",
                        ("outside_project", index), None)


@dataclass(frozen=True)
class _Supplied:
    """A `state:` key without a value, which the session's creator supplies."""

    description: str | None


def _state(pair: AppPair) -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared session state: initial values (their `${env.X}` shown as written, never
    read) and, as `_Supplied`, the keys the session's creator supplies."""
    def declared(app: AppNode | None) -> dict[str, Any]:
        if app is None:
            return {}
        return {**dict(app.state), **{key: _Supplied(about) for key, about in app.inputs.items()}}
    return declared(pair.old.app), declared(pair.new.app)


def _start(key: str, value: Any) -> str:
    if isinstance(value, _Supplied):
        return f"sessions must be created with `{key}` (their creator supplies it)"
    return f"sessions start with `{key}` = {short(value)}"


def _state_added(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in after:
        if key not in before:
            yield Found(Risk.MEDIUM, _start(key, after[key]), None, ("state", key), key=True)


def _state_changed(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in after:
        if key in before and before[key] != after[key]:
            was = "supplied by their creator" if isinstance(before[key], _Supplied) \
                else short(before[key])
            if isinstance(before[key], _Supplied) and isinstance(after[key], _Supplied):
                reason = f"the description of `{key}`, which sessions are created with, changed"
            else:
                reason = f"{_start(key, after[key])} (was {was})"
            yield Found(Risk.MEDIUM, reason, ("state", key), ("state", key))


def _state_removed(pair: AppPair) -> Iterator[Found]:
    before, after = _state(pair)
    for key in sorted(before.keys() - after.keys()):
        reason = f"sessions no longer need `{key}` from their creator" if isinstance(
            before[key], _Supplied) else f"sessions no longer start with `{key}`"
        yield Found(Risk.MEDIUM, reason, ("state", key), None, key=True)


def _plugins(pair: AppPair) -> tuple[dict[tuple[str, int], tuple[int, PyObject]],
                                     dict[tuple[str, int], tuple[int, PyObject]]]:
    """Plugins by (reference, occurrence), with their index."""
    def keyed(plugins: tuple[PyObject, ...]) -> dict[tuple[str, int], tuple[int, PyObject]]:
        seen: dict[str, int] = {}
        found = {}
        for index, plugin in enumerate(plugins):
            seen[plugin.ref] = seen.get(plugin.ref, -1) + 1
            found[(plugin.ref, seen[plugin.ref])] = (index, plugin)
        return found
    return (keyed(pair.old.app.plugins if pair.old.app else ()),
            keyed(pair.new.app.plugins if pair.new.app else ()))


def _plugin_added(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in new.keys() - old.keys():
        index, plugin = new[key]
        yield Found(Risk.HIGH, f"plugin {python_text(plugin)} now sees every call", None,
                    ("plugins", index))


def _plugin_removed(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in sorted(old.keys() - new.keys()):
        index, plugin = old[key]
        yield Found(Risk.HIGH, f"plugin {python_text(plugin)} no longer runs", ("plugins", index),
                    ("plugins",))


def _plugin_changed(pair: AppPair) -> Iterator[Found]:
    old, new = _plugins(pair)
    for key in sorted(old.keys() & new.keys()):
        (was_at, was), (now_at, now) = old[key], new[key]
        if was != now:
            reason = f"plugin {python_text(now)} (was {python_text(was)})" if python_text(now) != \
                python_text(was) else f"plugin {now.ref} is found in another module directory"
            yield Found(Risk.HIGH, reason, ("plugins", was_at), ("plugins", now_at))


def _global_instruction(pair: AppPair) -> Iterator[Found]:
    was = pair.old.app.global_instruction if pair.old.app else None
    now = pair.new.app.global_instruction if pair.new.app else None
    if (was or "") != (now or ""):
        yield Found(Risk.MEDIUM, "the global instruction (every agent's) changed",
                    ("global_instruction",), ("global_instruction",),
                    text_diff(was, now, f"{pair.old.label}:global_instruction",
                               f"{pair.new.label}:global_instruction"))


def _compactions(pair: AppPair) -> tuple[Compaction | None, Compaction | None]:
    return (pair.old.app.compaction if pair.old.app else None,
            pair.new.app.compaction if pair.new.app else None)


def _compaction_text(value: Any) -> str:
    if value is None:
        return "none"
    settings, model = value
    shown = ", ".join(f"{k}={v}" for k, v in compaction_kwargs(settings).items())
    return shown + (f", model {model_text(model)}" if model else "")


def _summarization(pair: AppPair) -> Iterator[Found]:
    """When and how conversations are compacted (where their text is kept is AS563's; no
    longer at all is AS558's)."""
    was, now = (None if c is None else (c.settings, c.model) for c in _compactions(pair))
    if was != now and now is not None:
        yield Found(Risk.MEDIUM, f"compaction {_compaction_text(was)} -> "
                    f"{_compaction_text(now)}", ("summarization",), ("summarization",))


def _summarization_off(pair: AppPair) -> Iterator[Found]:
    """Compaction turned off: long conversations now grow until the model refuses them."""
    was, now = (None if c is None else (c.settings, c.model) for c in _compactions(pair))
    if was is not None and now is None:
        yield Found(Risk.HIGH, f"conversations are no longer summarized (was "
                    f"{_compaction_text(was)}): every request carries the whole conversation, "
                    "until it outgrows the model's context window and the turn fails",
                    ("summarization",), ("summarization",))


def _summarization_history(pair: AppPair) -> Iterator[Found]:
    was, now = (None if c is None else c.history for c in _compactions(pair))
    if was == now:
        return
    where = ("summarization", "history")
    if now is None:
        yield Found(Risk.MEDIUM, f"summarized conversations are no longer kept in files (were "
                    f"under `{was}`)", where, where)
    else:
        yield Found(Risk.MEDIUM, f"the text of summarized conversations is now kept in files "
                    f"under `{now}`" + (f" (was `{was}`)" if was else ""),
                    where if _compactions(pair)[0] else None, where)


def _sessions(pair: AppPair) -> Iterator[Found]:
    """Where conversations are kept (the URLs redacted: one may hold a password)."""
    was = pair.old.app.sessions if pair.old.app else None
    now = pair.new.app.sessions if pair.new.app else None
    if was != now:
        def shown(store: Any) -> str:
            return "memory" if store is None else redacted(store.url)
        yield Found(Risk.MEDIUM, f"conversations are kept in {shown(now)} (was {shown(was)}): "
                    "front ends and workers must use the same store", ("sessions",),
                    ("sessions",))


def _context_cache(pair: AppPair) -> Iterator[Found]:
    was = pair.old.app.context_cache if pair.old.app else None
    now = pair.new.app.context_cache if pair.new.app else None
    if was != now:
        def shown(value: Mapping[str, int | float] | None) -> str:
            return "off" if value is None else ", ".join(f"{k}={v}" for k, v in value.items())
        yield Found(Risk.MEDIUM, f"context caching {shown(now)} (was {shown(was)})",
                    ("context_cache",) if was is not None else None,
                    ("context_cache",) if now is not None else None)


def _app_name(pair: AppPair) -> Iterator[Found]:
    was = pair.old.app.name if pair.old.app else None
    now = pair.new.app.name if pair.new.app else None
    if was != now:
        yield Found(Risk.MEDIUM, f"the app `{was}` is now `{now}`: sessions stored under the old "
                    "name are not seen", ("name",), ("name",))


RULES: tuple[Rule[AppPair], ...] = (
    Rule(codes.OUTSIDE_PROJECT_WIDENED, ("AppNode.outside_project",), _widened,
         on_new_spec=True),
    Rule(codes.OUTSIDE_PROJECT_NARROWED, ("AppNode.outside_project",), _narrowed),
    Rule(codes.STATE_ADDED, ("AppNode.state", "AppNode.inputs"), _state_added),
    Rule(codes.STATE_CHANGED, ("AppNode.state", "AppNode.inputs"), _state_changed),
    Rule(codes.STATE_REMOVED, ("AppNode.state", "AppNode.inputs"), _state_removed),
    Rule(codes.PLUGIN_ADDED, ("AppNode.plugins", "PyObject.*"), _plugin_added,
         on_new_spec=True),
    Rule(codes.PLUGIN_REMOVED, ("AppNode.plugins", "PyObject.*"), _plugin_removed),
    Rule(codes.PLUGIN_CHANGED, ("AppNode.plugins", "PyObject.*"), _plugin_changed),
    Rule(codes.GLOBAL_INSTRUCTION_CHANGED, ("AppNode.global_instruction",), _global_instruction),
    Rule(codes.SUMMARIZATION_CHANGED, ("AppNode.compaction", "Compaction.settings",
                                       "ByTokens.*", "ByInvocations.*", "Compaction.model",
                                       *MODEL_VARIANTS), _summarization),
    Rule(codes.SUMMARIZATION_TURNED_OFF, ("AppNode.compaction", "Compaction.settings",
                                          "Compaction.model"), _summarization_off),
    Rule(codes.APP_RENAMED, ("AppNode.name",), _app_name),
    Rule(codes.SUMMARIZATION_HISTORY_CHANGED, ("AppNode.compaction", "Compaction.history"),
         _summarization_history),
    Rule(codes.SESSIONS_CHANGED, ("AppNode.sessions", "SessionsNode.url",
                                  "SessionsNode.sqlite_path"), _sessions),
    Rule(codes.CONTEXT_CACHE_CHANGED, ("AppNode.context_cache",), _context_cache,
         on_new_spec=True),
)
