"""gabarito.study."""
