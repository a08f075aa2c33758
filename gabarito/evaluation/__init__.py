"""gabarito.evaluation."""
