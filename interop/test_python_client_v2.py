"""The official Python MCP SDK 2.x (protocol 2026-07-28) as the client of our example
server, over stdio and Streamable HTTP: the newest protocol must work as well as the
2025 ones test_python_client.py covers.

Run by scripts/test.sh with .venv-interop-v2's pytest.
"""

import asyncio
import os
import re
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

from harness import example_binary

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("MCP_SERVER_BIN") or example_binary("conformance-server")


@pytest.fixture(params=["stdio", "http"])
def target(request):
    if request.param == "stdio":
        yield StdioServerParameters(command=SERVER, args=[])
        return
    server = subprocess.Popen([SERVER, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        match = re.search(r"listening on (\S+)", line)
        assert match, f"the server did not start: {line!r}"
        yield match.group(1)
    finally:
        server.kill()
        server.wait()


def run(target, scenario):
    async def main():
        async with Client(target) as client:
            return await asyncio.wait_for(scenario(client), timeout=30)

    return asyncio.run(main())


def test_negotiates_the_newest_protocol(target):
    async def scenario(client):
        return client.protocol_version

    assert run(target, scenario) == "2026-07-28"


def test_lists_tools_with_2020_12_schemas(target):
    async def scenario(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(target, scenario)}
    assert "get_weather" in tools and "json_schema_2020_12_tool" in tools
    weather = tools["get_weather"]
    assert weather.input_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert weather.input_schema["required"] == ["city"]
    assert weather.output_schema["type"] == "object"


def test_calls_structured_error_and_unknown(target):
    async def scenario(client):
        weather = await client.call_tool("get_weather", {"city": "Paris"})
        error = await client.call_tool("test_error_handling", {})
        invalid = await client.call_tool("add", {"a": "two", "b": 1})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        return weather, error, invalid, unknown.value

    weather, error, invalid, unknown = run(target, scenario)
    assert weather.is_error is False
    assert weather.structured_content["city"] == "Paris"
    assert error.is_error is True
    assert error.content[0].text == "This tool intentionally returns an error for testing"
    assert invalid.is_error is True
    # It names the offending argument and says what was expected.
    assert [c.text for c in invalid.content] == [
        'Invalid arguments: a: invalid type: string "two", expected f64'
    ]
    # A JSON-RPC invalid-params error naming the tool, not any other failure.
    assert unknown.code == -32602, unknown
    assert "Unknown tool: no_such_tool" in unknown.message, unknown


def test_progress(target):
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total))

    async def scenario(client):
        return await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)

    result = run(target, scenario)
    assert result.is_error is False
    assert updates == [(0, 100), (50, 100), (100, 100)]


def run_answering(target, scenario, answer):
    """Runs `scenario` with a client whose user answers every elicitation with `answer`
    (an action and content); returns the scenario's result and the messages shown."""
    shown = []

    async def on_elicit(context, params):
        shown.append(params.message)
        return types.ElicitResult(action=answer[0], content=answer[1])

    async def main():
        async with Client(target, elicitation_callback=on_elicit) as client:
            assert client.protocol_version == "2026-07-28"
            return await asyncio.wait_for(scenario(client), timeout=30)

    return asyncio.run(main()), shown


def test_approves_a_destructive_tool(target):
    # delete_note is destructive: the server asks the user first. On 2026-07-28 the
    # question comes back as an InputRequiredResult, and the SDK retries with the answer.
    async def scenario(client):
        return await client.call_tool("delete_note", {"title": "groceries"})

    result, shown = run_answering(target, scenario, ("accept", {}))
    assert result.is_error is False, result
    assert result.content[0].text == "deleted the note `groceries`"
    assert len(shown) == 1 and "Allow the tool `delete_note` to run?" in shown[0], shown

    declined, _ = run_answering(target, scenario, ("decline", None))
    assert declined.is_error is True
    assert "declined to let `delete_note` run" in declined.content[0].text


def test_answers_an_elicitation(target):
    async def scenario(client):
        return await client.call_tool("test_input_required_result_elicitation", {})

    result, shown = run_answering(target, scenario, ("accept", {"name": "Ada"}))
    assert result.is_error is False, result
    assert result.content[0].text == "Hello, Ada!"
    assert shown == ["What is your name?"]


def test_reads_resources_and_gets_prompts(target):
    async def scenario(client):
        resources = (await client.list_resources()).resources
        weather = await client.read_resource("weather://Berlin/today")
        prompt = await client.get_prompt("plan_trip", {"city": "Paris"})
        try:
            await client.read_resource("nothing://here")
        except MCPError as error:
            missing = error
        return resources, weather, prompt, missing

    resources, weather, prompt, missing = run(target, scenario)
    assert "config://app" in [str(r.uri) for r in resources]
    [contents] = weather.contents
    assert '"city":"Berlin"' in contents.text
    assert prompt.messages[1].content.text.startswith("Plan a day in Paris")
    # SEP-2164: not found is -32602 from 2026-07-28.
    assert missing.error.code == -32602 and "nothing://here" in missing.error.message
