"""An MCP server we did not write: built with the official Python SDK's FastMCP, served
over stdio or Streamable HTTP. The Rust client tests (agent-mcp/tests/) start it.

    python fastmcp_server.py            # stdio
    python fastmcp_server.py --http PORT  # http://127.0.0.1:PORT/mcp
"""

import sys

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

mcp = FastMCP("python-fastmcp-server", log_level="WARNING")


@mcp.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@mcp.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


class Weather(BaseModel):
    city: str
    temperature: float
    conditions: str


@mcp.tool()
def weather(city: str) -> Weather:
    """Structured weather for a city."""
    return Weather(city=city, temperature=21.5, conditions="clear")


@mcp.tool()
def fail(reason: str = "boom") -> str:
    """Always raises."""
    raise ValueError(reason)


@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
    return f"counted to {n}"


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Starts serving `divide` in place of `greet`, and tells the client."""
    mcp.add_tool(divide)
    mcp.remove_tool("greet")
    await ctx.session.send_tool_list_changed()
    return "divide added, greet removed"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        mcp.settings.host = "127.0.0.1"
        mcp.settings.port = int(sys.argv[2])
        mcp.run(transport="streamable-http")
    else:
        mcp.run()
