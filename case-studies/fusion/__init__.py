"""The fusion study: Fusion inside ArcadeDB and beyond RRF: identity, fusion functions, round trips."""
