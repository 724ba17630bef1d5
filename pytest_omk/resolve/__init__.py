"""URL auto-fetching: the URL resolver stage (:mod:`.resolver`), the safe HTTP fetcher, MCP
resolvers and their configuration. Nothing is imported here: the stage loads only when a run has
URLs to resolve."""
