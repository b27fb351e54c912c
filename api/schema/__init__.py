"""The GraphQL schema (`root`: the query root and the executable schema) and its types (`types`)."""
