"""The official Python MCP SDK as the client of our example server over stdio: list the
tools, call each, check schemas, results, isError and structured content.

Run by scripts/test.sh as `pytest interop/` with the server binary in MCP_SERVER_BIN
(default: the conformance-server example's debug build).
"""

import asyncio
import base64
import json
import os
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from harness import example_binary

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("MCP_SERVER_BIN") or example_binary("conformance-server")
DIALECT = "https://json-schema.org/draft/2020-12/schema"

EXPECTED_TOOLS = {
    "get_weather",
    "add",
    "delete_note",
    "sleep",
    "whoami",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    # The diagnostic tools of the suite's 2026-07-28 scenarios.
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_region_header",
    # interop/conformance_input_tools.rs: they ask through McpPeer::ask.
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    # interop/conformance_task_tools.rs: tools that run as MCP tasks.
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
}


def run(scenario, **session_kwargs):
    """Runs `scenario(session)` against a fresh stdio server and returns its result."""

    async def main():
        params = StdioServerParameters(command=SERVER, args=[])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as session:
                init = await session.initialize()
                assert init.serverInfo.name == "agent-mcp-conformance"
                return await asyncio.wait_for(scenario(session), timeout=30)

    return asyncio.run(main())


def only_text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_server_binary_exists():
    assert Path(SERVER).exists(), f"build it first: cargo build -p agent-examples --example conformance-server ({SERVER})"


def test_lists_every_tool_with_2020_12_schemas():
    tools = run(lambda s: s.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == EXPECTED_TOOLS
    for tool in tools:
        assert tool.description, tool.name
        schema = tool.inputSchema
        assert schema["$schema"] == DIALECT, tool.name
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name

    weather = by_name["get_weather"]
    assert weather.inputSchema["required"] == ["city"]
    assert weather.inputSchema["properties"]["city"]["description"] == 'City name, e.g. "Beijing"'
    assert weather.outputSchema["type"] == "object"
    assert set(weather.outputSchema["properties"]) == {"city", "temperature", "unit", "conditions"}
    assert weather.title == "Weather lookup"
    assert weather.annotations.readOnlyHint is True
    assert weather.annotations.openWorldHint is True

    add = by_name["add"]
    assert add.annotations.idempotentHint is True
    assert sorted(add.inputSchema["required"]) == ["a", "b"]

    # 2020-12 keywords survive: $defs with an $anchor, $ref into them, composition and
    # conditionals, additionalProperties.
    schema = by_name["json_schema_2020_12_tool"].inputSchema
    assert set(schema["$defs"]["address"]["properties"]) == {"street", "city"}
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["properties"]["address"] == {"$ref": "#/$defs/address"}
    assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
    assert schema["then"] == {"required": ["phone"]}
    assert schema["else"] == {"required": ["email"]}


def test_text_image_audio_and_resources():
    async def scenario(s):
        return [
            await s.call_tool("test_simple_text", {}),
            await s.call_tool("test_image_content", {}),
            await s.call_tool("test_audio_content", {}),
            await s.call_tool("test_embedded_resource", {}),
            await s.call_tool("test_multiple_content_types", {}),
        ]

    text, image, audio, resource, mixed = run(scenario)
    for result in (text, image, audio, resource, mixed):
        assert result.isError is False

    assert only_text(text) == "This is a simple text response for testing."

    [block] = image.content
    assert block.type == "image" and block.mimeType == "image/png"
    assert base64.b64decode(block.data).startswith(b"\x89PNG")

    [block] = audio.content
    assert block.type == "audio" and block.mimeType == "audio/wav"
    assert base64.b64decode(block.data).startswith(b"RIFF")

    [block] = resource.content
    assert block.type == "resource"
    assert str(block.resource.uri) == "test://embedded-resource"
    assert block.resource.mimeType == "text/plain"
    assert block.resource.text == "This is an embedded resource content."

    assert [c.type for c in mixed.content] == ["text", "image", "resource"]
    assert json.loads(mixed.content[2].resource.text) == {"test": "data", "value": 123}


def test_structured_content_with_json_text():
    result = run(lambda s: s.call_tool("get_weather", {"city": "Paris", "unit": "celsius"}))
    assert result.isError is False
    assert result.structuredContent == {
        "city": "Paris",
        "temperature": 15.0,
        "unit": "celsius",
        "conditions": "sunny",
    }
    assert json.loads(only_text(result)) == result.structuredContent


def test_plain_values_are_text_without_structured_content():
    result = run(lambda s: s.call_tool("add", {"a": 2, "b": 3.5}))
    assert result.isError is False
    assert only_text(result) == "5.5"
    assert result.structuredContent is None


def test_tool_errors_are_is_error_results():
    result = run(lambda s: s.call_tool("test_error_handling", {}))
    assert result.isError is True
    assert only_text(result) == "This tool intentionally returns an error for testing"


def test_invalid_arguments_are_is_error_results_naming_the_field():
    async def scenario(s):
        return [
            await s.call_tool("add", {"a": "two", "b": 3}),
            await s.call_tool("add", {"a": 1}),
            await s.call_tool("get_weather", {"city": "Rome", "country": "IT"}),
            await s.call_tool("get_weather", {"city": "Rome", "unit": "kelvin"}),
        ]

    wrong_type, missing, unknown, bad_enum = run(scenario)
    for result in (wrong_type, missing, unknown, bad_enum):
        assert result.isError is True
    # Each names the offending argument and says what was expected.
    assert only_text(wrong_type) == 'Invalid arguments: a: invalid type: string "two", expected f64'
    assert only_text(missing) == "Invalid arguments: missing field `b`"
    assert (
        only_text(unknown)
        == "Invalid arguments: unknown field `country`, expected `city` or `unit`"
    )
    assert (
        only_text(bad_enum)
        == "Invalid arguments: unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`"
    )


def test_unknown_tool_is_a_json_rpc_error():
    async def scenario(s):
        with pytest.raises(McpError) as error:
            await s.call_tool("no_such_tool", {})
        # The session keeps working afterwards.
        after = await s.call_tool("test_simple_text", {})
        return error.value.error, after

    error, after = run(scenario)
    assert error.code == -32602
    assert "Unknown tool: no_such_tool" in error.message
    assert after.isError is False


def test_timeouts_are_is_error_results():
    result = run(lambda s: s.call_tool("sleep", {"ms": 5000}))
    assert result.isError is True
    assert "timed out after 1000ms" in only_text(result)


def test_progress_notifications():
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total))

    result = run(lambda s: s.call_tool("test_tool_with_progress", {}, progress_callback=on_progress))
    assert result.isError is False
    assert updates == [(0, 100), (50, 100), (100, 100)]


def test_log_messages():
    messages = []

    async def on_log(params: types.LoggingMessageNotificationParams):
        messages.append((params.level, params.data))

    async def scenario(s):
        await s.set_logging_level("info")
        return await s.call_tool("test_tool_with_logging", {})

    result = run(scenario, logging_callback=on_log)
    assert result.isError is False
    assert messages == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]


def test_log_level_filters_messages():
    messages = []

    async def on_log(params):
        messages.append(params)

    async def scenario(s):
        await s.set_logging_level("error")
        return await s.call_tool("test_tool_with_logging", {})

    result = run(scenario, logging_callback=on_log)
    assert result.isError is False
    assert messages == []


def test_sampling_goes_back_to_the_client():
    async def sample(context, params: types.CreateMessageRequestParams):
        prompt = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo: {prompt}"),
            model="test-model",
            stopReason="endTurn",
        )

    result = run(lambda s: s.call_tool("test_sampling", {"prompt": "hi"}), sampling_callback=sample)
    assert result.isError is False
    assert only_text(result) == "LLM response: echo: hi"


def test_elicitation_goes_back_to_the_client():
    async def elicit(context, params):
        assert params.requestedSchema["required"] == ["username", "email"]
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    result = run(
        lambda s: s.call_tool("test_elicitation", {"message": "who are you?"}),
        elicitation_callback=elicit,
    )
    assert result.isError is False
    assert only_text(result).startswith("User response: action=accept")
    assert "ada@example.com" in only_text(result)


def test_a_tool_asking_with_mcp_peer_ask_sends_requests_on_2025_sessions():
    # The tool that answers an InputRequiredResult round trip on 2026-07-28 (see
    # test_python_client_v2.py) asks this 2025 client by requests, one round after another.
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        answer = {"name": "Ada"} if "name" in params.message else {"color": "blue"}
        return types.ElicitResult(action="accept", content=answer)

    result = run(
        lambda s: s.call_tool("test_input_required_result_multi_round", {}),
        elicitation_callback=elicit,
    )
    assert result.isError is False
    assert only_text(result) == "Ada likes blue"
    assert asked == ["Step 1: What is your name?", "Step 2: What is your favorite color?"]


def test_a_destructive_tool_runs_only_once_the_user_accepts():
    asked = []

    def answering(action):
        async def elicit(context, params):
            asked.append(params.message)
            return types.ElicitResult(action=action)

        return elicit

    delete = lambda s: s.call_tool("delete_note", {"title": "groceries"})
    result = run(delete, elicitation_callback=answering("accept"))
    assert result.isError is False
    assert only_text(result) == "deleted the note `groceries`"
    assert "delete_note" in asked[0] and "groceries" in asked[0]

    result = run(delete, elicitation_callback=answering("decline"))
    assert result.isError is True
    assert "declined" in only_text(result) and "did not run" in only_text(result)

    # No elicitation callback: the client cannot ask its user, so nothing runs.
    result = run(delete)
    assert result.isError is True
    assert "does not support elicitation" in only_text(result)


def test_sampling_without_the_capability_is_an_error():
    # No sampling callback: the client does not declare the capability.
    result = run(lambda s: s.call_tool("test_sampling", {"prompt": "hi"}))
    assert result.isError is True
    assert "does not support sampling" in only_text(result)


def test_resources_templates_and_prompts_of_the_example():
    async def scenario(s):
        return (
            await s.list_resources(),
            await s.list_resource_templates(),
            await s.read_resource("config://app"),
            await s.read_resource("weather://Paris/today"),
            await s.list_prompts(),
            await s.get_prompt("plan_trip", {"city": "Lisbon", "interests": "tiles"}),
            await s.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="weather://{city}/today"),
                {"name": "city", "value": "l"},
            ),
        )

    resources, templates, config, weather, prompts, trip, cities = run(scenario)
    assert "config://app" in [str(r.uri) for r in resources.resources]
    assert "weather://{city}/today" in [t.uriTemplate for t in templates.resourceTemplates]
    [config] = config.contents
    assert config.mimeType == "application/json"
    assert json.loads(config.text) == {"units": "celsius", "forecast_days": 1}
    [weather] = weather.contents
    assert str(weather.uri) == "weather://Paris/today"
    assert json.loads(weather.text)["city"] == "Paris"
    [plan] = [p for p in prompts.prompts if p.name == "plan_trip"]
    assert [(a.name, a.required) for a in plan.arguments] == [("city", True), ("interests", False)]
    embedded, ask = trip.messages
    assert embedded.content.type == "resource"
    assert str(embedded.content.resource.uri) == "weather://Lisbon/today"
    assert ask.content.text.startswith("Plan a day in Lisbon for someone who likes tiles")
    assert cities.completion.values == ["Lisbon", "London"]


def test_unknown_resource_and_missing_prompt_argument_are_errors():
    async def scenario(s):
        errors = []
        for request in (
            lambda: s.read_resource("nothing://here"),
            lambda: s.get_prompt("plan_trip", {}),
        ):
            try:
                await request()
            except McpError as error:
                errors.append(error.error)
        return errors

    not_found, missing = run(scenario)
    assert not_found.code == -32002 and "nothing://here" in not_found.message
    assert missing.code == -32602 and "city" in missing.message
