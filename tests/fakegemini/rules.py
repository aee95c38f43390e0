"""The Gemini API's rules for a `generateContent` request, as the real service enforces them.

Each rule comes from the API's reference (the `FunctionDeclaration`, `Schema`,
`GenerationConfig` and `Content` messages of generativelanguage v1beta, google-genai's
`types.py` docstrings) or from the 400 the service answers when it is broken; the message of
each problem is worded like the service's. `problems(body, model)` lists them all; an empty
list is a request the real API accepts as far as these rules go.

Proto JSON takes both spellings of a field (`functionDeclarations`, `function_declarations`),
and google-genai sends a mix of them, so every lookup here accepts either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["FUNCTION_NAME", "JSON_SCHEMA_KEYWORDS", "problems"]

#: generativelanguage v1beta FunctionDeclaration.name: starts with a letter or an underscore;
#: letters, digits, underscores, colons, dots and dashes; at most 64 characters
FUNCTION_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
#: Schema.properties keys of `parameters` (the OpenAPI form): letters, digits, underscores
PARAMETER_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")

REQUEST_FIELDS = {"contents", "tools", "tool_config", "safety_settings", "system_instruction",
                  "generation_config", "cached_content", "labels", "model"}
CONTENT_FIELDS = {"role", "parts"}
PART_DATA = {"text", "inline_data", "function_call", "function_response", "file_data",
             "executable_code", "code_execution_result"}
PART_META = {"thought", "thought_signature", "video_metadata", "part_metadata",
             "media_resolution"}
TOOL_FIELDS = {"function_declarations", "google_search", "google_search_retrieval",
               "code_execution", "url_context", "retrieval", "computer_use", "file_search",
               "google_maps", "enterprise_web_search"}
DECLARATION_FIELDS = {"name", "description", "parameters", "parameters_json_schema",
                      "response", "response_json_schema", "behavior"}
GENERATION_FIELDS = {"temperature", "top_p", "top_k", "candidate_count", "max_output_tokens",
                     "stop_sequences", "response_mime_type", "response_schema",
                     "response_json_schema", "thinking_config", "seed", "presence_penalty",
                     "frequency_penalty", "response_logprobs", "logprobs",
                     "response_modalities", "media_resolution", "speech_config",
                     "enable_enhanced_civic_answers", "image_config"}
THINKING_FIELDS = {"thinking_budget", "include_thoughts", "thinking_level"}
#: the OpenAPI `Schema` message's fields (FunctionDeclaration.parameters, response_schema)
SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "max_items",
                 "min_items", "properties", "required", "min_properties", "max_properties",
                 "min_length", "max_length", "pattern", "example", "any_of",
                 "property_ordering", "default", "items", "minimum", "maximum"}
SCHEMA_TYPES = {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY",
                "OBJECT", "NULL"}
#: JSON Schema keywords the API supports in `*_json_schema` fields ("only the following
#: properties are supported"), plus `default` and `nullable`, which it also accepts
JSON_SCHEMA_KEYWORDS = {"$id", "$defs", "$ref", "$anchor", "type", "format", "title",
                        "description", "enum", "items", "prefixItems", "minItems", "maxItems",
                        "minimum", "maximum", "anyOf", "oneOf", "properties",
                        "additionalProperties", "required", "propertyOrdering", "default",
                        "nullable"}
JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
#: beside `$ref` only these may be set ("only description and default can be set alongside")
REF_SIBLINGS = {"description", "default"}
ROLES = {"user", "model"}


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def _fields(value: Mapping[str, Any]) -> dict[str, Any]:
    """A proto message's fields by their snake_case name, whichever spelling was sent."""
    return {_snake(k): v for k, v in value.items()}


class _Check:
    def __init__(self, model: str) -> None:
        self.model = model
        self.found: list[str] = []

    def bad(self, where: str, message: str) -> None:
        self.found.append(f"* GenerateContentRequest.{where}: {message}" if where
                          else message)

    def unknown(self, where: str, value: Mapping[str, Any], allowed: set[str]) -> dict[str, Any]:
        fields = _fields(value)
        for key in value:
            if _snake(key) not in allowed:
                self.found.append(f'Invalid JSON payload received. Unknown name "{key}" at '
                                  f"'{where}': Cannot find field.")
        return fields

    # --- the request ----------------------------------------------------------------------

    def request(self, body: Any) -> None:
        if not isinstance(body, Mapping):
            self.bad("", "Invalid JSON payload received: the body is not a JSON object.")
            return
        fields = self.unknown("", body, REQUEST_FIELDS)
        self.contents(fields.get("contents"))
        tools = fields.get("tools") or []
        declared = self.tools(tools)
        self.system_instruction(fields.get("system_instruction"))
        generation = fields.get("generation_config")
        json_output = False
        if generation is not None:
            json_output = self.generation(generation)
        if json_output and declared and not self.model.startswith("gemini-3"):
            self.bad("", "Function calling with a response mime type: 'application/json' is "
                         "unsupported")

    def contents(self, contents: Any) -> None:
        if not isinstance(contents, list) or not contents:
            self.bad("contents", "contents is not specified")
            return
        previous_calls: list[str] | None = None
        previous: str | None = None
        for index, content in enumerate(contents):
            where = f"contents[{index}]"
            if not isinstance(content, Mapping):
                self.bad(where, "must be a Content object")
                continue
            fields = self.unknown(where, content, CONTENT_FIELDS)
            role = fields.get("role")
            if role not in ROLES:
                self.bad(f"{where}.role", f"Please use a valid role: user, model (got {role!r}).")
            parts = fields.get("parts")
            if not isinstance(parts, list) or not parts:
                self.bad(f"{where}.parts", "contents.parts must not be empty.")
                previous = "other"
                previous_calls = None
                continue
            kinds = [self.part(f"{where}.parts[{i}]", p) for i, p in enumerate(parts)]
            named = [(k, _fields(p)[k].get("name", "")) for p, k in zip(parts, kinds, strict=True)
                     if k in ("function_call", "function_response")]
            calls = [name for k, name in named if k == "function_call"]
            responses = [name for k, name in named if k == "function_response"]
            if calls and role == "model" and previous not in ("user", "function_response"):
                self.bad("", "Please ensure that function call turn comes immediately after a "
                             "user turn or after a function response turn.")
            if responses:
                if previous_calls is None:
                    self.bad("", "Please ensure that function response turn comes immediately "
                                 "after a function call turn.")
                elif len(responses) != len(previous_calls):
                    self.bad("", "Please ensure that the number of function response parts is "
                                 "equal to the number of function call parts of the function "
                                 "call turn.")
                elif sorted(responses) != sorted(previous_calls):
                    self.bad(where, f"function responses {sorted(responses)} do not answer "
                                    f"the function calls {sorted(previous_calls)}")
            previous_calls = calls if calls and role == "model" else None
            previous = "function_response" if responses else ("call" if calls else role)

    def part(self, where: str, part: Any) -> str:
        if not isinstance(part, Mapping):
            self.bad(where, "must be a Part object")
            return ""
        fields = self.unknown(where, part, PART_DATA | PART_META)
        data = [k for k in fields if k in PART_DATA]
        if len(data) != 1:
            self.bad(where, "a Part holds exactly one of text, inline_data, function_call, "
                            f"function_response, ... (got {data or 'none'})")
            return ""
        kind = data[0]
        value = fields[kind]
        if kind == "text" and not isinstance(value, str):
            self.bad(f"{where}.text", "Invalid value: must be a string")
        if kind == "function_call":
            call = self.unknown(f"{where}.function_call", value, {"id", "name", "args"}) \
                if isinstance(value, Mapping) else {}
            if not FUNCTION_NAME.fullmatch(str(call.get("name", ""))):
                self.bad(f"{where}.function_call.name", f"invalid name {call.get('name')!r}")
            if "args" in call and not isinstance(call["args"], Mapping):
                self.bad(f"{where}.function_call.args", "Invalid value (type.googleapis.com/"
                                                        "google.protobuf.Struct)")
        if kind == "function_response":
            answer = self.unknown(f"{where}.function_response", value,
                                  {"id", "name", "response", "will_continue", "scheduling",
                                   "parts"}) if isinstance(value, Mapping) else {}
            if not FUNCTION_NAME.fullmatch(str(answer.get("name", ""))):
                self.bad(f"{where}.function_response.name",
                         f"invalid name {answer.get('name')!r}")
            if not isinstance(answer.get("response"), Mapping):
                self.bad(f"{where}.function_response.response",
                         "Invalid value (type.googleapis.com/google.protobuf.Struct)")
        return kind

    def system_instruction(self, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, Mapping):
            self.bad("system_instruction", "must be a Content object")
            return
        fields = self.unknown("system_instruction", value, CONTENT_FIELDS)
        for index, part in enumerate(fields.get("parts") or []):
            if self.part(f"system_instruction.parts[{index}]", part) != "text":
                self.bad(f"system_instruction.parts[{index}]", "only text parts are allowed")

    # --- tools ------------------------------------------------------------------------------

    def tools(self, tools: Any) -> list[str]:
        if not isinstance(tools, list):
            self.bad("tools", "must be a list")
            return []
        names: list[str] = []
        builtin = False
        for index, tool in enumerate(tools):
            where = f"tools[{index}]"
            if not isinstance(tool, Mapping):
                self.bad(where, "must be a Tool object")
                continue
            fields = self.unknown(where, tool, TOOL_FIELDS)
            builtin = builtin or any(k != "function_declarations" for k in fields)
            for number, declaration in enumerate(fields.get("function_declarations") or []):
                name = self.declaration(f"{where}.function_declarations[{number}]",
                                        declaration)
                if name in names:
                    self.bad(f"{where}.function_declarations[{number}].name",
                             f"Duplicate function declaration found: {name}")
                names.append(name)
        if builtin and names and not self.model.startswith("gemini-3"):
            self.bad("tools", "Tool use with function calling is unsupported")
        return names

    def declaration(self, where: str, declaration: Any) -> str:
        if not isinstance(declaration, Mapping):
            self.bad(where, "must be a FunctionDeclaration object")
            return ""
        fields = self.unknown(where, declaration, DECLARATION_FIELDS)
        name = fields.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name):
            self.bad(f"{where}.name", f"Invalid function name {name!r}. Must start with a "
                                      "letter or an underscore. Must be alphameric (a-z, A-Z, "
                                      "0-9), underscores (_), dots (.), colons (:) or dashes "
                                      "(-), with a maximum length of 64.")
        for openapi, json_schema in (("parameters", "parameters_json_schema"),
                                     ("response", "response_json_schema")):
            if openapi in fields and json_schema in fields:
                self.bad(where, f"{openapi} and {json_schema} are mutually exclusive")
        if "parameters" in fields:
            self.schema(f"{where}.parameters", fields["parameters"], parameters=True)
            if _fields(fields["parameters"]).get("type", "OBJECT").upper() != "OBJECT":
                self.bad(f"{where}.parameters.type", "must be OBJECT")
        if "response" in fields:
            self.schema(f"{where}.response", fields["response"])
        if "parameters_json_schema" in fields:
            schema = fields["parameters_json_schema"]
            self.json_schema(f"{where}.parameters_json_schema", schema, schema)
            if not isinstance(schema, Mapping) or schema.get("type") != "object":
                self.bad(f"{where}.parameters_json_schema",
                         "The schema must describe an object (type: object).")
        if "response_json_schema" in fields:
            schema = fields["response_json_schema"]
            self.json_schema(f"{where}.response_json_schema", schema, schema)
        return name if isinstance(name, str) else ""

    # --- schemas ----------------------------------------------------------------------------

    def schema(self, where: str, schema: Any, *, parameters: bool = False) -> None:
        """The OpenAPI-subset `Schema` message."""
        if not isinstance(schema, Mapping):
            self.bad(where, "must be a Schema object")
            return
        fields = self.unknown(where, schema, SCHEMA_FIELDS)
        kind = fields.get("type")
        if kind is not None and (not isinstance(kind, str) or kind.upper() not in SCHEMA_TYPES):
            self.bad(f"{where}.type", f'Invalid value at \'{where}.type\' '
                                      f'(type.googleapis.com/google.ai.generativelanguage.v1beta'
                                      f'.Type), {kind!r}')
        if "enum" in fields and (not isinstance(kind, str) or kind.upper() != "STRING"):
            self.bad(f"{where}.enum", "only allowed for STRING type")
        properties = fields.get("properties") or {}
        if not isinstance(properties, Mapping):
            self.bad(f"{where}.properties", "must be a map")
            properties = {}
        for key, value in properties.items():
            if parameters and not PARAMETER_NAME.fullmatch(str(key)):
                self.bad(f"{where}.properties[{key!r}]", "Parameter names must start with a "
                         "letter or an underscore and must only contain chars a-z, A-Z, 0-9, "
                         "or underscores with a maximum length of 64.")
            self.schema(f"{where}.properties[{key!r}]", value)
        self._required(where, fields.get("required"), properties)
        if "items" in fields:
            self.schema(f"{where}.items", fields["items"])
        for index, option in enumerate(fields.get("any_of") or []):
            self.schema(f"{where}.any_of[{index}]", option)

    def json_schema(self, where: str, schema: Any, root: Any) -> None:
        """A `*_json_schema` field: JSON Schema, only the keywords the API supports."""
        if isinstance(schema, bool):
            return
        if not isinstance(schema, Mapping):
            self.bad(where, "a JSON Schema is an object or a boolean")
            return
        for key in schema:
            if key not in JSON_SCHEMA_KEYWORDS:
                self.bad(where, f"JSON Schema keyword {key!r} is not supported (the API "
                                f"supports: {', '.join(sorted(JSON_SCHEMA_KEYWORDS))})")
        if "$ref" in schema:
            extra = {k for k in schema if not k.startswith("$")} - REF_SIBLINGS
            if extra:
                self.bad(where, f"$ref {schema['$ref']!r} was set alongside unsupported "
                                f"fields {sorted(extra)}. If a schema node has $ref set, then "
                                "only description and default can be set alongside it.")
            self._resolve(where, str(schema["$ref"]), root)
        kind = schema.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
        for each in kinds:
            if each not in JSON_TYPES:
                self.bad(f"{where}.type", f"unknown type {each!r}")
        if "enum" in schema and (not isinstance(schema["enum"], list) or not all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool)
                for v in schema["enum"])):
            self.bad(f"{where}.enum", "enum values are strings or numbers")
        properties = schema.get("properties") or {}
        if not isinstance(properties, Mapping):
            self.bad(f"{where}.properties", "must be an object")
            properties = {}
        for key, value in properties.items():
            self.json_schema(f"{where}.properties[{key!r}]", value, root)
        self._required(where, schema.get("required"), properties)
        for key in ("items", "additionalProperties"):
            if key in schema:
                self.json_schema(f"{where}.{key}", schema[key], root)
        for key in ("anyOf", "oneOf", "prefixItems"):
            for index, option in enumerate(schema.get(key) or []):
                self.json_schema(f"{where}.{key}[{index}]", option, root)
        for key, value in (schema.get("$defs") or {}).items():
            self.json_schema(f"{where}.$defs[{key!r}]", value, root)

    def _resolve(self, where: str, ref: str, root: Any) -> None:
        if not ref.startswith("#/$defs/") or not isinstance(root, Mapping) or \
                ref.removeprefix("#/$defs/") not in (root.get("$defs") or {}):
            self.bad(where, f"$ref {ref!r} does not resolve to an entry of $defs")

    def _required(self, where: str, required: Any, properties: Mapping[str, Any]) -> None:
        if required is None:
            return
        if not isinstance(required, list):
            self.bad(f"{where}.required", "must be a list of property names")
            return
        for index, name in enumerate(required):
            if name not in properties:
                self.bad(f"{where}.required[{index}]", "property is not defined")

    # --- generation config ------------------------------------------------------------------

    def generation(self, config: Any) -> bool:
        """Checks the config; whether it asks for JSON output."""
        if not isinstance(config, Mapping):
            self.bad("generation_config", "must be a GenerationConfig object")
            return False
        fields = self.unknown("generation_config", config, GENERATION_FIELDS)
        if "thinking_config" in fields and isinstance(fields["thinking_config"], Mapping):
            self.unknown("generation_config.thinking_config", fields["thinking_config"],
                         THINKING_FIELDS)
        temperature = fields.get("temperature")
        if temperature is not None and not 0 <= float(temperature) <= 2:
            self.bad("generation_config.temperature", "must be between 0 and 2")
        if "response_schema" in fields and "response_json_schema" in fields:
            self.bad("generation_config", "response_schema and response_json_schema are "
                                          "mutually exclusive")
        schema_set = "response_schema" in fields or "response_json_schema" in fields
        mime = fields.get("response_mime_type")
        if schema_set and mime not in ("application/json", "text/x.enum"):
            self.bad("generation_config.response_mime_type", "response_mime_type must be "
                     "application/json (or text/x.enum) when a response schema is set")
        if "response_schema" in fields:
            self.schema("generation_config.response_schema", fields["response_schema"])
        if "response_json_schema" in fields:
            schema = fields["response_json_schema"]
            self.json_schema("generation_config.response_json_schema", schema, schema)
        return mime == "application/json"


def problems(body: Any, model: str) -> list[str]:
    """Every rule of the Gemini API that the `generateContent` request `body` breaks."""
    check = _Check(model)
    check.request(body)
    return check.found
