"""gabarito.publish."""
