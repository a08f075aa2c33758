"""Search engines measured by gabarito: an in-memory reference and ArcadeDB over HTTP."""
