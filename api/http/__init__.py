"""The HTTP edges: GraphQL over HTTP, permalinks, operations, publishing; the one way errors are answered."""
