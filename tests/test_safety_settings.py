"""`generate.safety_settings`: the words validate accepts are google.genai's, and both
emitters hand them to ADK as typed SafetySettings."""

from __future__ import annotations

from pathlib import Path

from agentspec.compiler import build_objects, compile_spec, emit_package
from agentspec.language.models import HARM_BLOCK_METHODS, HARM_BLOCK_THRESHOLDS, HARM_CATEGORIES

SPEC = """\
agentspec: 1
name: safe_app
models:
  careful:
    id: gemini-2.5-flash
    generate:
      safety_settings:
        - {category: HARM_CATEGORY_HATE_SPEECH, threshold: BLOCK_LOW_AND_ABOVE}
agents:
  writer:
    model: careful
    instruction: Write.
    generate:
      temperature: 0.3
      safety_settings:
        - {category: HARM_CATEGORY_DANGEROUS_CONTENT, threshold: BLOCK_ONLY_HIGH,
           method: SEVERITY}
        - {category: HARM_CATEGORY_HARASSMENT, threshold: "OFF"}
"""


def test_the_words_are_google_genais() -> None:
    from google.genai import types

    def values(enum: type) -> set[str]:
        return {m.value for m in enum} - {m.value for m in enum if m.value.endswith(
            "UNSPECIFIED")}

    assert set(HARM_CATEGORIES) == values(types.HarmCategory)
    assert set(HARM_BLOCK_THRESHOLDS) == values(types.HarmBlockThreshold)
    assert set(HARM_BLOCK_METHODS) == values(types.HarmBlockMethod)


def test_built_as_typed_safety_settings(tmp_path: Path) -> None:
    from google.genai import types

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    compiled = compile_spec(spec, environ={})
    assert compiled.ok, compiled.diagnostics
    app, problems = build_objects(compiled)
    assert problems == []
    config = app.root_agent.generate_content_config
    assert config.temperature == 0.3
    assert config.safety_settings == [  # the agent's list replaces the model's
        types.SafetySetting(category=types.HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT,
                            threshold=types.HarmBlockThreshold.BLOCK_ONLY_HIGH,
                            method=types.HarmBlockMethod.SEVERITY),
        types.SafetySetting(category=types.HarmCategory.HARM_CATEGORY_HARASSMENT,
                            threshold=types.HarmBlockThreshold.OFF)]
    source = emit_package(compiled, tmp_path / "out")
    agent_py = next(text for path, text in source.items() if path.name == "agent.py")
    assert "'threshold': 'OFF'" in agent_py and "'method': 'SEVERITY'" in agent_py
