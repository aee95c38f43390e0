"""`prompts:` on an LLM agent: the harness's sections of its system prompt, each on (the
default), off (`false`) or replaced by a file's text."""

from __future__ import annotations

from pydantic import Field

from agentspec.language.common import FilePath, Model

__all__ = ["PROMPT_SECTIONS", "Prompts"]

_SECTION = ("`true` (the default): the section agentspec writes; `false`: none; a file "
            "relative to the spec: its text instead.")


class Prompts(Model):
    """The harness's sections of the system prompt, added after the agent's instruction for
    each feature it has (as deepagents' middlewares add theirs)."""

    base: bool | FilePath = Field(True, description="`kind: deep` only: how the agent works "
                                  "through a task. " + _SECTION)
    filesystem: bool | FilePath = Field(True, description="With file tools: how to find, read "
                                        "(100 lines at a time), edit and write files. "
                                        + _SECTION)
    execute: bool | FilePath = Field(True, description="With `execute`: how to run commands. "
                                     + _SECTION)
    todos: bool | FilePath = Field(True, description="With `todos`: when and how to plan with "
                                   "`write_todos`. " + _SECTION)
    task: bool | FilePath = Field(True, description="With `task`: when to hand work to a "
                                  "sub-agent and what to tell it. " + _SECTION)
    skills: bool | FilePath = Field(True, description="With `skills`: when to load a skill. "
                                    + _SECTION)
    memory: bool | FilePath = Field(True, description="With `memory`: the header of the memory "
                                    "block (how to use and update the files). " + _SECTION)


PROMPT_SECTIONS = tuple(Prompts.model_fields)
