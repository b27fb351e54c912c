"""What every edge shares: error codes and errors, URLs, settings, the request context, byte caches and
content codings. Imports only the registry."""
