"""The query service (`queries`) and the server's state (`server`): snapshots of the registry, following main,
and the documents the edges answer from them."""
