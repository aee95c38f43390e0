"""What a spec says about watching its runs: tracing (`telemetry`), token budgets (`budget`)
and model prices (`price` on a model definition)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentspec.language.common import Model

__all__ = ["Budget", "BudgetLimit", "Price", "Telemetry"]


class Telemetry(Model):
    """Tracing through ADK's OpenTelemetry spans, with agentspec's attributes beside ADK's.
    The standard `OTEL_*` environment variables win over these fields."""

    exporter: Literal["otlp", "console", "none"] = Field(
        description="`otlp`: send spans to an OpenTelemetry collector (needs "
        "agentspec-adk[telemetry]); `console`: print them to standard error; `none`: no "
        "tracing (`OTEL_TRACES_EXPORTER` wins).", examples=["otlp"])
    endpoint: str | None = Field(
        None, description="`otlp`: the collector's URL (default `http://localhost:4318`, "
        "`http://localhost:4317` with `protocol: grpc`); `/v1/traces` is added for HTTP "
        "unless the URL ends with it (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and "
        "`OTEL_EXPORTER_OTLP_ENDPOINT` win).", examples=["http://localhost:4318"],
        min_length=1, max_length=2048)
    protocol: Literal["http", "grpc"] = Field(
        "http", description="`otlp`: OTLP over HTTP (protobuf) or gRPC "
        "(`OTEL_EXPORTER_OTLP_PROTOCOL` wins).")
    headers: dict[str, str] | None = Field(
        None, description="`otlp`: request headers; write secrets as `${env.NAME}` (read "
        "when the app runs, never written or printed; `OTEL_EXPORTER_OTLP_HEADERS` wins).",
        examples=[{"x-honeycomb-team": "${env.HONEYCOMB_API_KEY}"}])
    service_name: str | None = Field(
        None, description="The traces' `service.name` (default: the spec's `name`; "
        "`OTEL_SERVICE_NAME` wins).", examples=["support-desk"], min_length=1,
        max_length=256)
    sampling: float = Field(
        1.0, ge=0, le=1, description="Share of runs traced, 0 to 1 (`OTEL_TRACES_SAMPLER` "
        "wins).", examples=[0.1])
    record_content: bool = Field(
        False, description="Record prompt and response text (and tool arguments and "
        "results) on the spans. Off by default: they may hold personal data.")


class Price(Model):
    """What a model costs, in US dollars per million tokens."""

    input: float = Field(ge=0, description="Per million prompt tokens (not cached).",
                         examples=[1.25])
    output: float = Field(ge=0, description="Per million output tokens, thinking included.",
                          examples=[10.0])
    cached: float | None = Field(None, ge=0, description="Per million prompt tokens read from "
                                 "a context cache (default: the `input` price).",
                                 examples=[0.31])


class BudgetLimit(Model):
    """Limits on what one run or one job may spend; the next model call is refused once one
    is reached."""

    tokens: int | None = Field(None, ge=1, description="Total tokens (prompt and output) of "
                               "every model call.", examples=[200000])
    cost: float | None = Field(None, gt=0, description="US dollars, from the models' prices; "
                               "a call to a model of unknown price stops the run.",
                               examples=[0.5])


class Budget(Model):
    """Spending limits, checked before each model call."""

    run: BudgetLimit | None = Field(None, description="Per run: one user message and "
                                    "everything it causes (sub-agents, tools, routers).")
    job: BudgetLimit | None = Field(None, description="Per background job "
                                    "(`execution_mode: offline`), each attempt counted "
                                    "alone.")
