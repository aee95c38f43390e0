"""The table of known Gemini model ids (`agentspec.contract.known_models`) against the lists
the installed google-genai keeps: a release that lists a model the table lacks fails here,
so the table is refreshed (with its date) instead of warning about a real model."""

from __future__ import annotations

import ast
import datetime
import importlib.util
import typing

from agentspec.contract import known_models


def _listed_by_interactions() -> set[str]:
    """google-genai's interactions API types its `model` as a literal of model ids."""
    from google.genai._gaos.types.interactions.model import Model

    found: set[str] = set()
    todo: list[object] = [Model]
    while todo:
        hint = todo.pop()
        for arg in typing.get_args(hint):
            if isinstance(arg, str):
                found.add(arg)
            else:
                todo.append(arg)
    return found


def _listed_by_tokenizer() -> set[str]:
    """The token counter's tables of models (read as source: importing it needs the
    optional sentencepiece)."""
    spec = importlib.util.find_spec("google.genai._local_tokenizer_loader")
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and "MODELS_TO" in t.id for t in node.targets):
            found |= {k.value for k in node.value.keys
                      if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return found


def test_every_gemini_model_the_installed_libraries_list_is_known() -> None:
    listed = {m for m in _listed_by_interactions() | _listed_by_tokenizer()
              if known_models.is_judged(m)}
    assert len(listed) >= 20, "google-genai moved its model lists: find them again"
    missing = sorted(m for m in listed if not known_models.is_known(m))
    assert not missing, (f"google-genai lists models the table lacks: {missing}; add them "
                         "to agentspec/contract/known_models.py and update TAKEN")


def test_the_table_has_its_date_and_judges_only_bare_gemini_ids() -> None:
    assert datetime.date.fromisoformat(known_models.TAKEN)
    assert all(known_models.is_judged(m) for m in known_models.GEMINI_MODELS)
    for release in ("gemini-2.5-flash-001", "gemini-2.5-flash-preview-09-2025",
                    "gemini-2.5-pro-exp-03-25", "gemini-2.5-flash-native-audio-preview-09-2025"):
        assert known_models.is_known(release), release
    for wrong in ("gemini-2.5-flsh", "gemini-2.5-flash-lit", "gemini-25-flash", "gemini-9"):
        assert not known_models.is_known(wrong), wrong
    assert known_models.closest("gemini-2.5-flsh")[0] == "gemini-2.5-flash"
    for other in ("claude-sonnet-4-5", "gpt-4o", "openai/gpt-4o", "projects/p/x/gemini-9"):
        assert not known_models.is_judged(other)
