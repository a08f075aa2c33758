"""gabarito.measure."""
