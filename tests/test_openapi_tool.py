"""`openapi` tools: ADK's OpenAPIToolset over a project file, called by a scripted agent
against a real HTTP server on loopback that the document describes. The server records what
it received, so the credential is checked where it lands, and approvals by what ran."""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from agentspec.compiler import build_objects, compile_spec, emit_package, write_package
from agentspec.contract.openapi import tool_names
from agentspec.runtime.harness.approvals import Decision
from tests.buildkit import approved_turn, package_loader, scripted_turn, service_account_key
from tests.spec_defaults import spec_openapi_toolset

TOKEN = "pet-t0ken-from-env"

DOCUMENT = """\
openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "http://127.0.0.1:1/unused"}]
paths:
  /pets:
    get:
      operationId: listPets
      summary: Lists the pets.
      responses: {"200": {description: the pets}}
  /pets/{petId}:
    parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
    get:
      operationId: showPetById
      summary: One pet.
      responses: {"200": {description: the pet}}
    delete:
      operationId: deletePet
      summary: Deletes a pet.
      responses: {"200": {description: gone}}
"""

SPEC = """\
agentspec: 1
name: {name}
tools:
  petstore:
    openapi: apis/petstore.yaml
    operations: [show_pet_by_id, delete_pet]
    prefix: pets
    server: "${{env.PETSTORE_URL}}"
    private_network: true
    auth: {auth}
agents:
  lead:
    model: gemini-2.5-flash
    instruction: Help with pets.
    tools: [petstore]
    interrupt_on: {{delete_pet: true}}
"""
BEARER = '{bearer: "${env.PET_TOKEN}"}'
API_KEY = '{api_key: {header: X-Pet-Key, value: "${env.PET_TOKEN}"}}'


@dataclass
class Api:
    url: str
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


@pytest.fixture
def api() -> Iterator[Api]:
    """A pet store on loopback (port 0): it records each request and answers JSON."""
    seen: list[tuple[str, str, dict[str, str]]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.append((self.command, self.path, headers))
            if TOKEN not in (headers.get("x-pet-key"), headers.get("authorization", "")[7:]):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"id": self.path.rsplit("/", 1)[-1], "name": "Rex"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_DELETE = _answer

        def do_POST(self) -> None:  # noqa: N802 - a token endpoint (service accounts)
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            seen.append(("POST", self.path, {"body": body}))
            answer = json.dumps({"access_token": TOKEN, "expires_in": 3600,
                                 "token_type": "Bearer"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Api(f"http://127.0.0.1:{server.server_address[1]}/v1", seen)
    finally:
        server.shutdown()
        server.server_close()


def _project(tmp_path: Path, auth: str = BEARER, name: str = "pets") -> Path:
    (tmp_path / "apis").mkdir(exist_ok=True)
    (tmp_path / "apis" / "petstore.yaml").write_text(DOCUMENT)
    (tmp_path / "agent.yaml").write_text(SPEC.format(name=name, auth=auth))
    return tmp_path / "agent.yaml"


def _env(api: Api, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    environ = {"PET_TOKEN": TOKEN, "PETSTORE_URL": api.url}
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    return environ


def _live(path: Path, environ: dict[str, str]) -> Any:
    compiled = compile_spec(path, environ=environ)
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    app, problems = build_objects(compiled)
    assert problems == [], problems
    return app


SHOW = {"lead": [{"call": "pets_show_pet_by_id", "args": {"pet_id": "7"}},
                 {"text": "Rex."}]}


@pytest.mark.parametrize("auth, header, sent", [
    (BEARER, "authorization", f"Bearer {TOKEN}"), (API_KEY, "x-pet-key", TOKEN)])
def test_the_agent_calls_an_operation_with_the_credential(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch, auth: str, header: str,
        sent: str) -> None:
    app = _live(_project(tmp_path, auth), _env(api, monkeypatch))
    said = scripted_turn(app, SHOW)
    assert [(m, p) for m, p, _ in api.seen] == [("GET", "/v1/pets/7")]
    assert api.seen[0][2][header] == sent
    assert ("pets_show_pet_by_id", {"id": "7", "name": "Rex"}) in said.results
    declared = said.models["lead"].requests[0].config.tools[0].function_declarations
    # the filter and the prefix: only the chosen operations, named as the model sees them
    assert sorted(d.name for d in declared) == ["pets_delete_pet", "pets_show_pet_by_id"]
    assert not any(TOKEN in str(d) for d in declared)


def test_a_wrong_credential_is_refused_by_the_server_and_the_model_is_told(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    environ = _env(api, monkeypatch)
    environ["PET_TOKEN"] = "wrong"
    monkeypatch.setenv("PET_TOKEN", "wrong")
    app = _live(_project(tmp_path, API_KEY), environ)
    said = scripted_turn(app, SHOW)
    assert len(api.seen) == 1 and api.seen[0][2]["x-pet-key"] == "wrong"
    (tool, result), = said.results
    assert tool == "pets_show_pet_by_id" and "Status Code: 401" in result["error"]
    assert "wrong" not in json.dumps(result)


def test_the_generated_package_reads_the_document_and_holds_no_secret(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _project(tmp_path, name="pets_package")
    compiled = compile_spec(path, environ=_env(api, monkeypatch))
    assert compiled.ok
    files = emit_package(compiled, tmp_path / "out")
    assert write_package(files, tmp_path / "out") == []
    text = "\n".join(files.values())
    assert "spec_path('apis/petstore.yaml')" in text and "${env.PET_TOKEN}" in text
    assert TOKEN not in text and api.url not in text
    with package_loader(monkeypatch) as load:
        app = load(tmp_path / "out", "pets_package")
        said = scripted_turn(app, SHOW)
    assert api.seen[0][2]["authorization"] == f"Bearer {TOKEN}"
    assert ("pets_show_pet_by_id", {"id": "7", "name": "Rex"}) in said.results


@pytest.mark.parametrize("kind", ["approve", "reject"])
def test_an_operation_waits_for_approval(tmp_path: Path, api: Api,
                                         monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """`interrupt_on` names the operation unprefixed; the call the model makes (prefixed)
    waits, and reaches the server only when a person approves it."""
    app = _live(_project(tmp_path), _env(api, monkeypatch))
    asked = approved_turn(app, {"lead": [{"call": "pets_delete_pet", "args": {"pet_id": "7"}},
                                         {"text": "Done."}]},
                          Decision(kind, message="no" if kind == "reject" else None))
    assert [(p.tool, p.args) for p in asked] == [("pets_delete_pet", {"pet_id": "7"})]
    ran = [(m, p) for m, p, _ in api.seen]
    assert ran == ([("DELETE", "/v1/pets/7")] if kind == "approve" else [])


NAMES_DOCUMENT = {
    "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/users/{id}": {"get": {"operationId": "getUserByID", "responses": {}},
                        "put": {"responses": {}}},
        "/HTTPStatus": {"post": {"operationId": "REST API call", "responses": {}}},
        "/same": {"get": {"operationId": "dup", "responses": {}},
                  "post": {"operationId": "dup", "responses": {}}},
        "/ref": {"$ref": "#/components/x"},
        "/long": {"get": {"operationId": "a" * 70, "responses": {}}},
    },
    "components": {"x": {"get": {"operationId": "viaRef", "responses": {}}}},
}


def test_validate_names_operations_as_adk_does() -> None:
    """validate names the operations without importing ADK; ADK's own parse agrees."""
    from google.adk.tools.openapi_tool import OpenAPIToolset

    adk = [tool.name for tool in OpenAPIToolset(spec_dict=NAMES_DOCUMENT)._tools]
    assert list(tool_names(NAMES_DOCUMENT)) == adk
    assert "get_user_by_id" in adk and "dup_2" in adk and "via_ref" in adk


def test_the_document_is_read_again_when_the_app_is_loaded(tmp_path: Path) -> None:
    """A document gone since validate ran is an error naming the file, not ADK's."""
    from agentspec.runtime.openapi import OpenApiDocumentError

    with pytest.raises(OpenApiDocumentError, match="petstore.yaml"):
        spec_openapi_toolset(tmp_path / "petstore.yaml")
    for text, problem in (("- a list\n", "not a mapping"),
                          (GOOD.replace("summary: One pet.", "parameters: 5"),
                           "ADK cannot turn the OpenAPI document .* into tools: TypeError")):
        (tmp_path / "petstore.yaml").write_text(text)
        with pytest.raises(OpenApiDocumentError, match=problem):
            spec_openapi_toolset(tmp_path / "petstore.yaml")


def _codes(tmp_path: Path, document: str, tool: str) -> list[str]:
    from agentspec.validate.check import check

    (tmp_path / "api.yaml").write_text(textwrap.dedent(document))
    (tmp_path / "agent.yaml").write_text(textwrap.dedent(f"""\
        agentspec: 1
        name: checked
        tools:
          api: {tool}
        agents:
          lead: {{model: gemini-2.5-flash, instruction: Go., tools: [api]}}
        """))
    return [f"{d.code} {Path(d.span.file).name if d.span else ''}" for d in
            check(tmp_path / "agent.yaml").diagnostics if d.is_error]


GOOD = DOCUMENT.replace("http://127.0.0.1:1/unused", "https://pets.example.com/v1")


@pytest.mark.parametrize("document, tool, expected", [
    (GOOD, "{openapi: api.yaml}", []),
    (GOOD, "{openapi: missing.yaml}", ["AS218 agent.yaml"]),
    ("openapi: [unclosed\n", "{openapi: api.yaml}", ["AS327 api.yaml"]),
    ("swagger: '2.0'\npaths: {}\n", "{openapi: api.yaml}", ["AS327 api.yaml"]),
    (GOOD.replace("summary: One pet.", "$ref: 'other.yaml#/x'"), "{openapi: api.yaml}",
     ["AS327 api.yaml"]),
    (GOOD, "{openapi: api.yaml, operations: [list_pet]}", ["AS328 agent.yaml"]),
    (GOOD.replace("servers: [{url: \"https://pets.example.com/v1\"}]\n", ""),
     "{openapi: api.yaml}", ["AS329 agent.yaml"]),
    (GOOD, "{openapi: api.yaml, server: /v1}", ["AS329 agent.yaml"]),
    (GOOD, "{openapi: api.yaml, server: 'http://10.0.0.4/v1'}", ["AS330 agent.yaml"]),
    (GOOD, "{openapi: api.yaml, server: 'http://10.0.0.4/v1', private_network: true}", []),
    (GOOD, "{openapi: api.yaml, auth: {bearer: plain-text}}", ["AS255 agent.yaml"]),
])
def test_validate_checks_the_document(tmp_path: Path, document: str, tool: str,
                                      expected: list[str]) -> None:
    assert _codes(tmp_path, document, tool) == expected


def test_a_document_through_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir(), outside.mkdir()
    (outside / "api.yaml").write_text(GOOD)
    (project / "api.yaml").symlink_to(outside / "api.yaml")
    assert _codes_in(project, "{openapi: api.yaml}") == ["AS242"]


def _codes_in(project: Path, tool: str) -> list[str]:
    from agentspec.validate.check import check

    (project / "agent.yaml").write_text(textwrap.dedent(f"""\
        agentspec: 1
        name: checked
        tools:
          api: {tool}
        agents:
          lead: {{model: gemini-2.5-flash, instruction: Go., tools: [api]}}
        """))
    return [d.code for d in check(project / "agent.yaml").diagnostics if d.is_error]


def test_diff_sees_an_operation_the_document_gained(tmp_path: Path) -> None:
    """The same spec over two versions of the document: the new operation is a high-risk
    change, though the spec itself did not change."""
    from agentspec.review.diff import compare, load_side

    sides = []
    for name, document in (("old", GOOD.replace("    delete:\n      operationId: deletePet",
                                                 "    patch:\n      operationId: renamePet")),
                           ("new", GOOD)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "api.yaml").write_text(document)
        (folder / "agent.yaml").write_text(
            "agentspec: 1\nname: pets\ntools:\n  api: {openapi: api.yaml}\nagents:\n"
            "  lead: {model: gemini-2.5-flash, instruction: Go., tools: [api]}\n")
        sides.append(load_side(folder / "agent.yaml", f"{name}/agent.yaml", environment=None,
                               environ={}))
    changes = compare(*sides)
    assert [(c.change, c.risk, c.reason) for c in changes] == [
        ("openapi-operations-changed", "high",
         "`api` gains the operations `delete_pet`: new capabilities"),
        ("openapi-operations-changed", "low", "`api` loses the operations `rename_pet`")]


def test_the_graph_lists_the_operations_the_model_gets(tmp_path: Path) -> None:
    from agentspec.review.graph import graph, to_mermaid

    path = _project(tmp_path)
    compiled = compile_spec(path, environ={"PET_TOKEN": TOKEN, "PETSTORE_URL": "http://x"})
    assert compiled.app is not None, compiled.diagnostics
    drawn = to_mermaid(graph(compiled.app))
    assert "tools: petstore (openapi: pets_show_pet_by_id, pets_delete_pet (approval))" in drawn
    assert TOKEN not in drawn


def test_a_scenario_stubs_an_operation_and_knows_its_name(tmp_path: Path,
                                                          api: Api) -> None:
    """`agentspec test` declares the operations the document gives and answers them from
    `stubs`: the server is never called; a misspelt operation is the scenario file's error."""
    from agentspec.api import SpecError, run_scenarios

    path = _project(tmp_path)
    (tmp_path / "scenarios").mkdir()
    scenario = tmp_path / "scenarios" / "agent.yaml"
    scenario.write_text(textwrap.dedent(f"""\
        env: {{PET_TOKEN: not-a-real-token, PETSTORE_URL: "{api.url}"}}
        scenarios:
          - name: shows a pet
            messages: [Show pet 7]
            replies:
              lead:
                - {{call: pets_show_pet_by_id, args: {{pet_id: "7"}}}}
                - {{text: Rex.}}
            stubs: {{pets_show_pet_by_id: {{id: "7", name: Rex}}}}
            expect: {{tools: [pets_show_pet_by_id], final: {{contains: Rex}}}}
          - name: an operation without a stub calls no API, and fails the scenario
            messages: [Show pet 7]
            replies:
              lead:
                - {{call: pets_show_pet_by_id, args: {{pet_id: "7"}}}}
                - {{text: No answer.}}
            expect: {{tools: [pets_show_pet_by_id]}}
        """))
    run = run_scenarios(path)
    first, second = run.results
    assert first.failures == () and api.seen == []
    assert second.failures == ("unexpected error: tool `pets_show_pet_by_id` of agent `lead` "
                               "returned an error: pets_show_pet_by_id calls a REST API, which "
                               "scenario tests do not call; give it a result under `stubs`.",)
    scenario.write_text(scenario.read_text().replace("stubs: {pets_show_pet_by_id",
                                                     "stubs: {pets_show_pet"))
    with pytest.raises(SpecError) as raised:
        run_scenarios(path)
    assert "pets_show_pet_by_id" in str([d.hint for d in raised.value.diagnostics])


def test_a_service_account_signs_in_and_calls_with_its_token(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key (whole, from the environment) signs a JWT that the token endpoint (the key's
    `token_uri`, on loopback) exchanges for an access token; the API gets that token."""
    from google.auth import jwt

    key, public = service_account_key(api.url.removesuffix("/v1") + "/token")
    environ = {**_env(api, monkeypatch), "PET_SA_KEY": key}
    monkeypatch.setenv("PET_SA_KEY", key)
    auth = ('{service_account: {key: "${env.PET_SA_KEY}", '
            'scopes: ["https://www.googleapis.com/auth/cloud-platform"]}}')
    app = _live(_project(tmp_path, auth), environ)
    said = scripted_turn(app, SHOW)
    (method, path, form), (get, pet, headers) = api.seen
    assert (method, path, get, pet) == ("POST", "/token", "GET", "/v1/pets/7")
    assertion = dict(p.split("=", 1) for p in form["body"].split("&"))["assertion"]
    claims = jwt.decode(assertion, certs=public.decode(), verify=True)  # signed by the key
    assert claims["iss"] == "agent@pets-project.iam.gserviceaccount.com"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert ("pets_show_pet_by_id", {"id": "7", "name": "Rex"}) in said.results
    files = emit_package(compile_spec(_project(tmp_path, auth), environ=environ),
                         tmp_path / "out")
    assert "PRIVATE KEY" not in "\n".join(files.values())


def test_an_unusable_service_account_key_stops_the_load_without_showing_it(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.tool_auth import auth_credential

    key, _ = service_account_key("http://127.0.0.1:1/token")
    broken = key.replace('"client_email"', '"email"')
    for value, reason in ((broken, "lacks `client_email`"), ("{not json", "not JSON"),
                          ('{"type": "user"}', "not a service account")):
        with pytest.raises(ValueError, match=reason) as raised:
            auth_credential("service_account", key=value)
        assert "PRIVATE KEY" not in str(raised.value)


def test_openid_connect_asks_the_front_end_to_sign_in(tmp_path: Path, api: Api,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a token, the operation answers that it waits for the person's sign-in, and
    ADK asks the client with `adk_request_credential` carrying the provider's endpoints."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from agentspec.testing.scripted import install_script

    environ = {**_env(api, monkeypatch), "OIDC_SECRET": "cl1ent-secret"}
    monkeypatch.setenv("OIDC_SECRET", "cl1ent-secret")
    auth = ("{openid_connect: {authorization_url: 'https://id.example.invalid/authorize', "
            "token_url: 'https://id.example.invalid/token', scopes: [openid, email], "
            "client_id: pets-client, client_secret: '${env.OIDC_SECRET}'}}")
    app = _live(_project(tmp_path, auth), environ)
    asked: list[Any] = []

    async def main() -> None:
        install_script(app.root_agent, SHOW)
        runner = InMemoryRunner(app=app)
        try:
            session = await runner.session_service.create_session(app_name=app.name,
                                                                  user_id="u")
            message = types.Content(role="user", parts=[types.Part(text="Show pet 7")])
            async for event in runner.run_async(user_id="u", session_id=session.id,
                                                new_message=message):
                asked.extend(c for c in event.get_function_calls()
                             if c.name == "adk_request_credential")
        finally:
            await runner.close()

    asyncio.run(main())
    assert api.seen == []  # nothing is called before the person signs in
    config = asked[0].args["authConfig"]
    assert config["authScheme"]["token_endpoint"] == "https://id.example.invalid/token"
    assert config["authScheme"]["scopes"] == ["openid", "email"]
    assert config["rawAuthCredential"]["oauth2"]["clientId"] == "pets-client"


def test_a_python_function_receives_the_service_accounts_token(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    key, _ = service_account_key(api.url.removesuffix("/v1") + "/token")
    monkeypatch.setenv("FN_SA_KEY", key)
    (tmp_path / "hooks.py").write_text(textwrap.dedent('''\
        def whoami(query: str, credential=None) -> dict:
            """Says which token it was given."""
            http = credential.http if credential else None
            return {"token": http.credentials.token if http else None}
        '''))
    (tmp_path / "agent.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: fn_sa
        tools:
          whoami: {python: "hooks:whoami", auth: {service_account: {key: "${env.FN_SA_KEY}",
                   scopes: [calc]}}}
        agents:
          lead: {model: gemini-2.5-flash, instruction: Go., tools: [whoami]}
        """))
    app = _live(tmp_path / "agent.yaml", {"FN_SA_KEY": key})
    said = scripted_turn(app, {"lead": [{"call": "whoami", "args": {"query": "x"}},
                                        {"text": "Done."}]})
    assert ("whoami", {"token": TOKEN}) in said.results
    assert [path for _, path, _ in api.seen] == ["/token"]


OAUTH = ("{oauth: {authorization_url: 'https://id.example.invalid/authorize', "
         "token_url: '{token_url}', scopes: {pets: Read your pets}, client_id: pets-client, "
         "client_secret: '${env.OAUTH_SECRET}'}}")
CALLBACK = "http://127.0.0.1:8000/dev-ui/oauth2callback"  # where a front end gets the code


def signed_in(call_args: dict[str, Any]) -> dict[str, Any]:
    """What a front end answers to `adk_request_credential` once the person signed in: the
    request's auth config, with the redirect the provider sent back (code and state)."""
    config = json.loads(json.dumps(call_args["authConfig"]))
    oauth2 = config["exchangedAuthCredential"]["oauth2"]
    state = parse_qs(urlparse(oauth2["authUri"]).query)["state"][0]
    oauth2.update(authResponseUri=f"{CALLBACK}?code=c0de&state={state}",
                  redirectUri=CALLBACK, state=state)
    return config


def test_oauth_sign_in_round_trip_in_process(tmp_path: Path, api: Api,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from agentspec.testing.scripted import install_script

    environ = {**_env(api, monkeypatch), "OAUTH_SECRET": "cl1ent-secret"}
    monkeypatch.setenv("OAUTH_SECRET", "cl1ent-secret")
    token_url = api.url.removesuffix("/v1") + "/token"
    app = _live(_project(tmp_path, OAUTH.replace("{token_url}", token_url)), environ)
    said: list[Any] = []

    async def main() -> None:
        install_script(app.root_agent, SHOW)
        runner = InMemoryRunner(app=app)
        try:
            session = await runner.session_service.create_session(app_name=app.name,
                                                                  user_id="u")
            message = types.Content(role="user", parts=[types.Part(text="Show pet 7")])
            asked = []
            async for event in runner.run_async(user_id="u", session_id=session.id,
                                                new_message=message):
                asked += [c for c in event.get_function_calls()
                          if c.name == "adk_request_credential"]
            assert len(asked) == 1 and api.seen == []
            reply = types.Content(role="user", parts=[types.Part(
                function_response=types.FunctionResponse(
                    id=asked[0].id, name="adk_request_credential",
                    response=signed_in(asked[0].args)))])
            async for event in runner.run_async(user_id="u", session_id=session.id,
                                                new_message=reply):
                said.extend(event.get_function_responses())
        finally:
            await runner.close()

    asyncio.run(main())
    (post, token_path, form), (get, pet_path, headers) = api.seen
    assert (post, token_path, get, pet_path) == ("POST", "/token", "GET", "/v1/pets/7")
    assert "code=c0de" in form["body"]
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert [(r.name, r.response) for r in said] == [
        ("pets_show_pet_by_id", {"id": "7", "name": "Rex"})]


@pytest.mark.slow  # a server process
def test_oauth_sign_in_round_trip_through_adk_api_server(tmp_path: Path, api: Api) -> None:
    """The generated package served by `adk api_server`, its model the fake Gemini API: the
    run stops with `adk_request_credential`, the client posts the signed-in auth config as
    the function's response, ADK exchanges the code at the token endpoint, and the
    operation runs with the token (no browser: the client plays the front end)."""
    import httpx

    from tests.fakegemini import FakeGemini, serve
    from tests.test_wire import adk_server

    token_url = api.url.removesuffix("/v1") + "/token"
    environ = {"PETSTORE_URL": api.url, "OAUTH_SECRET": "cl1ent-secret"}
    path = _project(tmp_path, OAUTH.replace("{token_url}", token_url), name="pets_oauth")
    compiled = compile_spec(path, environ=environ)
    assert compiled.ok, compiled.diagnostics
    out = tmp_path / "out"
    assert write_package(emit_package(compiled, out), out) == []
    with serve(FakeGemini()) as fake:
        fake.load({"lead": [{"call": "pets_show_pet_by_id", "args": {"pet_id": "7"}},
                            {"text": "Your pet is Rex."}]})
        env = {**environ, "GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key",
               "ADK_DISABLE_LOAD_DOTENV": "1", "HOME": str(tmp_path)}
        with adk_server("api_server", out, env, tmp_path / "api_server.log") as url:
            client = httpx.Client(base_url=url, timeout=120)
            session = client.post("/apps/pets_oauth/users/u/sessions", json={}).json()["id"]

            def run(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
                ran = client.post("/run", json={
                    "app_name": "pets_oauth", "user_id": "u", "session_id": session,
                    "new_message": {"role": "user", "parts": parts}})
                assert ran.status_code == 200, ran.text
                return [p for event in ran.json()
                        for p in (event.get("content") or {}).get("parts") or []]

            first = run([{"text": "Show pet 7"}])
            [asked] = [p["functionCall"] for p in first if "functionCall" in p
                       and p["functionCall"]["name"] == "adk_request_credential"]
            assert api.seen == []  # nothing ran before the sign-in
            second = run([{"functionResponse": {"id": asked["id"],
                                                "name": "adk_request_credential",
                                                "response": signed_in(asked["args"])}}])
        assert fake.violations == [] and fake.script_problems == []
    (post, token_path, form), (get, pet_path, headers) = api.seen
    assert (post, token_path, get, pet_path) == ("POST", "/token", "GET", "/v1/pets/7")
    assert "code=c0de" in form["body"]
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert {"name": "pets_show_pet_by_id", "response": {"id": "7", "name": "Rex"}}.items() \
        <= next(p["functionResponse"] for p in second if "functionResponse" in p).items()
    assert any(p.get("text") == "Your pet is Rex." for p in second)
    assert "cl1ent-secret" not in (tmp_path / "api_server.log").read_text()


def test_an_empty_secret_stops_the_build_naming_the_scheme(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable set to "" (ADK would say only 'Invalid security scheme and credential
    combination' at the first call) is refused where the app is built."""
    environ = {**_env(api, monkeypatch), "PET_TOKEN": ""}
    monkeypatch.setenv("PET_TOKEN", "")
    compiled = compile_spec(_project(tmp_path, API_KEY), environ=environ)
    assert compiled.ok
    _, problems = build_objects(compiled)
    assert [p.code for p in problems] == ["AS403"]
    assert "the `api_key` credential of a tool's `auth` is empty" in problems[0].message


def _ref_bomb(width: int, depth: int) -> str:
    """A few kilobytes whose schemas refer `width` times to the next, `depth` deep."""
    schemas = {f"S{i}": {"type": "object", "properties": {
        f"p{j}": {"$ref": f"#/components/schemas/S{i + 1}"} for j in range(width)}}
        for i in range(depth)}
    schemas[f"S{depth}"] = {"type": "string"}
    return json.dumps({
        "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/x": {"post": {"operationId": "x", "requestBody": {"content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}},
            "responses": {"200": {"description": "ok"}}}}},
        "components": {"schemas": schemas}})


def test_references_that_expand_without_bound_are_refused(tmp_path: Path) -> None:
    """ADK puts each `$ref`'s target in its place when it loads a document: 4 KB of
    schemas referring six times to the next, twelve deep, made billions of values, and the
    build or the app load ran for ever. Validate refuses it (AS327), the load too; a schema
    that refers to itself (a tree) is fine."""
    from agentspec.runtime.openapi import OpenApiDocumentError

    bomb = _ref_bomb(6, 12)
    assert _codes(tmp_path, bomb, "{openapi: api.yaml}") == ["AS327 api.yaml"]
    with pytest.raises(OpenApiDocumentError, match="expands to more than 100,000 values"):
        spec_openapi_toolset(tmp_path / "api.yaml")
    tree = json.loads(_ref_bomb(1, 1))
    tree["components"]["schemas"]["S0"]["properties"]["p0"]["$ref"] = \
        "#/components/schemas/S0"
    assert _codes(tmp_path, json.dumps(tree), "{openapi: api.yaml}") == []


def test_an_operation_the_document_gained_after_the_build_is_not_offered(
        tmp_path: Path, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `operations`, the app offers the operations the spec was compiled (and its
    approvals named, and diff reviewed) with: a document edited afterwards that renames
    the gated `deletePet` to `removePet` gave the model an ungated `remove_pet` (the app
    reads the document when it loads)."""
    path = _project(tmp_path)
    spec = path.read_text().replace("    operations: [show_pet_by_id, delete_pet]\n", "")
    path.write_text(spec.replace("    prefix: pets\n", ""))
    compiled = compile_spec(path, environ=_env(api, monkeypatch))
    assert compiled.ok, [(d.code, d.message) for d in compiled.diagnostics]
    document = tmp_path / "apis" / "petstore.yaml"
    document.write_text(DOCUMENT.replace("deletePet", "removePet"))
    app, problems = build_objects(compiled)
    assert problems == []
    [toolset] = app.root_agent.tools
    names = sorted(tool.name for tool in asyncio.run(toolset.get_tools()))
    assert names == ["list_pets", "show_pet_by_id"]


def test_a_server_url_in_a_diagnostic_shows_no_secret(tmp_path: Path) -> None:
    """AS329/AS330 quote the server URL: its password and query values were printed as
    written (into CI logs), from the tool's `server` and from the document's `servers`."""
    from agentspec.validate.check import check

    document = GOOD.replace("https://pets.example.com/v1",
                            "http://admin:hunter2-pw@10.0.0.4/v1?key=qs-s3cret")
    (tmp_path / "api.yaml").write_text(document)
    (tmp_path / "agent.yaml").write_text(textwrap.dedent("""\
        agentspec: 1
        name: checked
        tools:
          api: {openapi: api.yaml}
          other: {openapi: api.yaml, server: "http://bob:lit-pw-1@10.0.0.5/v1?t=qs-t0ken"}
          bad: {openapi: api.yaml, server: "ftp://carol:ftp-pw-2@files.example.com/"}
        agents:
          lead: {model: gemini-2.5-flash, instruction: Go., tools: [api, other, bad]}
        """))
    found = check(tmp_path / "agent.yaml").diagnostics
    # AS287: the tool's own `server` goes into the package as written, so its secrets are
    # refused (the document's servers stay in the project's file)
    assert sorted(d.code for d in found) == ["AS287", "AS287", "AS329", "AS330", "AS330"]
    said = " ".join(f"{d.message} {d.hint}" for d in found)
    for secret in ("hunter2-pw", "qs-s3cret", "lit-pw-1", "qs-t0ken", "ftp-pw-2"):
        assert secret not in said, secret


def test_a_credential_written_in_the_server_is_refused_and_one_from_the_environment_is_not(
        tmp_path: Path) -> None:
    from agentspec.validate.check import check

    (tmp_path / "api.yaml").write_text(GOOD)
    for server, codes_found in (
            ("https://svc:pw-literal@pets.example.com/v1", ["AS287"]),
            ("https://pets.example.com/v1?api_key=k-literal", ["AS287"]),
            ("https://svc:${env.PETS_PW}@pets.example.com/v1", []),
            ("https://pets.example.com/v1?api_key=${env.PETS_KEY}", [])):
        (tmp_path / "agent.yaml").write_text(textwrap.dedent(f"""\
            agentspec: 1
            name: checked
            tools:
              api: {{openapi: api.yaml, server: "{server}"}}
            agents:
              lead: {{model: gemini-2.5-flash, instruction: Go., tools: [api]}}
            """))
        found = [d for d in check(tmp_path / "agent.yaml").diagnostics
                 if d.code not in ("AS236", "AS305")]  # AS305: the variables are unset here
        assert [d.code for d in found] == codes_found, (server, found)


def test_a_document_changed_into_a_bomb_after_validate_is_an_error_at_load(
        tmp_path: Path) -> None:
    """The app reads the document again when it loads: nested 200,000 deep it raised a
    RecursionError (a traceback, not the project's file named); YAML aliases nested ten
    deep (10^10 values from a few lines) are measured without walking each copy."""
    from agentspec.runtime.openapi import OpenApiDocumentError

    aliases = "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n"
                      for i in range(1, 11))
    for text, problem in (
            ('{"openapi": "3.0.0", "paths": ' + "[" * 200_000 + "]" * 200_000 + "}",
             "nests too deeply"),
            (f"openapi: 3.0.0\na0: &a0 x\n{aliases}paths: {{}}\n",
             "expands to more than 100,000 values")):
        (tmp_path / "api.yaml").write_text(text)
        with pytest.raises(OpenApiDocumentError, match=problem):
            spec_openapi_toolset(tmp_path / "api.yaml")


def test_a_server_with_a_token_in_its_user_part_is_refused_without_showing_it(
        tmp_path: Path) -> None:
    """`https://TOKEN@host` carries its secret as the user name: diff showed it as written
    (a redacted URL keeps the user), and so did AS330. It is refused now (AS287: the server
    is written into the package), so diff compares no such spec, and no message shows it."""
    from agentspec.review.diff import compare, load_side
    from agentspec.validate.check import check

    sides = []
    for name, token in (("old", "ghp-t0ken-abc"), ("new", "ghp-t0ken-xyz")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "api.yaml").write_text(GOOD)
        (folder / "agent.yaml").write_text(
            "agentspec: 1\nname: pets\ntools:\n"
            f"  api: {{openapi: api.yaml, server: 'https://{token}@api.example.com/v1'}}\n"
            "agents:\n  lead: {model: gemini-2.5-flash, instruction: Go., tools: [api]}\n")
        sides.append(load_side(folder / "agent.yaml", f"{name}/agent.yaml", environment=None,
                               environ={}))
    assert compare(*sides) == []
    for side in sides:
        assert [p.code for p in side.problems] == ["AS287"]
        assert not any("t0ken" in f"{p.message} {p.hint}" for p in side.problems)
    spec = tmp_path / "new" / "agent.yaml"
    spec.write_text(spec.read_text().replace("api.example.com", "10.0.0.4"))
    found = check(tmp_path / "new" / "agent.yaml").diagnostics
    assert sorted(p.code for p in found) == ["AS287", "AS330"]
    assert not any("t0ken" in f"{p.message} {p.hint}" for p in found)


@pytest.mark.parametrize(("url", "private"), [
    ("http://127.1/v1", True), ("http://0x7f000001/v1", True), ("http://2130706433/v1", True),
    ("http://0177.0.0.1/v1", True), ("http://10.1/v1", True), ("http://[::1]/v1", True),
    ("http://[::ffff:127.0.0.1]/v1", True), ("http://[2002:7f00:1::]/v1", True),
    ("http://[2002:808:808::]/v1", False),
    ("http://8.8.8.8/v1", False), ("http://134744072/v1", False),
    ("http://deadbeef/v1", False), ("https://pets.example.com/v1", False)])
def test_a_private_address_in_any_form_the_resolver_takes_is_private(url: str,
                                                                      private: bool) -> None:
    """`127.1`, hex and decimal IPv4 forms reach loopback too, and ADK refuses them when it
    calls: validate's AS330 must see them (134744072 is 8.8.8.8)."""
    from agentspec.contract.openapi import private_host

    assert private_host(url) is private
