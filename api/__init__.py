"""The edges: GraphQL schema, ASGI app, CLI."""
