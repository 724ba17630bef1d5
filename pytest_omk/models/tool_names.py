"""Tool names: the canonical, source-neutral spelling that traces, mocks and assertions share.

Agent runtimes name the same tool differently (``bash``, ``shell``, ``exec_command``; MCP tools as
``mcp__<server>__<tool>``). The format's owner normalizes every name before a trace is recorded,
so ``tools_called: ["Bash"]`` means the same thing whatever runtime produced the trace. This
module restates that table (omk-semantics §6.2):

- built-in aliases, looked up lower-cased: ``bash, shell, exec_command, command_execution`` →
  ``Bash``; ``read, file_read`` → ``Read``; ``grep`` → ``Grep``; ``edit, apply_patch,
  file_change`` → ``Edit``; ``write, file_write`` → ``Write``; ``view_image, viewimage`` →
  ``ViewImage``; ``write_stdin, writestdin`` → ``WriteStdin``; ``web_search, websearch`` →
  ``WebSearch``;
- ``mcp__<ns…>__<tool>`` (at least three ``__``-separated parts) → ``<ns parts joined by '.'>.<tool>``,
  a leading ``codex_apps`` namespace part dropped;
- any other name unchanged (case kept).
"""

from __future__ import annotations

from types import MappingProxyType

BUILTIN_ALIASES = MappingProxyType(
    {
        "bash": "Bash",
        "shell": "Bash",
        "exec_command": "Bash",
        "command_execution": "Bash",
        "read": "Read",
        "file_read": "Read",
        "grep": "Grep",
        "edit": "Edit",
        "apply_patch": "Edit",
        "file_change": "Edit",
        "write": "Write",
        "file_write": "Write",
        "view_image": "ViewImage",
        "viewimage": "ViewImage",
        "write_stdin": "WriteStdin",
        "writestdin": "WriteStdin",
        "web_search": "WebSearch",
        "websearch": "WebSearch",
    }
)

MCP_PREFIX = "mcp__"
_TRANSPORT_NAMESPACE = "codex_apps"


def mcp_tool_name(server: str, tool: str) -> str:
    """The name an MCP tool is offered under: ``mcp__<server>__<tool>``."""
    return f"{MCP_PREFIX}{server}__{tool}"


def canonical_tool_name(name: str) -> str:
    """The source-neutral name of ``name`` (see the module docstring)."""
    stripped = name.strip() or name
    parts = [p for p in stripped.split("__") if p]
    if stripped.startswith(MCP_PREFIX) and len(parts) >= 3:
        namespace = parts[1:-1]
        if namespace[0] == _TRANSPORT_NAMESPACE and len(namespace) > 1:
            # A transport layer, not the provider: the next component names the real server.
            namespace = namespace[1:]
        return ".".join([*namespace, parts[-1]])
    return BUILTIN_ALIASES.get(stripped.lower(), stripped)


def same_tool(declared: str, runtime: str) -> bool:
    """Whether a name written in a sample (a mock's ``tool``, an ``allowedTools`` entry) means
    the tool the model called: the same literal name, or the same canonical name."""
    return declared == runtime or canonical_tool_name(declared) == canonical_tool_name(runtime)
