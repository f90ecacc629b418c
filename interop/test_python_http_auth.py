"""The official Python MCP SDK's Streamable HTTP client with a bearer token, against
examples/mcp-server.rs started with `--auth-token`: it lists and calls the tools, and
`whoami` names the token's holder. Without the token, or with another one, the server
answers 401 and no session starts.

Run by scripts/test.sh with .venv-interop's pytest.
"""

import asyncio
import re
import subprocess
import urllib.error
import urllib.request

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from harness import example_binary

SERVER = example_binary("mcp-server")
TOKEN = "interop-s3cret"


@pytest.fixture(scope="module")
def url():
    server = subprocess.Popen(
        [SERVER, "--http", "127.0.0.1:0", "--auth-token", TOKEN],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        match = re.search(r"listening on (\S+)", line)
        assert match, f"the server did not start: {line!r}"
        yield match.group(1)
    finally:
        server.kill()
        server.wait()


def run(url, token, scenario):
    async def main():
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await asyncio.wait_for(scenario(session), timeout=30)

    return asyncio.run(main())


def test_an_authenticated_client_lists_and_calls_tools(url):
    async def scenario(session):
        tools = await session.list_tools()
        added = await session.call_tool("add", {"a": 2, "b": 3.5})
        me = await session.call_tool("whoami", {})
        return tools, added, me

    tools, added, me = run(url, TOKEN, scenario)
    assert {"get_weather", "add", "delete_note", "sleep", "whoami"} == {t.name for t in tools.tools}
    assert not added.isError and added.content[0].text == "5.5"
    assert me.content[0].text == "token-holder"


def initialize(url, headers):
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
    )
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}])
def test_without_the_token_the_server_answers_401(url, headers):
    status, answer = initialize(url, headers)
    assert status == 401
    assert answer["www-authenticate"].startswith('Bearer resource_metadata="http://')
    assert "mcp-session-id" not in {name.lower() for name in answer}


def leaves(error):
    """The exceptions inside `error`, through any (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


def test_the_sdk_client_with_a_wrong_token_gets_401_and_the_server_goes_on(url):
    # The SDK raises the HTTP error from its transport's task group.
    with pytest.raises((BaseExceptionGroup, httpx.HTTPStatusError)) as raised:
        run(url, "wrong", lambda session: session.list_tools())
    errors = list(leaves(raised.value))
    # Only the 401: not a refused connection, a timeout or a crashed server.
    assert [type(error) for error in errors] == [httpx.HTTPStatusError], repr(raised.value)
    response = errors[0].response
    assert response.status_code == 401
    assert response.request.headers["authorization"] == "Bearer wrong"
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer resource_metadata="http://'), challenge
    assert 'error="invalid_token", error_description="unknown token"' in challenge, challenge
    assert "mcp-session-id" not in {name.lower() for name in response.headers}

    # The server is still up and answers the right token.
    async def whoami(session):
        return await session.call_tool("whoami", {})

    me = run(url, TOKEN, whoami)
    assert not me.isError and me.content[0].text == "token-holder"
