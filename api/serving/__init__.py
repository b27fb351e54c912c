"""Serving: the process that runs the application (`process`), its HTTP protocol (`wire`) and zero-downtime
restarts (`handover`)."""
