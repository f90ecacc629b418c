"""An MCP server we did not write, on the newest line: FastMCP 4 (the standalone
`fastmcp` package), which speaks protocol 2026-07-28. The Rust client tests
(agent-mcp/tests/interop.rs) start it.

    python fastmcp4_server.py --http PORT  # http://127.0.0.1:PORT/mcp
    python fastmcp4_server.py              # stdio
"""

import sys

from fastmcp import Context, FastMCP
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

mcp = FastMCP("fastmcp4-server")


@mcp.tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@mcp.tool
async def confirm(what: str, ctx: Context):
    """Asks the user before doing `what`: on 2026-07-28 a tool asks by returning
    `input_required`, and runs again with the answers and its state."""
    answers = ctx.input_responses
    if not answers:
        form = ElicitRequestFormParams(
            message=f"Really {what}?",
            requested_schema={"type": "object", "properties": {"sure": {"type": "boolean"}}},
        )
        return InputRequiredResult(
            input_requests={"go": ElicitRequest(params=form)}, request_state=what
        )
    answer = answers["go"]
    if not isinstance(answer, dict):
        answer = answer.model_dump()
    if ctx.request_state == what and answer.get("action") == "accept" and (
        answer.get("content") or {}
    ).get("sure"):
        return f"did {what}"
    return f"did not {what} ({answer.get('action')})"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        mcp.run(show_banner=False)
