"""How a GraphQL document is executed: limits, the cost model, the document cache and the compiled executor."""
