"""The application layer (see registry.install_defaults)."""
