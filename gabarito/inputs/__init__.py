"""gabarito.inputs."""
