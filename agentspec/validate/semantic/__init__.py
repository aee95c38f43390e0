"""Semantic checks over a structurally valid spec."""

from __future__ import annotations

from agentspec.diagnostics import Diagnostic
from agentspec.project_files import Project
from agentspec.resolve.document import SECTIONS, Document
from agentspec.source import SourceFile
from agentspec.validate.semantic.backend_sources import check_backend_sources
from agentspec.validate.semantic.code_executors import check_code_executors
from agentspec.validate.semantic.context import Context
from agentspec.validate.semantic.deep_summary import check_deep_summary
from agentspec.validate.semantic.files import check_files
from agentspec.validate.semantic.harness import check_harness
from agentspec.validate.semantic.kinds import check_kinds, check_sections
from agentspec.validate.semantic.models import check_models
from agentspec.validate.semantic.observing import check_observing
from agentspec.validate.semantic.openapi import check_openapi
from agentspec.validate.semantic.permissions import check_permissions
from agentspec.validate.semantic.placeholders import check_placeholders
from agentspec.validate.semantic.project import check_project
from agentspec.validate.semantic.prompts import check_prompts
from agentspec.validate.semantic.pyrefs import check_python_refs
from agentspec.validate.semantic.references import check_references
from agentspec.validate.semantic.roots import check_roots
from agentspec.validate.semantic.sandbox import check_sandboxes
from agentspec.validate.semantic.schemas import check_schemas
from agentspec.validate.semantic.sessions import check_resume_root, check_sessions
from agentspec.validate.semantic.state import check_state
from agentspec.validate.semantic.stores import check_stores
from agentspec.validate.semantic.summarization import check_history
from agentspec.validate.semantic.tool_auth import check_tool_auth
from agentspec.validate.semantic.tree import check_tree
from agentspec.validate.structural import Structure

__all__ = ["semantic"]

#: check_project first: the checks after it never look at a path it refused
CHECKS = (check_project, check_references, check_models, check_kinds, check_sections,
          check_sessions, check_harness, check_python_refs, check_files, check_prompts,
          check_sandboxes, check_roots, check_state, check_placeholders, check_schemas,
          check_observing, check_code_executors, check_backend_sources, check_tool_auth,
          check_deep_summary, check_permissions, check_stores, check_openapi)


def semantic(structure: Structure, doc: Document, sources: dict[str, SourceFile],
             project: Project) -> tuple[str | None, list[Diagnostic]]:
    """Run every check; return the root agent's name (when there is one) and diagnostics."""
    defined = {section: set(doc.section(section)) for section in SECTIONS}
    broken = {str(path[1]) for path in structure.broken if path[0] == "agents"}
    ctx = Context(structure.spec, doc, sources, defined, project, broken)
    for check in CHECKS:
        check(ctx)
    root = check_tree(ctx)
    check_history(ctx, root)
    check_resume_root(ctx, root)
    return root, ctx.diagnostics
